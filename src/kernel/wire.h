// The kernel executor's messages between supervisor and process children:
// SOCK_SEQPACKET pairs, descriptors as SCM_RIGHTS.

#ifndef PATHWARDEN_SRC_KERNEL_WIRE_H_
#define PATHWARDEN_SRC_KERNEL_WIRE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pathwarden::kernel_internal {

// Every child holds the parsed Scenario (it is a fork of the supervisor), so
// a request names a step by index and carries only what the child cannot
// know: the other process's index and pid.
enum class RequestKind : uint32_t {
  kStep,     // run steps[index]
  kSendFd,   // steps[index] is send_fd: reply with the fd attached
  kRecvFd,   // steps[index] is send_fd: hold the attached fd under its name
  kFork,     // start process `index` as a child of this one (fd attached)
};

struct Request {
  RequestKind kind = RequestKind::kStep;
  uint32_t index = 0;
  int32_t peer_index = -1;  // signal, connect_abstract: the target process
  int32_t peer_pid = -1;
};

// The reply to a request, and a process's first message ("ready"): `err` is
// 0 or the errno; `value` a pid where one is due; `text` says why setup
// failed (a full "file:line:col: ..." message).
struct Reply {
  int32_t err = 0;
  int32_t value = 0;
  std::string text;
};

// SendRequest() / RecvRequest() / SendReply() / RecvReply()
//
// One message each; `fd` (>= 0) travels as SCM_RIGHTS. Receivers set *fd
// to the attached descriptor or -1. All return 0 or an errno (EPIPE when
// the peer is gone; ETIMEDOUT after `timeout_ms`, when given).
int SendRequest(int sock, const Request& r, int fd = -1);
int RecvRequest(int sock, Request* r, int* fd);
int SendReply(int sock, const Reply& r, int fd = -1);
int RecvReply(int sock, Reply* r, int* fd, int timeout_ms);

// SendFds() / RecvFds()
//
// Up to kMaxFds descriptors as SCM_RIGHTS on one byte, on a stream that
// otherwise carries frames. RecvFds() sets *fds to those received (with
// FD_CLOEXEC); both return 0 or an errno (EPIPE when the peer is gone).
inline constexpr size_t kMaxFds = 64;
int SendFds(int sock, std::span<const int> fds);
int RecvFds(int sock, std::vector<int>* fds);

// WriteFrame() / ReadFrame()
//
// A length-prefixed message on a stream (pipe or SOCK_STREAM): a scenario
// to run or a result. ReadFrame() returns 0, EPIPE when the writer is gone
// first, or ETIMEDOUT when `deadline_ms` (CLOCK_MONOTONIC) passes.
int WriteFrame(int fd, std::string_view bytes);
int ReadFrame(int fd, std::string* bytes, int64_t deadline_ms);

// NowMs()
//
// CLOCK_MONOTONIC in milliseconds, for deadlines.
int64_t NowMs();

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_WIRE_H_
