// The engine as an executor of scenario files.

#ifndef PATHWARDEN_SRC_ENGINE_RUN_H_
#define PATHWARDEN_SRC_ENGINE_RUN_H_

#include <string>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"
#include "src/base/engine_options.h"

namespace pathwarden {

// EngineBuildError()
//
// Builds the scenario's world in the engine without running any step;
// the "file:line:col: message" of what the file gets wrong, or "".
std::string EngineBuildError(const Scenario& s);

// RunInEngine()
//
// Builds the scenario's world in the engine and runs every step.
RunResult RunInEngine(const Scenario& s, const EngineOptions& options,
                      EngineStats* stats = nullptr);

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_ENGINE_RUN_H_
