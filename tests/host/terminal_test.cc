// /dev/tty on the live host: a process without a controlling terminal is
// refused its open with ENXIO once every permission check passed
// (tty_open_current_tty()); one with a terminal is answered by that
// terminal's driver (unknown). Each case is a child in a session of its
// own, with and without a pseudo-terminal made its controlling terminal,
// against what the kernel answers it; and ReadControllingTty() of it
// (its parsing: src/identity/identity_test.cc).

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/identity/identity.h"

namespace pathwarden {
namespace {

// A child in a session of its own (setsid()), with the slave of a new
// pseudo-terminal as its controlling terminal when `with_tty`; it tells
// the kernel's answer to open("/dev/tty", O_RDWR) (0 or the errno) and
// waits until told to end, so that its /proc/PID/stat can be read.
class SessionChild {
 public:
  explicit SessionChild(bool with_tty) {
    int master = -1;
    std::string slave;
    if (with_tty) {
      master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
      if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return;
      slave = ptsname(master);
    }
    int report[2], go[2];
    if (pipe2(report, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(report[0]);
      close(go[1]);  // the parent's closing it is the end
      int err = 0;
      if (setsid() < 0) err = -1;
      // A session leader's first terminal opened without O_NOCTTY becomes
      // its controlling terminal.
      if (err == 0 && with_tty && open(slave.c_str(), O_RDWR) < 0) err = -2;
      if (err == 0) {
        const int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
        err = fd < 0 ? errno : 0;
      }
      (void)!write(report[1], &err, sizeof err);
      char b;
      (void)!read(go[0], &b, 1);
      _exit(0);
    }
    close(report[1]);
    close(go[0]);
    go_ = go[1];
    if (read(report[0], &kernel_, sizeof kernel_) != sizeof kernel_) kernel_ = -3;
    close(report[0]);
    if (master >= 0) master_ = master;
  }
  ~SessionChild() {
    if (go_ >= 0) close(go_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    if (master_ >= 0) close(master_);
  }
  pid_t pid() const { return pid_; }
  int kernel() const { return kernel_; }  // <0: the child could not set up

 private:
  pid_t pid_ = -1;
  int go_ = -1;
  int master_ = -1;
  int kernel_ = -4;
};

// Root (the security modules that could refuse are then known: the BPF
// LSM's programs take CAP_SYS_ADMIN to read, and allowed answers stay
// so), and a /dev/tty.
class TerminalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    struct stat sb;
    if (stat("/dev/tty", &sb) != 0 || !S_ISCHR(sb.st_mode) || sb.st_rdev != makedev(5, 0))
      GTEST_SKIP() << "no /dev/tty (char 5:0) here";
    HostOptions o;
    o.assume_unseen_run_nothing = true;
    auto m = Model::FromHost(o);
    ASSERT_TRUE(m) << m.error();
    model_.emplace(std::move(*m));
  }
  std::optional<Model> model_;
};

TEST_F(TerminalTest, DevTtyWithoutAControllingTerminalIsEnxio) {
  SessionChild none(false);
  ASSERT_GT(none.pid(), 0);
  ASSERT_EQ(none.kernel(), ENXIO);
  EXPECT_EQ(identity::ReadControllingTty(fmt::format("/proc/{}/stat", none.pid())), false);
  Model* m = &*model_;
  Process p = m->Spawn("p", Cred::ForUser(0, 0));
  // Not said: unknown, saying what decides.
  const Decision unsaid = m->Evaluate(p, Open{.path = "/dev/tty", .flags = O_RDWR});
  EXPECT_TRUE(unsaid.unknown()) << unsaid.ToText();
  EXPECT_NE(unsaid.reason().unknown_why.find("ENXIO if not"), std::string::npos)
      << unsaid.reason().unknown_why;
  ASSERT_TRUE(m->SetControllingTty(p, false));
  const Decision d = m->Evaluate(p, Open{.path = "/dev/tty", .flags = O_RDWR});
  EXPECT_EQ(d.err(), ENXIO) << d.ToText();
  EXPECT_EQ(d.stage(), Stage::kVfs);
  // A fork keeps it; O_PATH opens no driver.
  Process child = m->Fork(p, "child");
  EXPECT_EQ(m->Evaluate(child, Open{.path = "/dev/tty", .flags = O_RDONLY}).err(), ENXIO);
  EXPECT_TRUE(m->Evaluate(child, Open{.path = "/dev/tty", .flags = O_PATH}).allowed());
  // The permission checks come first: a Landlock layer that does not
  // grant writing refuses with EACCES before the driver is asked.
  LandlockRuleset rs;
  rs.handled_access_fs = landlock::kFsWriteFile;
  ASSERT_TRUE(m->Apply(child, Restrict{rs}).allowed());
  const Decision ll = m->Evaluate(child, Open{.path = "/dev/tty", .flags = O_RDWR});
  EXPECT_EQ(ll.err(), EACCES);
  EXPECT_EQ(ll.stage(), Stage::kLandlock);
}

TEST_F(TerminalTest, DevTtyWithAControllingTerminalIsItsDriversAnswer) {
  SessionChild with(true);
  ASSERT_GT(with.pid(), 0);
  if (with.kernel() < 0) GTEST_SKIP() << "no pseudo-terminal could be made the child's (" << with.kernel() << ")";
  EXPECT_EQ(with.kernel(), 0);
  EXPECT_EQ(identity::ReadControllingTty(fmt::format("/proc/{}/stat", with.pid())), true);
  Model* m = &*model_;
  Process p = m->Spawn("p", Cred::ForUser(0, 0));
  ASSERT_TRUE(m->SetControllingTty(p, true));
  const Decision d = m->Evaluate(p, Open{.path = "/dev/tty", .flags = O_RDWR});
  EXPECT_TRUE(d.unknown()) << d.ToText();
  EXPECT_NE(d.reason().unknown_why.find("controlling terminal: its driver answers"),
            std::string::npos)
      << d.reason().unknown_why;
}

}  // namespace
}  // namespace pathwarden
