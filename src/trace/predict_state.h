// The predictor's state (predict.cc): the model, the traced threads and
// processes with the model's processes kept for each, the calls in
// flight, the descriptors the tracer holds; and the keeping in step of a
// thread's credentials, cwd and descriptors with the model (Sync,
// predict_sync.cc).

#ifndef PATHWARDEN_SRC_TRACE_PREDICT_STATE_H_
#define PATHWARDEN_SRC_TRACE_PREDICT_STATE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "src/identity/identity.h"
#include "src/policy/policy.h"
#include "src/trace/host_paths.h"
#include "src/trace/predict.h"
#include "src/vfs/mountinfo.h"

namespace pathwarden::trace {

struct FdRec {
  dev_t dev = 0;
  ino_t ino = 0;
  Process opener;  // whose domain froze its rights
  bool cloexec = false;
};

// A ruleset the program built (landlock_create_ruleset()).
struct ProgramRuleset {
  LandlockRuleset ruleset;
};

// A descriptor whose open was predicted refused but which the kernel
// opened (Record::consequence_of): the file it is (a later descriptor of
// that number is another once these differ), and the denial.
struct RefusedFd {
  dev_t dev = 0;
  ino_t ino = 0;
  bool cloexec = false;
  std::string denial;
};

struct ProcState {
  // Opened by calls whose exit was seen (only once the process, or one
  // it was forked from, confined itself: `exact`).
  std::map<int, FdRec> fds;
  std::map<int, RefusedFd> refused;
  std::map<int, ProgramRuleset> rulesets;
  int pidfd = -1;
  bool exact = false;
};

// A file description the tracer holds (pidfd_getfd()), opened under the
// domain of `opener`: the traced command's first descriptors (opened
// outside every layer), and each process's when it confined itself
// further. kcmp() tells whether a tracee's fd is one of them.
struct Ref {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  Process opener;
};

struct Pending {
  Decoded d;
  Record rec;
  bool emit = false;
  // For the exit's bookkeeping: a rule's parent (landlock_add_rule), the
  // fd's path (ftruncate, ioctl), an abstract name bound.
  std::string host_path;
  std::string abstract_name;
  // --learn: the object this call creates when it succeeds (real path).
  std::string creates;
};

// NsView
//
// A mount namespace other than the tracer's (`unshare -m`, a container,
// bubblewrap), read as `explain --pid` reads one: through the root and
// mount table of a thread in it (HostOptions::root_dir, here an O_PATH
// descriptor of that root the tracer holds, so that the view outlives
// the thread). The policy's layers are built again on it, each rule on
// the object the tracer's rule is on, found by device and inode through
// the namespace's mounts (NsPathOf()). A mount call of one of its
// threads makes it `stale`: read again at its next call.
struct NsView {
  std::optional<Model> model;
  int root_fd = -1;
  std::vector<vfs::MountInfo> mounts;  // its table, as read
  Process base_layered, base_plain;
  uint64_t gen = 0;  // counts the reads; a thread's processes are of one
  bool stale = true;
  bool own = false;  // the tracer's own namespace, whose paths are its own
  std::string why_not;  // why its calls are unknown ("" when modelled)
  // Per layer of the policy: the rules whose place in the namespace was
  // not found out (NsPathOf(): the object cannot be read): a refusal by
  // such a layer is unknown.
  std::vector<std::vector<std::string>> lost;

