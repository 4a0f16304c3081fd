// A stopped system call read into what the model asks: its name, the
// scenario step it is (an Open, a Rename, ...) with the tracee's own
// descriptor numbers, or what else it is to the tracer (credentials
// changing, Landlock, descriptors copied), or why the model cannot say.
// x86_64 only: a call of another ABI is unknown.
// Linux: arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/linux/*.h

#ifndef PATHWARDEN_SRC_TRACE_DECODE_H_
#define PATHWARDEN_SRC_TRACE_DECODE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "pathwarden/request.h"
#include "src/trace/tracer.h"

namespace pathwarden::trace {

// Decoded
//
// kRequest: `request` is what the model evaluates; its Fd fields are the
// tracee's numbers, and `fds` lists them (the dirfd, the fd) so that the
// caller makes the model's process hold the same files. `abs_fd`: a
// second directory fd the model's request has no room for (linkat's and
// renameat's new dirfd), or the fd an fd-only call acts on (fchmod,
// fchown, futimens): the caller makes the path absolute through it.
// kSignal/kConnectAbstract/kBind/kConnect carry what the caller resolves
// (the target, the socket). kCred: at its exit, the credentials are read
// again. kLandlock*, kExec: the model follows them at the exit.
// kSkip: nothing the model decides (fstat through AT_EMPTY_PATH, a UDP
// connect, ...), with `why`. kUnknown: the model cannot say, with `why`.
struct Decoded {
  enum class Kind : uint8_t {
    kRequest,
    kSignal,
    kBind,
    kConnect,
    kCred,
    kLandlockCreate,
    kLandlockAddRule,
    kLandlockRestrict,
    kDup,  // fd: the descriptor copied; open_flags: O_CLOEXEC for the copy
    kSkip,
    kUnknown,
  };
  Kind kind = Kind::kSkip;
  std::string call;  // "openat"
  Request request;
  int dirfd = -100;   // AT_FDCWD, or the fd the request's dirfd names
  int fd = -1;        // the fd the request acts on (ftruncate, ioctl, fchdir)
  int abs_fd = -100;  // see above; -100: none
  bool abs_second = false;  // abs_fd anchors path2 (linkat, renameat) rather than path
  std::string why;
  // kSignal: the target thread (tid) or process; kBind/kConnect: the
  // socket fd, the family, the port or abstract name.
  int64_t target = 0;
  bool thread_target = false;
  int family = 0;
  uint32_t port = 0;
  std::string abstract_name;  // AF_UNIX, abstract
  std::string unix_path;      // AF_UNIX, named
  // kExec: the program (for its interpreter).
  bool exec = false;
  // kLandlock*: the raw attributes.
  uint64_t ll_handled_fs = 0, ll_handled_net = 0, ll_scoped = 0;
  uint64_t ll_access = 0;
  int ll_parent_fd = -1;
  uint64_t ll_port = 0;
  int ll_rule_type = 0;
  int ll_ruleset_fd = -1;
  // For opens: the flags (O_CLOEXEC for the fd table).
  uint64_t open_flags = 0;
};

// Decode()
//
// `s` at its entry, its strings and structures read from `m`.
Decoded Decode(const Stop& s, const Memory& m);

// SyscallName()
//
// "openat" for 257 (x86_64), "syscall_N" for one not traced.
std::string SyscallName(long nr);

}  // namespace pathwarden::trace

#endif  // PATHWARDEN_SRC_TRACE_DECODE_H_
