// Tasks: the processes acting on a world (credentials, working directory,
// root, fd table, Landlock domain), their open files (struct file), the
// arguments of one operation, and the context an operation runs in. Below
// the system calls (src/ops), above the walk; the engine owns one table.
// Linux: include/linux/sched.h (task_struct), include/linux/cred.h,
// include/linux/fs.h (struct file), fs/file.c (the fd table)

#ifndef PATHWARDEN_SRC_TASK_TASK_H_
#define PATHWARDEN_SRC_TASK_TASK_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "pathwarden/cred.h"
#include "pathwarden/handles.h"
#include "pathwarden/kernel_rules.h"
#include "pathwarden/landlock.h"
#include "pathwarden/request.h"
#include "pathwarden/sysctls.h"
#include "src/base/arena.h"
#include "src/explain/explain.h"
#include "src/vfs/world.h"
#include "src/walk/namei.h"

namespace pathwarden {

namespace landlock {
class Domain;
class Landlock;
}  // namespace landlock
namespace security {
class Module;
}  // namespace security

// File modes of an open file (FMODE_*).
inline constexpr uint32_t kFmodeRead = 0x1;
inline constexpr uint32_t kFmodeWrite = 0x2;
inline constexpr uint32_t kFmodeExec = 0x20;
inline constexpr uint32_t kFmodePath = 0x4000;

// The lowest fd a task's table gives: 0, 1 and 2 are taken by the
// standard streams, which the model does not hold.
inline constexpr int kFirstFd = 3;

// OpenFile
//
// An open file description (struct file). Shared by every fd naming it,
// in any task (send_fd passes the same description).
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
  int opener = 0;           // task index
  uint64_t cred_epoch = 0;  // the opener's credentials generation
};

// Task
//
// A modelled process.
struct Task {
  std::string name;  // for reasons
  int index = 0;
  int parent = -1;
  Cred cred;
  vfs::PathPos cwd;
  vfs::PathPos root;
  std::shared_ptr<const landlock::Domain> domain;
  // The domain of the abstract UNIX socket every task listens on,
  // created after its starting layers.
  std::shared_ptr<const landlock::Domain> listen_domain;
  std::map<int, std::shared_ptr<OpenFile>> fds;
  // What reasons call an fd ("x" for a scenario's fd named x; unnamed
  // ones are "fd 3"). A name may outlive its fd.
  std::map<int, std::string> fd_names;
  // Bumped whenever the task commits new credentials (each Landlock
  // layer), so "the same cred object" can be compared as Linux does.
  uint64_t cred_epoch = 0;
  // Whether it has a controlling terminal (signal->tty): /dev/tty opens
  // it (Model::SetControllingTty()); kUnknown unless an observer said.
  enum class Ctty : uint8_t { kUnknown, kNone, kSome };
  Ctty ctty = Ctty::kUnknown;
};

// TaskTable
//
// The tasks of one world, by index, and the writer's operations on their
// files, working directories and roots. Also where the operations find
// the world's security module and sysctls.
class TaskTable {
 public:
  explicit TaskTable(vfs::World& w) : w_(w) {}
  ~TaskTable();
  TaskTable(const TaskTable&) = delete;
  TaskTable& operator=(const TaskTable&) = delete;

  // NewTask()
  //
  // A task named `name`: a fork of `parent` (its credentials, domain, cwd,
  // root and fd table), or, without one, root's credentials at the
  // world's root.
  Task& NewTask(std::string name, const Task* parent);
  Task& task(int i) { return *Slot(i); }
  const Task& task(int i) const { return *Slot(i); }
  // Readers may call count() and task() while the writer adds a task: a
  // task is published (count() moves) only once it is whole, and the
  // slots never move.
  int count() const { return count_.load(std::memory_order_acquire); }

  // NewFile()
  //
  // An open file of `p` at `path`. With `attach`, it pins the path and
  // counts as a reader/writer of the inode until released; a dry run's
  // file does neither. Null when the inode has 65535 files open for
  // reading or writing (the caller answers ENFILE).
  std::shared_ptr<OpenFile> NewFile(const Task& p, vfs::PathPos path, uint32_t f_mode,
                                    uint32_t f_flags, bool attach = true);
  // InstallFd()
  //
  // The lowest free fd of `p` (from kFirstFd) now names `f`.
  int InstallFd(Task& p, std::shared_ptr<OpenFile> f);
  // CloseFd()
  //
  // False when `fd` is not open.
  bool CloseFd(Task& p, int fd);
  void SetCwd(Task& p, vfs::PathPos pos);
  void SetRoot(Task& p, vfs::PathPos pos);

