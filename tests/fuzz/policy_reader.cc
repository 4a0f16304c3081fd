// Fuzz target: the landlockconfig policy reader (policy).
//
// The input is one policy file, or several separated by lines "%%" (a
// directory of them, composed as landlockconfig composes them); each is
// JSON when its first non-blank byte is '{', else TOML.
//
// Properties: the reader never crashes, hangs or throws; a message has a
// location; a policy it accepts, printed as landlockconfig JSON and as
// TOML (`policy print --json|--toml`), reads back to the same rules.

#include <string>
#include <string_view>
#include <vector>

#include "src/input/doc.h"
#include "src/policy/config.h"
#include "src/policy/policy.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace pathwarden;
using fuzz_target::FuzzFail;

constexpr size_t kMaxFiles = 8;
// The round trip prints and reads back every rule twice: for the largest
// policies the reader accepts (a 244-byte file of variables expands to
// 65,536 paths, the bound) that took over 25 s under ASan on a loaded
// machine (libFuzzer's timeout) where `policy check` takes 0.3 s. Such
// policies are read and printed, and read back only up to this many
// rules; the bound itself has its own tests (policy_test.cc).
constexpr size_t kMaxRoundTripRules = 4096;

bool LooksJson(std::string_view part) {
  const size_t i = part.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && part[i] == '{';
}

void ReadsBack(const policy::Policy& p) {
  if (p.paths.size() + p.ports.size() > kMaxRoundTripRules) {
    (void)policy::ToJson(p);
    return;
  }
  for (bool json : {true, false}) {
    const std::string text = json ? policy::ToJson(p) : policy::ToToml(p);
    auto back = policy::ParsePolicy(text, json ? "back.json" : "back.toml", json, "/cwd");
    if (!back.has_value())
      FuzzFail("the printed policy does not read back: " + back.error() + "\n" + text);
    if (!policy::SameRules(p, *back)) FuzzFail("the printed policy reads back otherwise:\n" + text);
  }
  (void)policy::ToText(p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz_target::Text(data, size);
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t at = text.find("\n%%\n", start);
    if (at == std::string_view::npos || parts.size() + 1 == kMaxFiles) {
      parts.push_back(text.substr(start));
      break;
    }
    parts.push_back(text.substr(start, at + 1 - start));
    start = at + 4;
  }
  if (parts.size() == 1) {
    const bool json = LooksJson(parts[0]);
    const std::string name = json ? "in.json" : "in.toml";
    auto p = policy::ParsePolicy(parts[0], name, json, "/cwd");
    if (!p.has_value()) {
      if (!p.error().starts_with(name + ":")) FuzzFail("message without location: " + p.error());
      return 0;
    }
    ReadsBack(*p);
    return 0;
  }
  // A directory: the files composed in name order (policy.cc LoadPolicy()).
  std::optional<policy::internal::Config> all;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool json = LooksJson(parts[i]);
    const std::string name = "d/" + std::to_string(i) + (json ? ".json" : ".toml");
    auto doc = json ? input::ParseJsonDoc(parts[i], name) : input::ParseTomlDoc(parts[i], name);
    if (!doc.has_value()) return 0;
    auto c = policy::internal::ParseConfig(*doc, name, json);
    if (!c.has_value()) return 0;
    if (!all) all = std::move(*c);
    else policy::internal::Compose(*all, *c);
  }
  auto p = policy::internal::Resolve(*all, "/cwd");
  if (p.has_value()) ReadsBack(*p);
  return 0;
}
