// The Model's insides, for the library's own adapters (the scenario
// runner, benchmarks, tests) that need the engine's research switches and
// self-checks. Not a public header.

#ifndef PATHWARDEN_SRC_API_MODEL_IMPL_H_
#define PATHWARDEN_SRC_API_MODEL_IMPL_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pathwarden/model.h"
#include "src/base/engine_options.h"
#include "src/engine/engine.h"
#include "src/vfs/host.h"

namespace pathwarden {

// HeldFiles
//
// Descriptors held open for the model's life (the protected_* sysctl
// files a kRevalidate model reads before each request: one pread() each).
struct HeldFiles {
  std::vector<int> fds;
  HeldFiles() = default;
  HeldFiles(const HeldFiles&) = delete;
  HeldFiles& operator=(const HeldFiles&) = delete;
  ~HeldFiles();
};

struct Model::Impl {
  explicit Impl(const EngineOptions& options) : engine(options) {}
  // Declared before the engine, so that it outlives the world it fills.
  std::unique_ptr<vfs::HostBackend> host;
  HostOptions host_options;
  // What Evaluate() and Apply() test before anything else (one load, as
  // when there is neither): a host model with kRevalidate (kRevalidates),
  // a model whose evaluations use the prefix memo (kPrefixMemo), a model
  // with a process in a user namespace other than the initial one
  // (kUserNs: its evaluations are checked with and without capabilities),
  // a host model where a security module it does not model could refuse
  // (kLsm: an allowed answer is unknown, naming the module), a host model
  // with FUSE mounts (kFuse: an allowed answer whose checks met a FUSE
  // inode is unknown, the server answering last).
  static constexpr uint8_t kRevalidates = 1;
  static constexpr uint8_t kPrefixMemo = 2;
  static constexpr uint8_t kUserNs = 4;
  static constexpr uint8_t kLsm = 8;
  static constexpr uint8_t kFuse = 16;
  uint8_t special = 0;
  // A host model read from inside a user namespace other than the
  // initial one: every process of it lives there at least (SetCred()
  // gives one of the initial namespace this one).
  std::shared_ptr<const UserNamespace> reader_userns;
  HeldFiles sysctl_files;
  // HostOptions::lsm's reading (null when not read), and the readings
  // for other processes' labels (Model::ReadSecurityModulesOf(), by task
  // index; a fork takes its forebear's).
  std::shared_ptr<const SecurityModules> lsms;
  std::unordered_map<int, std::shared_ptr<const SecurityModules>> process_lsms;
  Engine engine;
};

// NewModel()
//
// A model whose engine runs with `options` (the variants the tests and
// benchmarks compare).
Model NewModel(const EngineOptions& options, int abi = landlock::kAbiLatest);

// RefreshSysctls()
//
// The host's protected_* sysctls read again into the model; whether they
// changed.
Result<bool, std::string> RefreshSysctls(Model::Impl& impl);

// RevalidatePaths()
//
// Model::Revalidate() of each of `paths` as task `task` resolves them
// from `dirfd` (a host model's kRevalidate, before each request), and
// with `sysctls` the sysctls too (Apply(); Evaluate() reads them only
// once a check they decide was reached: walk::tls_sysctl_decided).
Result<int, std::string> RevalidatePaths(Model::Impl& impl, int task, Fd dirfd, bool sysctls,
                                         std::initializer_list<std::string_view> paths);

// SetPrefixMemo()
//
// Whether the model's evaluations resume their walks from the thread's
// prefix memo (Engine::EvaluateWithPrefixMemo()): for a caller that asks
// many queries (a query::Session, a C API session); the answers are the
// same. A model made with EngineOptions::prefix_memo starts with it on.
void SetPrefixMemo(Model& m, bool on);

// EngineOf()
//
// The engine behind a model.
inline Engine& EngineOf(Model& m) { return m.impl().engine; }
inline const Engine& EngineOf(const Model& m) { return m.impl().engine; }

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_API_MODEL_IMPL_H_