  NsView() = default;
  NsView(const NsView&) = delete;
  NsView& operator=(const NsView&) = delete;
  ~NsView();
};

struct ThreadState {
  pid_t pid = 0;
  // The mount namespace its processes are modelled in: nullptr for the
  // tracer's (State::model), else a view as read at `view_gen`.
  NsView* view = nullptr;
  uint64_t view_gen = 0;
  Process layered;  // the policy's layers and the program's own
  Process plain;    // none of the policy's layers (the program's own: none)
  std::string cwd;  // what the model's processes have as their cwd
  bool cred_stale = true;
  // The thread's user namespace as last seen (/proc/TID/ns/user), and
  // whether its maps were still unwritten then (read again each call).
  std::string userns;
  bool maps_pending = false;
  Pending pending;
  bool in_call = false;
};

struct Predictor::State {
  Model model;
  std::vector<policy::HostLayer> built;
  Process base_layered, base_plain;
  std::map<pid_t, ThreadState> threads;
  std::map<pid_t, ProcState> procs;
  std::map<std::string, Process> listeners;   // abstract name -> listening model process
  std::map<pid_t, Process> external;          // processes outside the trace
  // --learn: what the run created (real paths): a rule cannot name what
  // will not exist when the policy is enforced, so needs on these go to
  // the nearest directory that existed before.
  std::set<std::string> created;
  std::vector<Ref> refs;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool first = true;
  // The tracer's own mount namespace: the one the host model is read
  // from (/proc/self/ns/mnt).
  std::string own_mnt_ns = ReadLinkAt("/proc/self/ns/mnt");
  // A traced thread changed the tracer's namespace's mounts: the model
  // above no longer holds them, and its threads move to a view of it,
  // read again.
  bool own_changed = false;
  // The tracer's PID namespace: a signal's target is named in the
  // signaller's (GlobalTarget()).
  std::string own_pid_ns = ReadLinkAt("/proc/self/ns/pid");
  // The other mount namespaces the traced threads entered, by
  // /proc/TID/ns/mnt; and how the tracer's model was read, for theirs.
  std::map<std::string, std::unique_ptr<NsView>> views;
  HostOptions host_options;
  // The host's security modules, read once for every traced program (whose
  // labels may change at exec): an allowed prediction that one of them
  // could refuse is unknown (Predictor::Evaluate()). The models themselves
  // do not read them, so that what Unix and Landlock say stays known to the
  // learning and the attribution of denials.
  SecurityModules lsms;
  Cred self;

  explicit State(Model m) : model(std::move(m)) {}
};

// The model thread `t`'s processes are in.
inline Model& ModelOf(Predictor::State& st, const ThreadState& t) {
  return t.view ? *t.view->model : st.model;
}

// ViewFor()
//
// The view of mount namespace `mnt` (its /proc/TID/ns/mnt link), read
// through thread `tid` in it when first asked or stale; "" when it is
// modelled, else why its calls are unknown.
std::string ViewFor(Predictor::State& st, const std::string& mnt, pid_t tid, NsView** out);

// ViewPath()
//
// Where the tracer reads `path` of view `v`'s namespace
// (/proc/self/fd/N/...).
std::string ViewPath(const NsView& v, const std::string& path);

// TracerPathOf()
//
// The path of the tracer's own namespace that reaches the object at
// canonical `path` of view `v`'s (checked by device and inode); nullopt
// when none does.
std::optional<std::string> TracerPathOf(const NsView& v, const std::string& path);

// SameInView()
//
// Whether `path`, as view `v` reads it, is the object /proc shows at
// `proc_obj` (a thread's cwd or fd link): /proc names a file by its own
// namespace's path, which is the view's only when the file is inside the
// view's tree (a descriptor or cwd brought in from elsewhere is not).
bool SameInView(const NsView& v, const std::string& path, const std::string& proc_obj);

// NsPathOf()
//
// Where the object at `path` of the tracer's own namespace is for the
// namespace whose root is `ns_root` (a directory path of the tracer's:
// /proc/self/fd/N) and whose mounts are `mounts`: kReached, by the path
// *at (checked by device and inode); kNever, inside none of its mounts,
// so no Landlock walk there meets it (also when a mount covers it); kUnknown,
// not found out.
enum class NsPlace { kReached, kNever, kUnknown };
NsPlace NsPathOf(const std::string& path, const std::string& ns_root,
                 std::span<const vfs::MountInfo> mounts, std::string* at);

// The node at `path` (from /proc: the host as it is now): what the model
// read before is checked again when it does not find it (a name created
// since it was read as absent).
Result<Node, int> LookupFresh(Model& m, Process p, const std::string& path, bool follow);

// The tracee's pidfd, opened once.
int PidfdOf(ProcState& ps, pid_t pid);


// Each file description process `pid` holds now that no reference is of,
// held as one opened under `opener`'s domain.
void TakeRefs(Predictor::State& st, ProcState& ps, pid_t pid, Process opener);

// Whose domain froze the rights of fd `fd` of `tid`: a reference's
// opener, else the fd's record (its open seen), else `current` (opened
// since the process was last confined: under its domain now).
Process OpenerOf(Predictor::State& st, ProcState& ps, pid_t tid, int fd, const struct stat& sb,
                 Process current);

// The model's view kept in step with one thread: credentials, cwd,
// descriptors.
class Sync {
 public:
  Sync(Predictor::State& st, ThreadState& t, pid_t tid) : st_(st), t_(t), tid_(tid) {}
  // The files adopted for this call are closed in the model after it:
  // the tracer does not see closes, so a file held longer would count as
  // open (a FIFO's reader, a writer making exec ETXTBSY) after it is gone.
  ~Sync() {
    for (int fd : adopted_) Close(fd);
  }
  Sync(const Sync&) = delete;
  Sync& operator=(const Sync&) = delete;

