// Where the probe's child is forked from: this thread's lean server, one
// per namespace, and a guardian that waits for the child as for one of
// this process's own.

#include "src/kernel/probe_child.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "src/kernel/child_test_util.h"
#include "src/kernel/guardian.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/kernel_test_util.h"
#include "src/kernel/scratch_host.h"

namespace pathwarden::kernel_internal {
namespace {

using kernel_testing::InForkedChild;
using kernel_testing::KernelTest;

class ProbeChildTest : public KernelTest {};

Cred Root() {
  Cred c = Cred::ForUser(0, 0);
  c.cap_effective = c.cap_permitted = AvailableCaps();
  return c;
}

std::string Answer(const Result<std::vector<int>, std::string>& r) {
  if (!r) return "error: " + r.error();
  return (*r)[0] == 0 ? "ok" : ErrnoName((*r)[0]);
}

// A server spawned in one mount namespace must not answer for another: the
// file exists only in the second.
TEST_F(ProbeChildTest, ANewMountNamespaceGetsANewServer) {
  const std::string out = InForkedChild([]() -> std::string {
    if (std::string e = EnterPrivateMountNamespace(); !e.empty()) return e;
    char dir[] = "/tmp/pathwarden-probe-ns.XXXXXX";
    if (mkdtemp(dir) == nullptr) return "mkdtemp failed";
    const std::string file = std::string(dir) + "/f";
    const std::vector<pathwarden::Request> stat{Stat{.path = file}};
    // The first probe forks here; the next ones go through the server.
    std::string report = Answer(ProbeHost({Root()}, stat));
    report += ProbeServerForTesting() < 0 ? " here" : " server";
    report += " " + Answer(ProbeHost({Root()}, stat));
    const pid_t first = ProbeServerForTesting();
    report += first > 0 && first != getpid() ? " server" : " here";
    report += " " + Answer(ProbeHost({Root()}, stat));
    report += ProbeServerForTesting() == first ? " same" : " another";
    if (unshare(CLONE_NEWNS) != 0 || mount("tmpfs", dir, "tmpfs", 0, "mode=0755") != 0) {
      rmdir(dir);
      return report + " mount failed";
    }
    const int fd = open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    report += " " + Answer(ProbeHost({Root()}, stat));
    const pid_t second = ProbeServerForTesting();
    report += second > 0 && second != first ? " another" : " same";
    umount2(dir, MNT_DETACH);
    rmdir(dir);
    return report;
  });
  EXPECT_EQ(out, "ENOENT here ENOENT server ENOENT same ok another");
}

// The child holds this process's guardians' pipes: a guardian woken by its
// holder waits until the child has exited, as it would for a child forked
// here. The child is kept from exiting by a pipe it fills (more answers
// than a pipe holds).
TEST_F(ProbeChildTest, AGuardianWaitsForTheChild) {
  const std::string out = InForkedChild([]() -> std::string {
    // The first child is forked here, the second by the server.
    std::string report;
    for (int round = 0; round < 2; ++round) {
      if (round > 0) report += "; ";
      auto guardian = Guardian::Start({}, [] { return 7; });
      if (!guardian) return report + "guardian: " + guardian.error();
      ProbeJob job;
      job.cred = Root();
      job.steps.resize(4000);
      for (StepSpec& st : job.steps) {
        st.op = Op::kStat;
        st.path = "/";
      }
      auto child = ProbeChild::Start(job);
      if (!child) return report + "start: " + child.error();
      report += ProbeServerForTesting() > 0 ? "server" : "here";
      guardian->Wake();
      // Woken: only the child's copy of the pipe keeps the guardian waiting.
      bool ran = false;
      for (int i = 0; i < 20 && !ran; ++i) {
        usleep(10000);
        ran = waitpid(guardian->pid(), nullptr, WNOHANG) != 0;
      }
      report += ran ? " guardian ran" : " guardian waits";
      size_t answers = 0;
      ChildMessage m;
      size_t got = 0;
      for (;;) {
        const ssize_t n = read(child->out(), reinterpret_cast<char*>(&m) + got, sizeof(m) - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
        if (got < sizeof(m)) continue;
        got = 0;
        answers += m.kind == ChildMessage::kAnswer && m.err == 0;
      }
      auto status = child->Wait();
      report += fmt::format(" {} answers", answers);
      if (!status) return report + " wait: " + status.error();
      report += WIFEXITED(*status) && WEXITSTATUS(*status) == 0 ? " exit 0" : " failed";
      if (!ran) {
        const int g = guardian->Finish();
        report += WIFEXITED(g) ? fmt::format(" guardian exit {}", WEXITSTATUS(g)) : " guardian?";
      }
    }
    return report;
  });
  EXPECT_EQ(out,
            "here guardian waits 4000 answers exit 0 guardian exit 7; "
            "server guardian waits 4000 answers exit 0 guardian exit 7");
}

}  // namespace
}  // namespace pathwarden::kernel_internal
