// TOML (toml++) and JSON (nlohmann-json) into the neutral Doc tree, keeping
// source positions (TOML) or key paths (JSON) for messages.

#include "src/scenario/doc.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace pathwarden::scenario_internal {
namespace {

SourceLoc LocOf(const toml::source_region& r) {
  return SourceLoc{static_cast<int>(r.begin.line),
                   static_cast<int>(r.begin.column), ""};
}

Doc FromToml(const toml::node& n) {
  Doc d;
  d.loc = LocOf(n.source());
  switch (n.type()) {
    case toml::node_type::boolean:
      d.kind = Doc::Kind::kBool;
      d.b = n.as_boolean()->get();
      break;
    case toml::node_type::integer:
      d.kind = Doc::Kind::kInt;
      d.i = n.as_integer()->get();
      break;
    case toml::node_type::floating_point:
      d.kind = Doc::Kind::kFloat;
      d.f = n.as_floating_point()->get();
      break;
    case toml::node_type::string:
      d.kind = Doc::Kind::kString;
      d.s = n.as_string()->get();
      break;
    case toml::node_type::array:
      d.kind = Doc::Kind::kArray;
      for (const toml::node& item : *n.as_array())
        d.items.push_back(FromToml(item));
      break;
    case toml::node_type::table:
      d.kind = Doc::Kind::kTable;
      for (const auto& [k, v] : *n.as_table()) {
        d.fields.push_back({std::string(k.str()), FromToml(v)});
        d.key_locs.push_back(LocOf(k.source()));
      }
      break;
    default:
      d.kind = Doc::Kind::kOther;
      break;
  }
  return d;
}

Doc FromJson(const nlohmann::json& j, const std::string& path) {
  Doc d;
  d.json = true;
  d.loc.key_path = path.empty() ? "/" : path;
  switch (j.type()) {
    case nlohmann::json::value_t::boolean:
      d.kind = Doc::Kind::kBool;
      d.b = j.get<bool>();
      break;
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      d.kind = Doc::Kind::kInt;
      d.i = j.get<int64_t>();
      break;
    case nlohmann::json::value_t::number_float:
      d.kind = Doc::Kind::kFloat;
      d.f = j.get<double>();
      break;
    case nlohmann::json::value_t::string:
      d.kind = Doc::Kind::kString;
      d.s = j.get<std::string>();
      break;
    case nlohmann::json::value_t::array: {
      d.kind = Doc::Kind::kArray;
      size_t idx = 0;
      for (const auto& item : j)
        d.items.push_back(FromJson(item, fmt::format("{}/{}", path, idx++)));
      break;
    }
    case nlohmann::json::value_t::object:
      d.kind = Doc::Kind::kTable;
      for (const auto& [k, v] : j.items()) {
        std::string sub = fmt::format("{}/{}", path, k);
        d.fields.push_back({k, FromJson(v, sub)});
        d.key_locs.push_back(SourceLoc{0, 0, sub});
      }
      break;
    default:
      d.kind = Doc::Kind::kOther;
      break;
  }
  return d;
}

}  // namespace

std::string_view Doc::KindName() const {
  switch (kind) {
    case Kind::kBool: return "a boolean";
    case Kind::kInt: return "an integer";
    case Kind::kFloat: return "a float";
    case Kind::kString: return "a string";
    case Kind::kArray: return "an array";
    case Kind::kTable: return "a table";
    case Kind::kOther: break;
  }
  return "a value of another type";
}

Result<Doc, std::string> ParseTomlDoc(std::string_view text,
                                            const std::string& name) {
#if TOML_EXCEPTIONS
  try {
    toml::table t = toml::parse(text, name);
    return FromToml(t);
  } catch (const toml::parse_error& e) {
    return Unexpected(fmt::format("{}:{}:{}: {}", name,
                                       e.source().begin.line,
                                       e.source().begin.column,
                                       e.description()));
  }
#else
  toml::parse_result r = toml::parse(text, name);
  if (!r) {
    const toml::parse_error& e = r.error();
    return Unexpected(fmt::format("{}:{}:{}: {}", name,
                                       e.source().begin.line,
                                       e.source().begin.column,
                                       e.description()));
  }
  return FromToml(r.table());
#endif
}

Result<Doc, std::string> ParseJsonDoc(std::string_view text,
                                            const std::string& name) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    return FromJson(j, "");
  } catch (const nlohmann::json::parse_error& e) {
    return Unexpected(fmt::format("{}: byte {}: {}", name, e.byte,
                                       e.what()));
  }
}

}  // namespace pathwarden::scenario_internal
