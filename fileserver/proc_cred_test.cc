#include "fileserver/proc_cred.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "src/identity/identity.h"

namespace pathwarden::fileserver {
namespace {

void ExpectSame(const Cred& a, const Cred& b) {
  EXPECT_EQ(a.ruid, b.ruid);
  EXPECT_EQ(a.euid, b.euid);
  EXPECT_EQ(a.suid, b.suid);
  EXPECT_EQ(a.fsuid, b.fsuid);
  EXPECT_EQ(a.rgid, b.rgid);
  EXPECT_EQ(a.egid, b.egid);
  EXPECT_EQ(a.sgid, b.sgid);
  EXPECT_EQ(a.fsgid, b.fsgid);
  EXPECT_EQ(a.cap_effective, b.cap_effective);
  EXPECT_EQ(a.cap_permitted, b.cap_permitted);
  EXPECT_EQ(a.umask, b.umask);
  EXPECT_EQ(std::vector<uint32_t>(a.groups().begin(), a.groups().end()),
            std::vector<uint32_t>(b.groups().begin(), b.groups().end()));
}

TEST(ProcCred, ReadsWhatIdentityReads) {
  auto fast = ReadCred(gettid());
  auto slow = identity::ReadCred("/proc/self/status");
  ASSERT_TRUE(fast) << fast.error();
  ASSERT_TRUE(slow) << slow.error();
  ExpectSame(*fast, *slow);
}

// HeldChild
//
// A forked child that runs `setup`, then stays (its credentials there to
// be read) until the object goes; ready() says whether `setup` held.
class HeldChild {
 public:
  explicit HeldChild(const std::function<bool()>& setup) {
    if (pipe(go_) != 0 || pipe(done_) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      char c = setup() ? 1 : 0;
      (void)!write(go_[1], &c, 1);
      (void)!read(done_[0], &c, 1);
      _exit(0);
    }
    char c = 0;
    ready_ = pid_ > 0 && read(go_[0], &c, 1) == 1 && c == 1;
  }
  ~HeldChild() {
    if (pid_ > 0) {
      const char c = 0;
      (void)!write(done_[1], &c, 1);
      waitpid(pid_, nullptr, 0);
    }
    for (int fd : {go_[0], go_[1], done_[0], done_[1]})
      if (fd >= 0) close(fd);
  }
  HeldChild(const HeldChild&) = delete;
  HeldChild& operator=(const HeldChild&) = delete;
  pid_t pid() const { return pid_; }
  bool ready() const { return ready_; }

 private:
  int go_[2] = {-1, -1}, done_[2] = {-1, -1};
  pid_t pid_ = -1;
  bool ready_ = false;
};

// A child with other ids, groups, no capabilities and another umask:
// both readers agree on it too (as root; else skipped).
TEST(ProcCred, ReadsAnotherTask) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to change ids";
  HeldChild child([] {
    const gid_t groups[] = {2000, 27, 100};
    umask(027);
    return setgroups(3, groups) == 0 && setresgid(1000, 1001, 1002) == 0 &&
           setresuid(1003, 1004, 1005) == 0;
  });
  ASSERT_TRUE(child.ready());
  auto fast = ReadCred(child.pid());
  auto slow = identity::ReadCred("/proc/" + std::to_string(child.pid()) + "/status");
  ASSERT_TRUE(fast) << fast.error();
  ASSERT_TRUE(slow) << slow.error();
  ExpectSame(*fast, *slow);
  EXPECT_EQ(fast->euid, 1004u);
  EXPECT_EQ(fast->fsgid, 1001u);  // setresgid() sets the fs id to the effective
  EXPECT_EQ(fast->fsuid, 1004u);
  EXPECT_EQ(fast->umask, 027u);
  EXPECT_EQ(fast->groups().size(), 3u);
  EXPECT_EQ(fast->cap_effective, 0u);
}

// A caller in the initial user namespace has none (Cred::userns null); a
// child in a user namespace of its own, mapped "0 1000 1", is read with
// that namespace's maps, as one the server reads from outside.
TEST(ProcCred, ReadsTheUserNamespace) {
  auto self = ReadCred(gettid());
  ASSERT_TRUE(self) << self.error();
  EXPECT_EQ(self->userns, nullptr);
  if (geteuid() != 0) GTEST_SKIP() << "needs root to write another namespace's maps";
  HeldChild child([] { return unshare(CLONE_NEWUSER) == 0; });
  if (!child.ready()) GTEST_SKIP() << "no user namespaces here";
  auto write_map = [&](const char* file, const std::string& text) {
    const std::string path = "/proc/" + std::to_string(child.pid()) + "/" + file;
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    const bool ok = fd >= 0 &&
                    write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (fd >= 0) close(fd);
    return ok;
  };
  ASSERT_TRUE(write_map("uid_map", "0 1000 1\n") && write_map("setgroups", "deny") &&
              write_map("gid_map", "0 1000 1\n"));
  auto read = ReadCred(child.pid());
  ASSERT_TRUE(read) << read.error();
  ASSERT_NE(read->userns, nullptr);
  EXPECT_EQ(read->userns->Describe(), "uid_map 0 1000 1; gid_map 0 1000 1");
  EXPECT_FALSE(read->userns->reader_inside);
  EXPECT_FALSE(read->userns->overflow_shown);
  EXPECT_TRUE(read->userns->MapsUid(0));
  EXPECT_FALSE(read->userns->MapsUid(1));
}

TEST(ProcCred, NoSuchTask) { EXPECT_FALSE(ReadCred(0x3fffffff)); }

}  // namespace
}  // namespace pathwarden::fileserver
