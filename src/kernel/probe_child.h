// The host probe's child: what it does (takes an identity, runs steps as
// real system calls, reports each errno over a pipe) and where it is
// forked from: a lean server exec'd anew, so that a large caller (an ASan
// test of hundreds of MB) does not copy its page tables for every probe.

#ifndef PATHWARDEN_SRC_KERNEL_PROBE_CHILD_H_
#define PATHWARDEN_SRC_KERNEL_PROBE_CHILD_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pathwarden/cred.h"
#include "pathwarden/result.h"
#include "pathwarden/scenario.h"

namespace pathwarden::kernel_internal {

// ChildMessage
//
// What the child reports, one message per step answered and one for
// whatever stops it; fixed size, written whole to a pipe.
struct ChildMessage {
  enum Kind : int32_t {
    kAnswer,       // index: the step, err: its errno
    kRefused,      // index: the step, mode: its target's st_mode
    kRestoreCwd,   // index: the Chdir after which fchdir() back failed
    kRulePath,     // index: the layer, rule, err
    kCred,         // err, call
    kSetup,        // err, call (chroot, chdir, open ., PR_SET_NO_NEW_PRIVS)
    kLayer,        // index: the layer, rule, stage, err
  };
  int32_t kind = kAnswer;
  int32_t index = 0;
  int32_t err = 0;
  int32_t rule = 0;
  int32_t stage = 0;
  uint32_t mode = 0;
  char call[24] = {};
};

// ProbeJob
//
// Everything the child needs, as values (it may run in another process
// than the one that built it): the identity (`cred`, whose supplementary
// groups travel as `groups`, the user namespace model not at all: the
// child takes the ids in the initial namespace), the root and working
// directory it takes (chroot(root) unless "/", then chdir(cwd)), the
// Landlock layers it enforces in order, and the steps it runs.
struct ProbeJob {
  Cred cred;
  std::vector<uint32_t> groups;
  std::string root = "/";
  std::string cwd = "/";
  std::vector<LayerSpec> layers;
  std::vector<StepSpec> steps;
};

// OpensSpecialFile()
//
// An open (not O_PATH) whose target, looked up as the calling process
// with O_PATH first, is a device, a FIFO or a socket (or could not be
// told, unless a FUSE mount refuses the caller: then the open fails
// before any driver): opening it would reach a driver or a peer.
// *mode: its st_mode.
bool OpensSpecialFile(const StepSpec& st, uint32_t* mode);

// ProbeChild
//
// Start() forks a child that runs `job` and writes its ChildMessages to a
// pipe whose read end is `out()`; it closes its end when it exits. Read
// `out()` to its end, then Wait() for the child's wait status.
//
// Where it is forked from: a server, /proc/self/exe exec'd anew by this
// thread (taken over by a constructor in probe_child.cc before main()),
// which holds nothing but this code, so that its fork() copies almost no
// page tables however large the caller is. The server is this thread's
// own (tied to it: PR_SET_PDEATHSIG), and a new one is spawned when the
// thread's mount, user, network or pid-for-children namespace or its root
// directory changed since the last one started, or when this process is a
// fork of the one that spawned it. Its other context is the thread's at
// that first probe (the bounding set, rlimits, a Landlock domain or
// seccomp filter the caller took later are not seen: a caller that
// confines itself after probing must not probe again). Each child also
// holds the write ends of the guardians this process has running
// (Guardian::ForEachHeldPipe()), as a child forked here would: a
// guardian waits for the probe's child too.
//
// After fork() the caller's own writes fault its pages copy-on-write too;
// through the server it has none. Measured on host.ExplainChangesTest
// (4,175 probes, runs alternated): ASan build (180 MB) 211 s forking here,
// 97 s through the server; release build (7 MB) 38-43 s and 28-30 s.
//
// A thread's first probe, and every probe of a binary that does not hold
// this code as its main program (Python loading libpathwarden.so) or
// whose server failed to start, forks the child here, as ForkTied() does:
// a process that probes once would pay the server's start for nothing.
//
// So is a job whose root or working directory is relative (the server's
// working directory is the thread's at its start), and one started while
// another of this thread's children is not yet waited for. The child is
// tied to its parent's life (ForkTied()). Wait() (and the destructor) on
// the thread that started it.
class ProbeChild {
 public:
  static Result<ProbeChild, std::string> Start(const ProbeJob& job);
  ProbeChild(ProbeChild&& other) noexcept;
  ProbeChild& operator=(ProbeChild&&) = delete;
  ProbeChild(const ProbeChild&) = delete;
  ProbeChild& operator=(const ProbeChild&) = delete;
  // Closes out() and, without a Wait(), reaps the child.
  ~ProbeChild();

  int out() const noexcept { return out_; }

  // Wait()
  //
  // The child's wait status (waitpid()), once it has exited. Errors: the
  // server stopped answering (it is not used again).
  Result<int, std::string> Wait();

 private:
  ProbeChild(int out, pid_t pid) : out_(out), pid_(pid) {}

  int out_ = -1;
  pid_t pid_ = -1;  // forked here; -1: the server's
  bool waited_ = false;
};

// This thread's probe server, -1 when it has none (for tests).
pid_t ProbeServerForTesting();

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_PROBE_CHILD_H_
