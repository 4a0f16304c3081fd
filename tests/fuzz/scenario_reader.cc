// Fuzz target: the scenario reader, TOML (scenario_toml) or JSON
// (scenario_json, built with -DPW_FUZZ_JSON=1).
//
// Properties: the reader never crashes, hangs or throws, whatever the
// bytes; a message is "name:line:col: ..." (TOML) or "name: /key/path:
// ..." / "name:line:col: ..." (JSON); a scenario it accepts is written by
// ScenarioToToml() as a file that reads back to the same scenario.

#include <string>

#include "pathwarden/scenario.h"
#include "src/fuzz/scenario_equal.h"
#include "tests/fuzz/fuzz_target.h"

#ifndef PW_FUZZ_JSON
#define PW_FUZZ_JSON 0
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pathwarden;
  using fuzz_target::FuzzFail;
  constexpr bool kJson = PW_FUZZ_JSON != 0;
  const std::string name = kJson ? "in.json" : "in.toml";
  auto s = ParseScenario(fuzz_target::Text(data, size), name, kJson);
  if (!s.has_value()) {
    if (!s.error().starts_with(name + ":")) FuzzFail("message without location: " + s.error());
    return 0;
  }
  const std::string toml = ScenarioToToml(*s);
  auto back = ParseScenario(toml, "back.toml", false);
  if (!back.has_value())
    FuzzFail("ScenarioToToml() wrote what the reader refuses: " + back.error() + "\n" + toml);
  if (std::string d = fuzz::FirstDifference(*s, *back); !d.empty())
    FuzzFail("ScenarioToToml() read back differs: " + d + "\n" + toml);
  return 0;
}