  // The thread's namespaces, before each call. In a mount namespace
  // other than the tracer's (or in the tracer's once a traced thread
  // changed its mounts), its processes are modelled in that namespace's
  // view (ViewFor()), made afresh when it enters one or the view is read
  // again: their credentials and cwd are read again, their
  // domain is the policy's layers built on the view. Unknown ("" when
  // not) where that cannot stand: a domain the program made itself (its
  // rules are on the tracer's model's objects), a root other than the
  // namespace's (the paths /proc shows for its descriptors are the
  // namespace's). A user namespace entered since the last call
  // (unshare(CLONE_NEWUSER), setns(), a clone()) makes its credentials
  // read again, and so does each call while the namespace's maps are
  // unwritten.
  std::string Namespaces() {
    const std::string task = fmt::format("/proc/{}/task/{}", t_.pid, tid_);
    const std::string mnt = ReadLinkAt(task + "/ns/mnt");
    if (mnt.empty() || st_.own_mnt_ns.empty())
      return "its mount namespace cannot be read: whether its paths are the host model's is "
             "not known";
    NsView* want = nullptr;
    if (mnt != st_.own_mnt_ns || st_.own_changed) {
      // (The root first: a view is read through the thread's root.)
      if (const std::string root = ReadLinkAt(task + "/root"); root != "/")
        return fmt::format("its root is {} of its mount namespace ({}), not the namespace's "
                           "root, from which /proc names its files",
                           root.empty() ? "not readable" : root, mnt);
      if (std::string e = ViewFor(st_, mnt, tid_, &want); !e.empty()) return e;
    }
    if (want && st_.procs[t_.pid].exact && want == t_.view && t_.view_gen == want->gen)
      return fmt::format("it confined itself with Landlock in mount namespace {}, where the "
                         "trace does not follow a program's own layers",
                         mnt);
    if (want != t_.view || (want && t_.view_gen != want->gen)) {
      if (st_.procs[t_.pid].exact)
        return fmt::format(
            "it entered mount namespace {} after confining itself with Landlock: the rules "
            "it added are on the objects of the namespace it left, which the trace does not "
            "carry over",
            mnt);
      Model& m = want ? *want->model : st_.model;
      t_.layered = m.Fork(want ? want->base_layered : st_.base_layered,
                          fmt::format("pid {}", t_.pid));
      t_.plain = m.Fork(want ? want->base_plain : st_.base_plain, fmt::format("pid {}", t_.pid));
      t_.view = want;
      t_.view_gen = want ? want->gen : 0;
      t_.cwd.clear();
      t_.cred_stale = true;
    }
    std::string user = ReadLinkAt(task + "/ns/user");
    if (user != t_.userns || t_.maps_pending) {
      t_.userns = std::move(user);
      t_.cred_stale = true;
    }
    return "";
  }

  // Credentials read again when a call changed them.
  std::string Cred() {
    if (!t_.cred_stale) return "";
    auto c = identity::ReadCred(fmt::format("/proc/{}/task/{}/status", t_.pid, tid_));
    if (!c) return c.error();
    t_.maps_pending = c->userns && (c->userns->uid_map.empty() || c->userns->gid_map.empty());
    (void)ModelOf(st_, t_).SetCred(t_.layered, *c);
    (void)ModelOf(st_, t_).SetCred(t_.plain, *c);
    t_.cred_stale = false;
    return "";
  }

  // The cwd, as the thread has it now.
  std::string Cwd(std::string* cwd) {
    *cwd = ReadLinkAt(fmt::format("/proc/{}/cwd", tid_));
    if (cwd->empty() || (*cwd)[0] != '/') return "the working directory cannot be read";
    if (*cwd == t_.cwd) return "";
    if (t_.view && !SameInView(*t_.view, *cwd, fmt::format("/proc/{}/cwd", tid_)))
      return fmt::format("the working directory {} is outside its mount namespace's tree", *cwd);
    auto n = LookupFresh(ModelOf(st_, t_), t_.plain, *cwd, true);
    if (!n) return fmt::format("the working directory {} is not in the model", *cwd);
    (void)ModelOf(st_, t_).SetCwd(t_.layered, *n);
    (void)ModelOf(st_, t_).SetCwd(t_.plain, *n);
    t_.cwd = *cwd;
    return "";
  }

