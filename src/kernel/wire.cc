// Messages between the kernel executor's processes: fixed-size requests,
// short replies, descriptors as SCM_RIGHTS.

#include "src/kernel/wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <vector>

namespace pathwarden::kernel_internal {
namespace {

struct ReplyHeader {
  int32_t err;
  int32_t value;
};

// Longest reply text; setup messages are one line.
constexpr size_t kMaxText = 4096;

int SendMsg(int sock, const void* data, size_t len, std::span<const int> fds) {
  if (fds.size() > kMaxFds) return EINVAL;
  iovec iov{const_cast<void*>(data), len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno == ECONNRESET ? EPIPE : errno;
  return 0;
}

int SendMsg(int sock, const void* data, size_t len, int fd) {
  return SendMsg(sock, data, len, fd >= 0 ? std::span<const int>(&fd, 1) : std::span<const int>());
}

// Returns the byte count (>= 0) or -errno; 0 bytes means the peer is gone.
// The descriptors received (FD_CLOEXEC) are appended to *fds; control data
// cut short (more than kMaxFds) is -EMSGSIZE, its descriptors closed.
ssize_t RecvMsg(int sock, void* data, size_t len, std::vector<int>* fds) {
  iovec iov{data, len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno == ECONNRESET ? -EPIPE : -errno;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds->push_back(fd);
    }
  }
  if (msg.msg_flags & MSG_CTRUNC) {
    for (int fd : *fds) close(fd);
    fds->clear();
    return -EMSGSIZE;
  }
  return n;
}

// The same with at most one descriptor wanted: *fd, or -1 (any others
// are closed).
ssize_t RecvMsg(int sock, void* data, size_t len, int* fd) {
  std::vector<int> fds;
  const ssize_t n = RecvMsg(sock, data, len, &fds);
  if (fd != nullptr) *fd = -1;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (i == 0 && fd != nullptr) {
      *fd = fds[i];
    } else {
      close(fds[i]);
    }
  }
  return n;
}

}  // namespace

int SendFds(int sock, std::span<const int> fds) {
  if (fds.empty()) return EINVAL;
  const char byte = 'F';
  return SendMsg(sock, &byte, 1, fds);
}

int RecvFds(int sock, std::vector<int>* fds) {
  fds->clear();
  char byte = 0;
  const ssize_t n = RecvMsg(sock, &byte, 1, fds);
  if (n < 0) return static_cast<int>(-n);
  if (n == 0) {
    for (int fd : *fds) close(fd);
    fds->clear();
    return EPIPE;
  }
  return 0;
}

int SendRequest(int sock, const Request& r, int fd) {
  return SendMsg(sock, &r, sizeof(r), fd);
}

int RecvRequest(int sock, Request* r, int* fd) {
  ssize_t n = RecvMsg(sock, r, sizeof(*r), fd);
  if (n < 0) return static_cast<int>(-n);
  if (n != sizeof(*r)) return EPIPE;
  return 0;
}

int SendReply(int sock, const Reply& r, int fd) {
  std::string buf(sizeof(ReplyHeader), '\0');
  ReplyHeader h{r.err, r.value};
  std::memcpy(buf.data(), &h, sizeof(h));
  buf.append(r.text.substr(0, kMaxText));
  return SendMsg(sock, buf.data(), buf.size(), fd);
}

int RecvReply(int sock, Reply* r, int* fd, int timeout_ms) {
  pollfd p{sock, POLLIN, 0};
  int ready;
  do ready = poll(&p, 1, timeout_ms);
  while (ready < 0 && errno == EINTR);
  if (ready < 0) return errno;
  if (ready == 0) return ETIMEDOUT;
  char buf[sizeof(ReplyHeader) + kMaxText];
  ssize_t n = RecvMsg(sock, buf, sizeof(buf), fd);
  if (n < 0) return static_cast<int>(-n);
  if (n < static_cast<ssize_t>(sizeof(ReplyHeader))) return EPIPE;
  ReplyHeader h;
  std::memcpy(&h, buf, sizeof(h));
  r->err = h.err;
  r->value = h.value;
  r->text.assign(buf + sizeof(h), static_cast<size_t>(n) - sizeof(h));
  return 0;
}

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int WriteFrame(int fd, std::string_view bytes) {
  uint32_t len = static_cast<uint32_t>(bytes.size());
  std::string out(reinterpret_cast<const char*>(&len), sizeof(len));
  out.append(bytes);
  for (size_t done = 0; done < out.size();) {
    ssize_t n = send(fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = write(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EPIPE;
    done += static_cast<size_t>(n);
  }
  return 0;
}

int ReadFrame(int fd, std::string* bytes, int64_t deadline_ms) {
  std::string in;
  size_t want = sizeof(uint32_t);
  bool have_len = false;
  char buf[65536];
  while (in.size() < want) {
    int64_t left = deadline_ms - NowMs();
    if (left <= 0) return ETIMEDOUT;
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r == 0) return ETIMEDOUT;
    ssize_t n = read(fd, buf, std::min(sizeof(buf), want - in.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == ECONNRESET ? EPIPE : errno;
    if (n == 0) return EPIPE;
    in.append(buf, static_cast<size_t>(n));
    if (!have_len && in.size() == sizeof(uint32_t)) {
      uint32_t len = 0;
      std::memcpy(&len, in.data(), sizeof(len));
      want += len;
      have_len = true;
    }
  }
  bytes->assign(in, sizeof(uint32_t));
  return 0;
}

}  // namespace pathwarden::kernel_internal
