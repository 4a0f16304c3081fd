// The Model's insides, for the library's own adapters (the scenario
// runner, benchmarks, tests) that need the engine's research switches and
// self-checks. Not a public header.

#ifndef PATHWARDEN_SRC_API_MODEL_IMPL_H_
#define PATHWARDEN_SRC_API_MODEL_IMPL_H_

#include "pathwarden/model.h"
#include "src/base/engine_options.h"
#include "src/engine/engine.h"

namespace pathwarden {

struct Model::Impl {
  explicit Impl(const EngineOptions& options) : engine(options) {}
  Engine engine;
};

// NewModel()
//
// A model whose engine runs with `options` (the variants the tests and
// benchmarks compare).
Model NewModel(const EngineOptions& options, int abi = landlock::kAbiLatest);

// EngineOf()
//
// The engine behind a model.
inline Engine& EngineOf(Model& m) { return m.impl().engine; }
inline const Engine& EngineOf(const Model& m) { return m.impl().engine; }

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_API_MODEL_IMPL_H_
