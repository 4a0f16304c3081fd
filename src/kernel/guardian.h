// A guardian: a process that outlives its holder, to put back what the
// holder changed on the machine (the protected_* sysctls of
// src/kernel/sysctl_guard.h, the scratch directory of
// src/query/scratch.h) when the holder is done or dies however it dies.

#ifndef PATHWARDEN_SRC_KERNEL_GUARDIAN_H_
#define PATHWARDEN_SRC_KERNEL_GUARDIAN_H_

#include <sys/types.h>

#include <sys/stat.h>

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "pathwarden/result.h"

namespace pathwarden::kernel_internal {

// Where holders keep their locks and what they saved (the host's sysctls,
// a scratch directory's journal).
inline constexpr const char* kStateDir = "/run/pathwarden";

// Guardian
//
// Start() forks a child that waits on a pipe until every process holding
// its write end has closed it: the holder calling Wake() or Finish(), or
// the holder dying however it dies (SIGINT, SIGKILL, the OOM killer, a
// crash), and the holder's own children forked meanwhile, which inherit
// the write end, dying too (the kernel's children are tied to the
// holder's life, see ForkTied()). Only then does it run `work` and exit
// with its status.
//
// The child is in a session of its own, so that a Ctrl-C on the terminal
// (SIGINT to the foreground process group) does not reach it; it ignores
// SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE, asks the OOM killer to
// spare it (oom_score_adj -1000, where allowed), and keeps only the
// descriptors `keep` open (a lock it holds until its work is done, a pipe
// it reports on) besides its own end of the pipe.
//
// `work` runs in a child forked from the holder: the sysctl guard's is
// async-signal-safe, as a holder may have threads; scratch.cc's allocates,
// which glibc's fork() allows (it resets the allocator's locks in the
// child) and which is safe when the holder's other threads hold no lock
// that `work` takes.
//
// A holder that forks a long-lived child while the guardian waits keeps
// the guardian waiting as long as that child lives.
//
// Example:
//   const int keep[] = {lock_fd};
//   auto g = Guardian::Start(keep, [&] { return PutBack(saved); });
//   if (!g) return g.error();
//   ... change the machine ...
//   const int status = g->Finish();  // PutBack() ran; its status
class Guardian {
 public:
  Guardian() = default;
  // Start()
  //
  // Errors: pipe() or fork() failed.
  static Result<Guardian, std::string> Start(std::span<const int> keep,
                                             const std::function<int()>& work);
  Guardian(Guardian&& other) noexcept;
  Guardian& operator=(Guardian&& other) noexcept;
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;
  // Finish()s.
  ~Guardian();

  // Wake()
  //
  // Closes the holder's end of the pipe: the guardian does its work once
  // this process's children have let go of theirs too.
  void Wake();

  // Finish()
  //
  // Wake()s the guardian and waits for it: its wait status (waitpid()), or
  // -1 when there is no guardian (never started, or already finished).
  int Finish();

  // WithHeldPipes()
  //
  // Calls `f` with the write ends of this process's guardians not yet
  // woken, under a lock that keeps them open meanwhile: for a child forked
  // elsewhere on this process's behalf (src/kernel/probe_child.h), which
  // must hold them as a child forked here would.
  static void WithHeldPipes(const std::function<void(std::span<const int>)>& f);

  // The guardian's pid while it runs (for tests), else -1.
  pid_t pid() const noexcept { return pid_; }

 private:
  Guardian(pid_t pid, int pipe) : pid_(pid), pipe_(pipe) {}

  pid_t pid_ = -1;
  int pipe_ = -1;  // the write end: its closing (by everyone) wakes the guardian
};

// LockStateFile()
//
// An exclusive flock on `<dir>/<name>` (the directory made 0755 and the
// file 0644 when missing): the descriptor, whose lock lasts until every
// process that shares it (a guardian forked meanwhile) has closed it.
// Waits while another process holds the lock; fails at once, with
// `held_here`, when this process holds it already (waiting would never
// end). Linux: fs/locks.c (the holder read from /proc/locks).
Result<int, std::string> LockStateFile(const std::string& dir, const std::string& name,
                                       std::string_view held_here);

// SaveAtomically()
//
// `bytes` written to `path` through `<path>.tmp` and renamed into place,
// so that a process that dies never leaves half a file; with `sync`,
// fsync()ed first (for a machine that dies; /run is a tmpfs on most
// systems, which a reboot empties anyway). "" or why not.
std::string SaveAtomically(const std::string& path, std::string_view bytes, mode_t mode,
                           bool sync);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_GUARDIAN_H_
