// The engine: a world, the processes acting on it, their open files, and
// the dispatch of one operation to its system call's check order.

#ifndef PATHWARDEN_SRC_ENGINE_ENGINE_H_
#define PATHWARDEN_SRC_ENGINE_ENGINE_H_

#include <array>
#include "pathwarden/result.h"
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "pathwarden/cred.h"
#include "pathwarden/executor.h"
#include "pathwarden/landlock.h"
#include "pathwarden/scenario.h"
#include "src/engine/explain.h"
#include "src/vfs/world.h"
#include "src/walk/namei.h"

namespace pathwarden {

namespace landlock {
class Domain;
class Landlock;
}  // namespace landlock

// File modes of an open file (FMODE_*).
inline constexpr uint32_t kFmodeRead = 0x1;
inline constexpr uint32_t kFmodeWrite = 0x2;
inline constexpr uint32_t kFmodeExec = 0x20;
inline constexpr uint32_t kFmodePath = 0x4000;

// OpenFile
//
// An open file description (struct file). Shared by every fd naming it,
// in any process (send_fd passes the same description).
struct OpenFile {
  vfs::PathPos path;
  vfs::InodeId inode = vfs::kNone;
  uint32_t f_mode = 0;
  uint32_t f_flags = 0;
  // Landlock rights frozen at open time (all when no domain applied).
  landlock::AccessMask ll_allowed = landlock::kFsAll;
  // For each optional right (truncate, ioctl_dev), the youngest denying
  // layer + 1 (0: none), for explanations.
  uint8_t ll_deny_truncate = 0;
  uint8_t ll_deny_ioctl = 0;
  int opener = 0;           // process index
  uint64_t cred_epoch = 0;  // the opener's credentials generation
};

struct Process {
  std::string name;
  int index = 0;
  int parent = -1;
  Cred cred;
  vfs::PathPos cwd;
  vfs::PathPos root;
  std::shared_ptr<const landlock::Domain> domain;
  // The domain of the abstract UNIX socket every process listens on,
  // created after its starting layers.
  std::shared_ptr<const landlock::Domain> listen_domain;
  std::map<std::string, std::shared_ptr<OpenFile>, std::less<>> fds;
  // Bumped whenever the process commits new credentials (each Landlock
  // layer), so "the same cred object" can be compared as Linux does.
  uint64_t cred_epoch = 0;
};

class Engine;

// Render()
//
// The text of a reason: a string as it is, a callable's result.
template <typename Text>
std::string Render(Text&& text) {
  if constexpr (std::is_invocable_v<Text>) {
    return std::forward<Text>(text)();
  } else {
    return std::string(std::forward<Text>(text));
  }
}

// OpCtx
//
// What one operation needs: the engine, the acting process, the request,
// where to explain, and whether to change the world (a dry run does not).
struct OpCtx {
  Engine& e;
  vfs::World& w;
  Process& p;
  const StepSpec& st;
  Explainer* ex;
  walk::WalkEnv env;
  bool apply = true;
  // The credentials checks use: the process's, or an override (access()
  // checks as the real ids).
  const Cred* cred_override = nullptr;

  const Cred& cred() const { return cred_override ? *cred_override : p.cred; }

  // Fail(), Ok()
  //
  // Records the reason of a decision when someone listens. `text` is a
  // string literal or a callable returning the sentence, so that the
  // sentence (paths, modes, formatting) costs nothing when no one does.
  template <typename Text>
  void Fail(Stage s, Text&& text) const {
    if (ex) ex->Fail(s, Render(std::forward<Text>(text)));
  }
  template <typename Text>
  void Ok(Stage s, Text&& text) const {
    if (ex) ex->Ok(s, Render(std::forward<Text>(text)));
  }
  bool explain() const { return ex != nullptr; }
  std::string PathOf(vfs::PathPos pos) const { return w.PathOf(pos, p.root); }

  // StartFor()
  //
  // Where `name` begins: the process's cwd, or the step's dirfd.
  walk::Start StartFor(std::string_view name) const {
    // Inline, so the common answer is built in the caller, whole.
    if (st.dirfd.empty() || (!name.empty() && name[0] == '/')) return walk::Start{};
    return StartForDirfd();
  }
  walk::Start StartForDirfd() const;

  // Fd()
  //
  // The open file a step names, or nullptr.
  OpenFile* Fd(std::string_view name) const;
};

class Engine {
 public:
  explicit Engine(const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Build()
  //
  // Creates the scenario's tree, mounts and processes. The error is
  // "file:line:col: message".
  Result<void, std::string> Build(const Scenario& s);

  // Step()
  //
  // Runs one operation as its process; returns 0 or the errno. The world's
  // single writer.
  int Step(const StepSpec& st, Explainer* ex);

  // Evaluate()
  //
  // What `st` would give, changing nothing: safe from any number of
  // threads while one thread runs Step() (on other processes' state: a
  // process's own cwd, root, fds and domain must not change meanwhile).
  // Retries an evaluation that raced a write, so the answer never mixes
  // two states.
  int Evaluate(const StepSpec& st, Explainer* ex, EngineStats* stats = nullptr) const;

  // Snapshot()
  //
  // The final tree as the root process sees it.
  std::vector<TreeEntry> Snapshot() const;

  vfs::World& world() { return world_; }
  const EngineOptions& options() const { return options_; }
  // For benchmarks that compare variants on one world; not while other
  // threads evaluate.
  EngineOptions& mutable_options() { return options_; }
  EngineStats& stats() { return stats_; }
  const Sysctls& sysctl() const { return sysctl_; }
  int abi() const { return abi_; }
  landlock::Landlock& landlock() { return *landlock_; }

  Process& process(int i) { return *procs_[i]; }
  int process_count() const { return static_cast<int>(procs_.size()); }
  int FindProcess(std::string_view name) const;

  // WalkEnvFor()
  //
  // How `p` walks (its credentials, root and cwd).
  walk::WalkEnv WalkEnvFor(const Process& p, Explainer* ex);

  // Files.
  // NewFile()
  //
  // An open file of `p` at `path`. With `attach`, it pins the path and
  // counts as a reader/writer of the inode until released; a dry run's
  // file does neither. Null when the inode has 65535 files open for
  // reading or writing (the caller answers ENFILE).
  std::shared_ptr<OpenFile> NewFile(const Process& p, vfs::PathPos path,
                                    uint32_t f_mode, uint32_t f_flags,
                                    bool attach = true);
  void InstallFd(Process& p, const std::string& name,
                 std::shared_ptr<OpenFile> f);
  void CloseFd(Process& p, const std::string& name);
  void SetCwd(Process& p, vfs::PathPos pos);
  void SetRoot(Process& p, vfs::PathPos pos);

 private:
  int FindProcessLong(std::string_view name) const;  // FindProcess() past 7 bytes
  int Dispatch(OpCtx& ctx);
  Result<void, std::string> BuildNode(const Scenario& s,
                                             const NodeSpec& n);
  Result<void, std::string> StartProcess(const Scenario& s,
                                                const ProcessSpec& ps);

  EngineOptions options_;
  vfs::World world_;
  std::vector<std::unique_ptr<Process>> procs_;  // by index
  std::vector<uint64_t> proc_keys_;               // their name keys, for FindProcess()
  Sysctls sysctl_;
  int abi_ = landlock::kAbiLatest;
  EngineStats stats_;
  std::unique_ptr<landlock::Landlock> landlock_;
};

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_ENGINE_ENGINE_H_
