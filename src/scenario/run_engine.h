// The engine as an executor of scenario files: the scenario adapter onto
// the library (pathwarden/model.h).

#ifndef PATHWARDEN_SRC_SCENARIO_RUN_ENGINE_H_
#define PATHWARDEN_SRC_SCENARIO_RUN_ENGINE_H_

#include <map>
#include <string>
#include <vector>

#include "pathwarden/executor.h"
#include "pathwarden/model.h"
#include "pathwarden/scenario.h"
#include "src/base/engine_options.h"

namespace pathwarden {

class Engine;

// ScenarioModel
//
// A scenario's world as a Model: the tree, the processes and their
// starting layers built through the builder, and each step turned into a
// typed request by names (processes, fds) that the scenario gives.
class ScenarioModel {
 public:
  explicit ScenarioModel(const EngineOptions& options);

  // Build()
  //
  // Creates the scenario's tree, mounts and processes. The error is
  // "file:line:col: message".
  Result<void, std::string> Build(const Scenario& s);

  // Request()
  //
  // The typed request of a step, with its fd names resolved for the
  // acting process (an fd name never opened is a number no fd has).
  pathwarden::Request RequestOf(const StepSpec& st);
  // ProcessOf()
  //
  // The process a step acts as (invalid for an unknown name).
  Process ProcessOf(std::string_view name) const;

  // Step(), Evaluate()
  //
  // Runs one step as its process (the world's single writer; the fd
  // names follow what the step did), or answers it changing nothing.
  Decision Step(const StepSpec& st, Model::Detail detail = Model::Detail::kReason);
  Decision Evaluate(const StepSpec& st, Model::Detail detail = Model::Detail::kReason);

  Model& model() { return model_; }
  Engine& engine();

 private:
  // Per process: what its fd names are bound to.
  struct FdNames {
    std::map<std::string, int, std::less<>> bound;
  };
  Fd FdOf(Process p, std::string_view name);
  void Bind(Process p, const std::string& name, int fd);
  void Unbind(Process p, const std::string& name);
  Result<void, std::string> BuildNode(const Scenario& s, const NodeSpec& n);
  Result<void, std::string> StartProcess(const Scenario& s, const ProcessSpec& ps);

  Model model_;
  std::map<std::string, Process, std::less<>> processes_;
  std::vector<FdNames> fd_names_;  // by process index
  // Names never opened get numbers from here up: no fd table reaches them.
  static constexpr int kUnboundFd = 1 << 30;
  int next_unbound_ = kUnboundFd;
};

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

#endif  // PATHWARDEN_SRC_SCENARIO_RUN_ENGINE_H_
