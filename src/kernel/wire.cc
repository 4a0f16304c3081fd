// Messages between the kernel executor's processes: fixed-size requests,
// short replies, descriptors as SCM_RIGHTS, and the encoded RunResult.

#include "src/kernel/wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pathwarden::kernel_internal {
namespace {

struct ReplyHeader {
  int32_t err;
  int32_t value;
};

// Longest reply text; setup messages are one line.
constexpr size_t kMaxText = 4096;

int SendMsg(int sock, const void* data, size_t len, int fd) {
  iovec iov{const_cast<void*>(data), len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  ssize_t n;
  do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno == ECONNRESET ? EPIPE : errno;
  return 0;
}

// Returns the byte count (>= 0) or -errno; 0 bytes means the peer is gone.
ssize_t RecvMsg(int sock, void* data, size_t len, int* fd) {
  iovec iov{data, len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (fd != nullptr) *fd = -1;
  if (n < 0) return errno == ECONNRESET ? -EPIPE : -errno;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int got = -1;
    std::memcpy(&got, CMSG_DATA(c), sizeof(int));
    if (fd != nullptr) *fd = got;
    else close(got);
  }
  return n;
}

class Writer {
 public:
  void U32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U32(uint32_t* v) { return Raw(v, sizeof(*v)); }
  bool U64(uint64_t* v) { return Raw(v, sizeof(*v)); }
  bool Str(std::string* s) {
    uint32_t n = 0;
    if (!U32(&n) || n > in_.size()) return false;
    s->assign(in_.substr(0, n));
    in_.remove_prefix(n);
    return true;
  }
  bool AtEnd() const { return in_.empty(); }

 private:
  bool Raw(void* p, size_t n) {
    if (in_.size() < n) return false;
    std::memcpy(p, in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  std::string_view in_;
};

}  // namespace

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

std::string EncodeResult(const RunResult& r) {
  Writer w;
  w.U32(static_cast<uint32_t>(r.status));
  w.Str(r.message);
  w.U32(static_cast<uint32_t>(r.steps.size()));
  for (const StepResult& s : r.steps) w.U32(static_cast<uint32_t>(s.err));
  w.U32(static_cast<uint32_t>(r.tree.size()));
  for (const TreeEntry& e : r.tree) {
    w.Str(e.path);
    w.Str(e.type);
    w.U32(e.mode);
    w.U32(e.uid);
    w.U32(e.gid);
    w.U32(e.nlink);
    w.U64(e.size);
    w.Str(e.target);
    w.U32(e.rdev_major);
    w.U32(e.rdev_minor);
    w.Str(e.acl);
    w.Str(e.default_acl);
  }
  return w.Take();
}

bool DecodeResult(std::string_view bytes, RunResult* r) {
  Reader in(bytes);
  uint32_t status = 0, n = 0;
  if (!in.U32(&status) || status > 2 || !in.Str(&r->message) || !in.U32(&n))
    return false;
  r->status = static_cast<RunResult::Status>(status);
  r->steps.assign(n, StepResult{});
  for (StepResult& s : r->steps) {
    uint32_t err = 0;
    if (!in.U32(&err)) return false;
    s.err = static_cast<int>(err);
  }
  if (!in.U32(&n)) return false;
  r->tree.assign(n, TreeEntry{});
  for (TreeEntry& e : r->tree) {
    if (!in.Str(&e.path) || !in.Str(&e.type) || !in.U32(&e.mode) ||
        !in.U32(&e.uid) || !in.U32(&e.gid) || !in.U32(&e.nlink) ||
        !in.U64(&e.size) || !in.Str(&e.target) || !in.U32(&e.rdev_major) ||
        !in.U32(&e.rdev_minor) || !in.Str(&e.acl) || !in.Str(&e.default_acl))
      return false;
  }
  return in.AtEnd();
}

}  // namespace pathwarden::kernel_internal