  const Sysctls& sysctl() const { return sysctl_; }
  void set_sysctl(const Sysctls& s) { sysctl_ = s; }
  int abi() const { return abi_; }
  void set_abi(int abi) { abi_ = abi; }
  // Where kernel builds differ (pathwarden/kernel_rules.h): mainline's
  // unless set (the Model sets the running kernel's).
  const KernelRules& kernel_rules() const { return kernel_rules_; }
  void set_kernel_rules(const KernelRules& k) { kernel_rules_ = k; }

  // The security module the hooks call (Landlock), and Landlock itself
  // for its own system calls.
  security::Module* lsm() const { return lsm_; }
  landlock::Landlock& landlock() const { return *landlock_; }
  void set_landlock(landlock::Landlock* ll, security::Module* lsm) {
    landlock_ = ll;
    lsm_ = lsm;
  }

 private:
  vfs::World& w_;
  // The tasks by index (slot index + 1: the arena keeps slot 0), in
  // reserved memory that never moves (a vector's growth would move them
  // under a reader); count_ publishes a task once it is whole.
  Task* Slot(int i) const { return tasks_[static_cast<uint32_t>(i) + 1].get(); }
  internal::StableArena<std::unique_ptr<Task>> tasks_;
  std::atomic<int> count_{0};
  Sysctls sysctl_;
  int abi_ = landlock::kAbiLatest;
  KernelRules kernel_rules_;
  landlock::Landlock* landlock_ = nullptr;
  security::Module* lsm_ = nullptr;
};

// OpArgs
//
// The arguments of one system call as the operations read them, flat
// (as registers): the typed requests of pathwarden/request.h map onto it
// without copying a string. Which fields an operation reads is its
// request's.
struct OpArgs {
  Op op = Op::kStat;
  std::string_view path, path2;
  std::string_view target;  // symlink's target
  Fd dirfd = kAtFdcwd;
  Fd fd{-1};
  uint64_t flags = 0;
  uint32_t access_mode = 0;
  uint32_t mode = 0;
  uint32_t mknod_type = 0;  // S_IF* (S_IFREG for 0)
  uint32_t rdev_major = 1, rdev_minor = 3;
  int64_t uid = -1, gid = -1;
  uint32_t port = 0;
  uint32_t cmd = 0;
  int peer = -1;  // the target task of signal, connect_abstract, send_fd
  const LandlockRuleset* ruleset = nullptr;
  const std::optional<std::array<TimeSpec, 2>>* times = nullptr;
  // The xattr calls: the attribute's name and value, XATTR_CREATE |
  // XATTR_REPLACE; fallocate's range (its mode is `mode`).
  std::string_view xattr_name, xattr_value;
  uint32_t xattr_flags = 0;
  uint64_t offset = 0, len = 0;
  // mount_setattr's MOUNT_ATTR_* to set and to clear.
  uint64_t attr_set = 0, attr_clr = 0;
};

// ArgsOf()
//
// The flat arguments of a typed request (pointing into it), into a
// default OpArgs (the hot path fills one in place).
OpArgs ArgsOf(const Request& r);
void ArgsOf(const Request& r, OpArgs* out);

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
// What one operation needs: the task table, the world, the acting task,
// the arguments, where to explain, and whether to change the world (a
// dry run does not).
struct OpCtx {
  TaskTable& t;
  vfs::World& w;
  Task& p;
  const OpArgs& a;
  Explainer* ex;
  walk::WalkEnv env;
  bool apply = true;
  // The credentials checks use: the task's, or an override (access()
  // checks as the real ids).
  const Cred* cred_override = nullptr;
  // Out: the fd an open or send_fd installed (-1: none).
  int new_fd = -1;

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
  std::string PathOf(vfs::PathPos pos) const { return w.DisplayPathOf(pos, p.root); }

  // StartFor()
  //
  // Where `name` begins: the task's cwd, or the request's dirfd.
  walk::Start StartFor(std::string_view name) const {
    // Inline, so the common answer is built in the caller, whole.
    if (a.dirfd.at_cwd() || (!name.empty() && name[0] == '/')) return walk::Start{};
    return StartForDirfd();
  }
  walk::Start StartForDirfd() const;

  // File()
  //
  // The open file `fd` names in the acting task, or nullptr.
  OpenFile* File(Fd fd) const {
    auto it = p.fds.find(fd.num);
    return it == p.fds.end() ? nullptr : it->second.get();
  }
  // FdText()
  //
  // How reasons name an fd of the acting task: "\"x\"" for a named one,
  // else "fd 3".
  std::string FdText(Fd fd) const;
};

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_TASK_TASK_H_
