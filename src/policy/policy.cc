// LoadPolicy(): a landlockconfig file, or a directory composed of them
// (landlockconfig:src/config.rs Config::parse_directory, compose()).

#include "src/policy/policy.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "src/input/doc.h"
#include "src/policy/config.h"

namespace pathwarden::policy {
namespace {

Result<internal::Config, std::string> ParseOne(std::string_view text, const std::string& name,
                                               bool json) {
  auto doc = json ? input::ParseJsonDoc(text, name) : input::ParseTomlDoc(text, name);
  if (!doc) return Unexpected(doc.error());
  return internal::ParseConfig(*doc, name, json);
}

Result<internal::Config, std::string> LoadOne(const std::string& path) {
  auto text = input::ReadFile(path);
  if (!text) return Unexpected(text.error());
  return ParseOne(*text, path, input::IsJsonName(path));
}

bool IsPolicyName(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;  // hidden
  return name.ends_with(".json") || name.ends_with(".toml");
}

}  // namespace

Result<Policy, std::string> ParsePolicy(std::string_view text, const std::string& name, bool json,
                                        const std::string& cwd) {
  auto c = ParseOne(text, name, json);
  if (!c) return Unexpected(c.error());
  auto p = internal::Resolve(*c, cwd);
  if (p) p->source = name;
  return p;
}

Result<Policy, std::string> LoadPolicy(const std::string& file_or_dir, const std::string& cwd) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(file_or_dir, ec)) {
    if (!file_or_dir.ends_with(".json") && !file_or_dir.ends_with(".toml"))
      return Unexpected(fmt::format("{}: a policy file is named *.json or *.toml", file_or_dir));
    auto c = LoadOne(file_or_dir);
    if (!c) return Unexpected(c.error());
    auto p = internal::Resolve(*c, cwd);
    if (p) p->source = file_or_dir;
    return p;
  }
  // A directory: its regular, non-hidden *.json and *.toml files (not
  // its subdirectories), in name order (composition is commutative; the
  // order only orders origins and messages).
  std::vector<std::string> files;
  for (fs::directory_iterator it(file_or_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code ec2;
    if (IsPolicyName(name) && it->is_regular_file(ec2)) files.push_back(it->path().string());
  }
  if (ec) return Unexpected(fmt::format("{}: cannot read: {}", file_or_dir, ec.message()));
  std::sort(files.begin(), files.end());
  if (files.empty())
    return Unexpected(fmt::format("{}: no configuration file found (*.json, *.toml)", file_or_dir));
  std::optional<internal::Config> all;
  std::string errors;
  for (const std::string& f : files) {
    auto c = LoadOne(f);
    if (!c) {
      errors += (errors.empty() ? "" : "\n") + c.error();
      continue;
    }
    if (!all) all = std::move(*c);
    else internal::Compose(*all, *c);
  }
  if (!errors.empty()) return Unexpected(errors);
  auto p = internal::Resolve(*all, cwd);
  if (p) p->source = file_or_dir;
  return p;
}

bool SameRules(const Policy& a, const Policy& b) {
  if (a.abi != b.abi || a.handled_fs != b.handled_fs || a.handled_net != b.handled_net ||
      a.scoped != b.scoped || a.paths.size() != b.paths.size() || a.ports.size() != b.ports.size())
    return false;
  for (size_t i = 0; i < a.paths.size(); ++i)
    if (a.paths[i].path != b.paths[i].path || a.paths[i].access != b.paths[i].access) return false;
  for (size_t i = 0; i < a.ports.size(); ++i)
    if (a.ports[i].port != b.ports[i].port || a.ports[i].access != b.ports[i].access) return false;
  return true;
}

}  // namespace pathwarden::policy
