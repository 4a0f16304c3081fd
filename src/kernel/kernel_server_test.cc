// The session's lean server: it answers as the direct path does, and
// leaves no process behind.

#include "src/kernel/kernel_server.h"
#include "src/kernel/kernel_test_util.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "src/kernel/kernel_session.h"

namespace pathwarden::kernel_internal {
namespace {

// Processes whose parent is this one (from /proc/<pid>/stat).
std::vector<pid_t> Children() {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string path = "/proc/" + std::string(e->d_name) + "/stat";
    FILE* f = std::fopen(path.c_str(), "re");
    if (f == nullptr) continue;
    int ppid = 0;
    // pid (comm) state ppid: comm has no ')' in ours.
    if (std::fscanf(f, "%*d (%*[^)]) %*c %d", &ppid) == 1 && ppid == getpid()) out.push_back(pid);
    std::fclose(f);
  }
  closedir(d);
  return out;
}

class KernelServerTest : public kernel_testing::KernelTest {};

constexpr std::string_view kScenarios[] = {
    R"(format = 1
[[node]]
path = "/a/f"
mode = 0o600
[[process]]
name = "u"
uid = 1000
[[process.layer]]
handled_fs = ["read_dir"]
rule = [{ path = "/a", access = ["read_dir"] }]
[[step]]
as = "u"
op = "open"
path = "/a/f"
expect = "EACCES"
[[step]]
as = "u"
op = "open"
path = "/"
flags = "O_DIRECTORY"
expect = "EACCES"
)",
    R"(format = 1
[[process]]
name = "p"
[[process.layer]]
handled_fs = ["read_file"]
rule = [{ path = "/nope", access = ["read_file"] }]
)",
    R"(format = 1
[[node]]
path = "/f"
[[node]]
path = "/f/g"
)",
};

TEST_F(KernelServerTest, AnswersAsTheDirectPathDoes) {
  std::vector<Scenario> scenarios;
  for (std::string_view text : kScenarios) {
    scenarios.push_back(kernel_testing::Parse(text));
  }
  KernelOptions o;
  o.capture_tree = true;
  std::vector<RunResult> via_server;
  {
    // Sessions serialize on the sysctl lock: this one ends before
    // RunInKernel() opens its own.
    auto session = KernelSession::Open(KernelSession::Launch::kServer);
    ASSERT_TRUE(session.has_value()) << session.error();
    for (const Scenario& s : scenarios) via_server.push_back((*session)->Run(s, o));
    EXPECT_EQ((*session)->launch(), KernelSession::Launch::kServer)
        << (*session)->fallback_reason();
  }
  for (size_t n = 0; n < scenarios.size(); ++n) {
    RunResult direct = RunInKernel(scenarios[n], o);
    const RunResult& served = via_server[n];
    EXPECT_EQ(served.status, direct.status) << kScenarios[n];
    EXPECT_EQ(served.message, direct.message) << kScenarios[n];
    ASSERT_EQ(served.steps.size(), direct.steps.size()) << kScenarios[n];
    for (size_t i = 0; i < direct.steps.size(); ++i)
      EXPECT_EQ(served.steps[i].err, direct.steps[i].err) << kScenarios[n] << " step " << i + 1;
    EXPECT_EQ(served.tree, direct.tree) << kScenarios[n];
  }
}

TEST_F(KernelServerTest, LeavesNoProcessBehind) {
  ASSERT_TRUE(Children().empty());
  {
    // The scenario's sysctls, as a session would set them.
    auto guard = SysctlGuard::Acquire();
    ASSERT_TRUE(guard.has_value()) << guard.error();
    ASSERT_EQ((*guard)->Set(Sysctls{}), "");
    auto server = KernelServer::Spawn();
    ASSERT_TRUE(server.has_value()) << server.error();
    const Scenario s = kernel_testing::Parse(kScenarios[0]);
    SupervisorParams params;
    params.mount_dir = std::string(kStateDir) + "/root";
    mkdir(params.mount_dir.c_str(), 0755);
    params.caps_available = AvailableCaps();
    for (int i = 0; i < 5; ++i) {
      RunResult r = (*server)->Run(s, KernelOptions{}, params);
      EXPECT_EQ(r.status, RunResult::Status::kRan) << r.message;
    }
    // The server, and the sysctl guardian while the values differ from
    // the host's.
    EXPECT_EQ(Children().size(), (*guard)->guardian() > 0 ? 2u : 1u);
  }
  EXPECT_TRUE(Children().empty());
}

}  // namespace
}  // namespace pathwarden::kernel_internal
