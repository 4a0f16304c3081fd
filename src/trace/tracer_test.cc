// The tracer on real children, and the decoder on this process's own
// memory: each stop seen, each call read as the model's request.

#include "src/trace/tracer.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "src/trace/decode.h"

namespace pathwarden::trace {
namespace {

// Records every entry and exit, by call name.
class Recorder : public Observer {
 public:
  bool Entry(const Stop& s, const Memory& m) override {
    Decoded d = Decode(s, m);
    entries.push_back(d.call);
    if (d.kind == Decoded::Kind::kRequest && std::holds_alternative<Open>(d.request))
      opened.insert(std::get<Open>(d.request).path);
    return true;
  }
  void Exit(const Stop& s, const Memory&) override { exits[SyscallName(s.nr)].push_back(s.ret); }
  void NewThread(pid_t tid, pid_t, pid_t parent, bool thread) override {
    threads.push_back({tid, parent, thread});
  }
  void Gone(pid_t tid) override { gone.insert(tid); }

  struct T {
    pid_t tid, parent;
    bool thread;
  };
  std::vector<std::string> entries;
  std::set<std::string> opened;
  std::map<std::string, std::vector<long>> exits;
  std::vector<T> threads;
  std::set<pid_t> gone;
};

TEST(Tracer, SeesTheCallsOfAChildAndItsChildrenWithTheirResults) {
  Recorder r;
  TraceOptions o;
  o.argv = {"/bin/sh", "-c",
            "cat /etc/hostname >/dev/null; ls /nonexistent-pathwarden 2>/dev/null; exit 3"};
  auto status = RunTraced(o, r);
  ASSERT_TRUE(status) << status.error();
  EXPECT_EQ(*status, 3);
  EXPECT_TRUE(r.opened.count("/etc/hostname"));
  // sh, and the two children it forked (each then exec'd).
  int processes = 0;
  for (const auto& t : r.threads) processes += !t.thread;
  EXPECT_GE(processes, 3);
  EXPECT_EQ(r.gone.size(), r.threads.size());
  // ls's lstat/statx of the missing path failed with ENOENT at its exit.
  bool enoent = false;
  for (const char* c : {"statx", "newfstatat", "lstat", "stat"})
    for (long ret : r.exits[c]) enoent |= ret == -ENOENT;
  EXPECT_TRUE(enoent);
  // The execve of each program, its exit seen after the new image.
  EXPECT_GE(r.exits["execve"].size(), 3u);
}

TEST(Tracer, ReportsACommandNotFoundAs127) {
  Recorder r;
  TraceOptions o;
  o.argv = {"/nonexistent-pathwarden-command"};
  auto status = RunTraced(o, r);
  ASSERT_TRUE(status) << status.error();
  EXPECT_EQ(*status, 127);
}

TEST(Tracer, ABeforeExecFailureIs125AndRunsNothing) {
  Recorder r;
  TraceOptions o;
  o.argv = {"/bin/true"};
  o.before_exec = [] { return std::string("refused"); };
  auto status = RunTraced(o, r);
  ASSERT_TRUE(status) << status.error();
  EXPECT_EQ(*status, 125);
  EXPECT_TRUE(r.exits["execve"].empty());
}

TEST(Tracer, KilledBySignalIs128PlusIt) {
  Recorder r;
  TraceOptions o;
  o.argv = {"/bin/sh", "-c", "kill -TERM $$"};
  auto status = RunTraced(o, r);
  ASSERT_TRUE(status) << status.error();
  EXPECT_EQ(*status, 128 + SIGTERM);
  EXPECT_FALSE(r.exits["kill"].empty());
}

// The decoder, on stops made up from this process's own memory.
Stop StopOf(long nr, std::initializer_list<uint64_t> args) {
  Stop s;
  s.pid = s.tid = getpid();
  s.nr = nr;
  size_t i = 0;
  for (uint64_t a : args) s.args[i++] = a;
  return s;
}
uint64_t Addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

TEST(Decode, OpenatIsAnOpenFromItsDirfd) {
  const char* path = "a/b";
  Decoded d = Decode(StopOf(SYS_openat, {5, Addr(path), O_WRONLY | O_CREAT, 0640}), Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  const Open& o = std::get<Open>(d.request);
  EXPECT_EQ(o.path, "a/b");
  EXPECT_EQ(o.dirfd.num, 5);
  EXPECT_EQ(o.flags, static_cast<uint64_t>(O_WRONLY | O_CREAT));
  EXPECT_EQ(o.mode, 0640u);
  EXPECT_EQ(d.dirfd, 5);
}

TEST(Decode, NewfstatatWithNofollowIsLstatAndAnEmptyPathIsNothingToCheck) {
  const char* path = "x";
  Decoded d = Decode(StopOf(SYS_newfstatat, {static_cast<uint64_t>(AT_FDCWD), Addr(path), 0,
                                             AT_SYMLINK_NOFOLLOW}),
                     Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  EXPECT_TRUE(std::holds_alternative<Lstat>(d.request));
  const char* empty = "";
  d = Decode(StopOf(SYS_newfstatat, {3, Addr(empty), 0, AT_EMPTY_PATH}), Memory(getpid()));
  EXPECT_EQ(d.kind, Decoded::Kind::kSkip);
}

TEST(Decode, UnlinkatWithRemovedirIsRmdirAndRenameat2KeepsItsFlagsAndSecondDirfd) {
  const char* a = "old";
  const char* b = "new";
  Decoded d = Decode(StopOf(SYS_unlinkat, {7, Addr(a), AT_REMOVEDIR}), Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  EXPECT_TRUE(std::holds_alternative<Rmdir>(d.request));
  d = Decode(StopOf(SYS_renameat2, {7, Addr(a), 8, Addr(b), 1 /* RENAME_NOREPLACE */}),
             Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  const Rename& r = std::get<Rename>(d.request);
  EXPECT_EQ(r.oldpath, "old");
  EXPECT_EQ(r.newpath, "new");
  EXPECT_EQ(r.flags, 1u);
  EXPECT_EQ(d.abs_fd, 8);
  EXPECT_TRUE(d.abs_second);
}

TEST(Decode, SetattrByFdAndFallocateAreTheFdRequests) {
  Decoded d = Decode(StopOf(SYS_fchmod, {5, 0640}), Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  EXPECT_EQ(std::get<Fchmod>(d.request).mode, 0640u);
  EXPECT_EQ(d.fd, 5);
  d = Decode(StopOf(SYS_fchown, {5, 1000, 0xffffffffu}), Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  EXPECT_EQ(std::get<Fchown>(d.request).uid, 1000);
  EXPECT_EQ(std::get<Fchown>(d.request).gid, -1);
  EXPECT_EQ(d.fd, 5);
  d = Decode(StopOf(SYS_utimensat, {6, 0, 0, 0}), Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  EXPECT_FALSE(std::get<Futimens>(d.request).times.has_value());
  EXPECT_EQ(d.fd, 6);
  d = Decode(StopOf(SYS_fallocate, {7, 1, 10, 20}), Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  const Fallocate& f = std::get<Fallocate>(d.request);
  EXPECT_EQ(f.mode, 1u);
  EXPECT_EQ(f.offset, 10u);
  EXPECT_EQ(f.len, 20u);
  EXPECT_EQ(d.fd, 7);
}

TEST(Decode, APathOfPathMaxBytesStaysTooLongAndAnUnreadableOneIsEfault) {
  std::string longer(5000, 'x');
  Decoded d = Decode(StopOf(SYS_open, {Addr(longer.c_str()), O_RDONLY, 0}), Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kRequest);
  EXPECT_EQ(std::get<Open>(d.request).path.size(), 4097u);  // the model answers ENAMETOOLONG
  d = Decode(StopOf(SYS_open, {8, O_RDONLY, 0}), Memory(getpid()));
  EXPECT_EQ(d.kind, Decoded::Kind::kSkip);
  EXPECT_NE(d.why.find("EFAULT"), std::string::npos);
}

TEST(Decode, IoUringAndOtherAbisAreUnknown) {
  Decoded d = Decode(StopOf(SYS_io_uring_setup, {8, 0}), Memory(getpid()));
  EXPECT_EQ(d.kind, Decoded::Kind::kUnknown);
  Stop s = StopOf(0, {});
  s.nr = -2;
  d = Decode(s, Memory(getpid()));
  EXPECT_EQ(d.kind, Decoded::Kind::kUnknown);
}

TEST(Decode, LandlockAddRuleReadsThePackedPathBeneathAttribute) {
  unsigned char attr[12];
  const uint64_t access = 0x4;
  const int32_t fd = 9;
  std::memcpy(attr, &access, 8);
  std::memcpy(attr + 8, &fd, 4);
  Decoded d = Decode(StopOf(445, {4, 1, Addr(attr), 0}), Memory(getpid()));
  ASSERT_EQ(d.kind, Decoded::Kind::kLandlockAddRule);
  EXPECT_EQ(d.ll_ruleset_fd, 4);
  EXPECT_EQ(d.ll_access, 0x4u);
  EXPECT_EQ(d.ll_parent_fd, 9);
}

}  // namespace
}  // namespace pathwarden::trace