  // Fd `fd` of the thread, as a walk starts from it (O_PATH is enough).
  // "" when done (a closed fd is closed in the model too: EBADF).
  std::string Dirfd(int fd, std::string* path) {
    *path = FdLink(tid_, fd);
    if (path->empty()) {
      Close(fd);
      return "";
    }
    if ((*path)[0] != '/') return fmt::format("fd {} is not a file on a filesystem ({})", fd, *path);
    if (path->ends_with(" (deleted)")) return fmt::format("fd {} names a removed file", fd);
    if (std::string e = InView(fd, *path); !e.empty()) return e;
    auto n = LookupFresh(ModelOf(st_, t_), t_.plain, *path, false);
    if (!n) return fmt::format("fd {} ({}) is not in the model", fd, *path);
    // The walk needs only the file's place: held as O_PATH, as the
    // rights frozen in it matter only to the calls on the fd itself
    // (File()).
    adopted_.push_back(fd);
    auto a = ModelOf(st_, t_).Adopt(t_.layered, fd, *n, O_PATH);
    auto b = ModelOf(st_, t_).Adopt(t_.plain, fd, *n, O_PATH);
    if (!a || !b) return fmt::format("fd {} ({}) cannot be held in the model", fd, *path);
    return "";
  }

  // Fd `fd` as the calls on it see it: its open flags and the Landlock
  // rights frozen when it was opened (by the process that opened it).
  std::string File(int fd, ProcState& ps, std::string* path, bool* skip) {
    *skip = false;
    *path = FdLink(tid_, fd);
    if (path->empty()) {
      Close(fd);
      return "";
    }
    if ((*path)[0] != '/') {
      *skip = true;
      return fmt::format("fd {} is {}: not a file the model holds", fd, *path);
    }
    if (path->ends_with(" (deleted)")) return fmt::format("fd {} names a removed file", fd);
    struct stat sb;
    if (!FdStat(tid_, fd, &sb)) {
      Close(fd);
      return "";
    }
    if (std::string e = InView(fd, *path); !e.empty()) return e;
    Process opener = OpenerOf(st_, ps, tid_, fd, sb, t_.layered);
    // In a view the domain is the policy's since the program started (a
    // program that confined itself is not followed there): a descriptor
    // the tracer holds a reference of was opened outside every layer.
    if (t_.view && opener != t_.layered) opener = t_.view->base_plain;
    auto n = LookupFresh(ModelOf(st_, t_), t_.plain, *path, false);
    if (!n) return fmt::format("fd {} ({}) is not in the model", fd, *path);
    const int64_t flags = FdFlags(tid_, fd);
    if (flags < 0) {
      Close(fd);
      return "";
    }
    adopted_.push_back(fd);
    auto a = ModelOf(st_, t_).Adopt(t_.layered, fd, *n, static_cast<uint64_t>(flags), opener);
    auto b = ModelOf(st_, t_).Adopt(t_.plain, fd, *n, static_cast<uint64_t>(flags));
    if (!a || !b)
      return fmt::format("fd {} ({}): the model cannot hold it ({})", fd, *path,
                         ErrnoName(!a ? a.error() : b.error()));
    return "";
  }

  // "" unless the thread is in a view and its fd `fd` is not what the
  // view finds at `path` (SameInView()).
  std::string InView(int fd, const std::string& path) {
    if (!t_.view || SameInView(*t_.view, path, fmt::format("/proc/{}/fd/{}", tid_, fd))) return "";
    return fmt::format("fd {} ({}) is outside its mount namespace's tree", fd, path);
  }

  void Close(int fd) {
    (void)ModelOf(st_, t_).CloseFd(t_.layered, Fd{fd});
    (void)ModelOf(st_, t_).CloseFd(t_.plain, Fd{fd});
  }

 private:
  Predictor::State& st_;
  ThreadState& t_;
  pid_t tid_;
  std::vector<int> adopted_;
};

}  // namespace pathwarden::trace

#endif  // PATHWARDEN_SRC_TRACE_PREDICT_STATE_H_
