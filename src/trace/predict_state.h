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
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "src/identity/identity.h"
#include "src/policy/policy.h"
#include "src/trace/host_paths.h"
#include "src/trace/predict.h"

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

struct ProcState {
  // Opened by calls whose exit was seen (only once the process, or one
  // it was forked from, confined itself: `exact`).
  std::map<int, FdRec> fds;
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

struct ThreadState {
  pid_t pid = 0;
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

  explicit State(Model m) : model(std::move(m)) {}
};

// The node at `path` (from /proc: the host as it is now): what the model
// read before is checked again when it does not find it (a name created
// since it was read as absent).
Result<Node, int> LookupFresh(Predictor::State& st, Process p, const std::string& path,
                              bool follow);

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
  // other than the tracer's its paths name other mounts than the host
  // model holds: every call is unknown ("" when not). A user namespace
  // entered since the last call (unshare(CLONE_NEWUSER), setns(), a
  // clone()) makes its credentials read again, and so does each call
  // while the namespace's maps are unwritten.
  std::string Namespaces() {
    const std::string mnt = ReadLinkAt(fmt::format("/proc/{}/task/{}/ns/mnt", t_.pid, tid_));
    if (mnt.empty() || st_.own_mnt_ns.empty())
      return "its mount namespace cannot be read: whether its paths are the host model's is "
             "not known";
    if (mnt != st_.own_mnt_ns)
      return fmt::format("it is in a mount namespace of its own ({}; unshare(CLONE_NEWNS), "
                         "setns() or clone()), whose mounts the trace, reading the host from "
                         "{}, does not follow",
                         mnt, st_.own_mnt_ns);
    std::string user = ReadLinkAt(fmt::format("/proc/{}/task/{}/ns/user", t_.pid, tid_));
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
    (void)st_.model.SetCred(t_.layered, *c);
    (void)st_.model.SetCred(t_.plain, *c);
    t_.cred_stale = false;
    return "";
  }

  // The cwd, as the thread has it now.
  std::string Cwd(std::string* cwd) {
    *cwd = ReadLinkAt(fmt::format("/proc/{}/cwd", tid_));
    if (cwd->empty() || (*cwd)[0] != '/') return "the working directory cannot be read";
    if (*cwd == t_.cwd) return "";
    auto n = LookupFresh(st_, t_.plain, *cwd, true);
    if (!n) return fmt::format("the working directory {} is not in the model", *cwd);
    (void)st_.model.SetCwd(t_.layered, *n);
    (void)st_.model.SetCwd(t_.plain, *n);
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
    auto n = LookupFresh(st_, t_.plain, *path, false);
    if (!n) return fmt::format("fd {} ({}) is not in the model", fd, *path);
    // The walk needs only the file's place: held as O_PATH, as the
    // rights frozen in it matter only to the calls on the fd itself
    // (File()).
    adopted_.push_back(fd);
    auto a = st_.model.Adopt(t_.layered, fd, *n, O_PATH);
    auto b = st_.model.Adopt(t_.plain, fd, *n, O_PATH);
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
    const Process opener = OpenerOf(st_, ps, tid_, fd, sb, t_.layered);
    auto n = LookupFresh(st_, t_.plain, *path, false);
    if (!n) return fmt::format("fd {} ({}) is not in the model", fd, *path);
    const int64_t flags = FdFlags(tid_, fd);
    if (flags < 0) {
      Close(fd);
      return "";
    }
    adopted_.push_back(fd);
    auto a = st_.model.Adopt(t_.layered, fd, *n, static_cast<uint64_t>(flags), opener);
    auto b = st_.model.Adopt(t_.plain, fd, *n, static_cast<uint64_t>(flags));
    if (!a || !b)
      return fmt::format("fd {} ({}): the model cannot hold it ({})", fd, *path,
                         ErrnoName(!a ? a.error() : b.error()));
    return "";
  }

  void Close(int fd) {
    (void)st_.model.CloseFd(t_.layered, Fd{fd});
    (void)st_.model.CloseFd(t_.plain, Fd{fd});
  }

 private:
  Predictor::State& st_;
  ThreadState& t_;
  pid_t tid_;
  std::vector<int> adopted_;
};

}  // namespace pathwarden::trace

#endif  // PATHWARDEN_SRC_TRACE_PREDICT_STATE_H_
