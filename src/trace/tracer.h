// The tracer: a command and every process and thread it starts, stopped
// at the system calls pathwarden models (a seccomp filter returning
// SECCOMP_RET_TRACE for them, so nothing else stops), and at the exit of
// each stopped call, as `strace --seccomp-bpf` does it. Tracing observes;
// it is not a security boundary (docs/architecture.md, "trace"): another
// thread of the tracee may change a path in its memory between the read
// here and the kernel's own.
// Linux: kernel/seccomp.c (SECCOMP_RET_TRACE), kernel/ptrace.c,
// Documentation/userspace-api/seccomp_filter.rst

#ifndef PATHWARDEN_SRC_TRACE_TRACER_H_
#define PATHWARDEN_SRC_TRACE_TRACER_H_

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pathwarden/result.h"

namespace pathwarden::trace {

// Stop
//
// One stopped system call of thread `tid` (of process `pid`): its number
// and raw arguments (x86_64), and at the exit its return value.
struct Stop {
  pid_t pid = 0;  // the thread group
  pid_t tid = 0;
  long nr = -1;
  std::array<uint64_t, 6> args{};
  long ret = 0;  // at the exit: the result, or -errno
};

// Memory
//
// Reads the stopped thread's memory (process_vm_readv(), one page at a
// time so that a string ending before an unmapped page reads).
class Memory {
 public:
  explicit Memory(pid_t tid) : tid_(tid) {}
  // A NUL-terminated string at `addr`, at most `max` bytes: false when
  // unreadable; *truncated when no NUL came within `max`.
  bool String(uint64_t addr, size_t max, std::string* out, bool* truncated) const;
  // `n` bytes at `addr`.
  bool Bytes(uint64_t addr, void* out, size_t n) const;

 private:
  pid_t tid_;
};

// Observer
//
// What the tracer tells about the tracee. Entry() sees each traced call
// before the kernel runs it; Exit() the same call with its result (for
// execve, after the new program replaced the old: `pid` is then the
// thread group's leader). NewThread() is told of every thread and process
// the tracee starts (`parent` is the thread that created it, `thread`
// whether it shares its process), Gone() when one is gone.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void Entry(const Stop& s, const Memory& m) = 0;
  virtual void Exit(const Stop& s, const Memory& m) = 0;
  virtual void NewThread(pid_t tid, pid_t pid, pid_t parent, bool thread) = 0;
  virtual void Gone(pid_t tid) = 0;
};

// TraceOptions
//
// `before_exec`: run in the child after it is traced and before the
// filter and execvp() (the layers of --enforce); a message means it
// cannot go on (the child exits 125 with it).
struct TraceOptions {
  std::vector<std::string> argv;
  std::function<std::string()> before_exec;
};

// The traced system calls (x86_64 numbers), for the filter and the
// decoders.
const std::vector<int>& TracedSyscalls();

// RunTraced()
//
// Forks, traces the child and everything it starts until all are gone,
// and returns the command's exit status as a shell gives it (128 + the
// signal when killed; 127 when not found, 126 when not executable, 125
// when before_exec failed). Errors: the tracer's own (no ptrace, the
// filter refused), with nothing left running.
Result<int, std::string> RunTraced(const TraceOptions& options, Observer& observer);

}  // namespace pathwarden::trace

#endif  // PATHWARDEN_SRC_TRACE_TRACER_H_
