// The C API on the live host (include/pathwarden/pathwarden.h): a host
// model and a running process, a file nothing runs, an overlay's layers
// in a check, a pid whose cwd the model lacks.

#include "pathwarden/pathwarden.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "src/base/scratch_dir_test_util.h"
#include "src/capi/capi_test_util.h"

namespace {

using pathwarden::capi_testing::LastError;

TEST(CapiHost, TheLiveHostAndAPid) {
  pathwarden_model* m = nullptr;
  ASSERT_EQ(pathwarden_model_from_host(&m, nullptr, PATHWARDEN_SNAPSHOT, 0), 0) << LastError();
  pathwarden_process* self = nullptr;
  ASSERT_EQ(pathwarden_process_from_pid(m, getpid(), &self, 0), 0) << LastError();
  pathwarden_decision* d = nullptr;
  ASSERT_EQ(pathwarden_ask_line(self, "stat /", &d, 0), 0);
  EXPECT_EQ(pathwarden_decision_verdict(d), PATHWARDEN_ALLOWED);
  pathwarden_decision_free(d);
  // /proc/self names the asking task: unknown, and why; never an errno
  // of 0.
  ASSERT_EQ(pathwarden_ask_line(self, "stat /proc/self/status", &d, 0), 0);
  EXPECT_EQ(pathwarden_decision_verdict(d), PATHWARDEN_UNKNOWN);
  EXPECT_EQ(pathwarden_decision_errno(d), -ENODATA);
  EXPECT_STREQ(pathwarden_decision_result(d), "unknown");
  EXPECT_STRNE(pathwarden_decision_unknown_why(d), "");
  // The walk's check of /proc is granted; /proc/self, which names the
  // asking task, is not followed.
  EXPECT_NE(std::string(pathwarden_decision_unknown_why(d)).find("/proc/self"), std::string::npos);
  const int n = pathwarden_decision_component_count(d);
  ASSERT_GE(n, 2);
  pathwarden_check proc{};
  ASSERT_EQ(pathwarden_decision_component(d, static_cast<size_t>(n - 1), &proc, 0), 0);
  EXPECT_STREQ(proc.path, "/proc");
  EXPECT_EQ(proc.granted, 1) << proc.decided_by;
  pathwarden_decision_free(d);
  // Credentials given, on the host: a user may not read /etc/shadow when
  // it is not world-readable (Debian: 0640 root:shadow).
  struct stat st;
  if (stat("/etc/shadow", &st) == 0 && (st.st_mode & 04) == 0) {
    pathwarden_cred c{65534, 65534, nullptr, 0, 0, 022};
    pathwarden_process* nobody = nullptr;
    ASSERT_EQ(pathwarden_process_new(m, "nobody", &c, &nobody, 0), 0);
    ASSERT_EQ(pathwarden_ask_line(nobody, "open /etc/shadow", &d, 0), 0);
    EXPECT_EQ(pathwarden_decision_errno(d), EACCES);
    EXPECT_STREQ(pathwarden_decision_stage(d), "dac");
    pathwarden_decision_free(d);
    pathwarden_process_free(nobody);
  }
  pathwarden_process* none = nullptr;
  EXPECT_EQ(pathwarden_process_from_pid(m, 0x3fffffff, &none, 0), -ESRCH);
  EXPECT_EQ(pathwarden_process_from_pid(m, -4, &none, 0), -EINVAL);
  EXPECT_EQ(pathwarden_process_from_pid(m, getpid(), &none, 1), -EINVAL);
  pathwarden_process_free(self);
  pathwarden_model_free(m);

  ASSERT_EQ(pathwarden_model_from_host(&m, "/proc/self/mountinfo", PATHWARDEN_REVALIDATE, 0), 0);
  pathwarden_model_free(m);
  EXPECT_EQ(pathwarden_model_from_host(&m, "/nonexistent/mountinfo", PATHWARDEN_SNAPSHOT, 0), -EIO);
  EXPECT_NE(LastError(), "");
  EXPECT_EQ(pathwarden_model_from_host(&m, nullptr, 2, 0), -EINVAL);
  EXPECT_EQ(pathwarden_model_from_host(&m, nullptr, PATHWARDEN_SNAPSHOT, 2), -EINVAL);
  EXPECT_EQ(pathwarden_model_from_host(nullptr, nullptr, PATHWARDEN_SNAPSHOT, 0), -EINVAL);
}

// A file with an execute bit that no process can be running (a scratch
// directory's own): with PATHWARDEN_HOST_ASSUME_UNSEEN_RUN_NOTHING,
// writing it is answered whatever processes this reader cannot see.
TEST(CapiHost, WritingAFileNothingRunsIsAnsweredWhenAssumed) {
  const pathwarden::base_testing::ScratchDir dir("pathwarden-capi-exec");
  ASSERT_TRUE(dir.Write("tool", "#!/bin/sh\n"));
  ASSERT_EQ(chmod(dir.Path("tool").c_str(), 0755), 0);
  pathwarden_model* m = nullptr;
  ASSERT_EQ(pathwarden_model_from_host(&m, nullptr, PATHWARDEN_SNAPSHOT,
                                       PATHWARDEN_HOST_ASSUME_UNSEEN_RUN_NOTHING),
            0)
      << LastError();
  pathwarden_process* self = nullptr;
  ASSERT_EQ(pathwarden_process_from_pid(m, getpid(), &self, 0), 0) << LastError();
  pathwarden_decision* d = nullptr;
  ASSERT_EQ(pathwarden_ask_line(self, ("open " + dir.Path("tool") + " O_WRONLY").c_str(), &d, 0),
            0);
  const int fd = open(dir.Path("tool").c_str(), O_WRONLY | O_CLOEXEC);
  const int kernel = fd < 0 ? errno : 0;
  if (fd >= 0) close(fd);
  EXPECT_NE(pathwarden_decision_verdict(d), PATHWARDEN_UNKNOWN)
      << pathwarden_decision_unknown_why(d);
  EXPECT_EQ(pathwarden_decision_errno(d), kernel) << pathwarden_decision_reason(d);
  pathwarden_decision_free(d);
  pathwarden_process_free(self);
  pathwarden_model_free(m);
}

// On an overlay, a check names the layers that hold its object, as
// explain's walk table does: a lower file, an upper one, a merged
// directory. In a child, in a private mount namespace; root only.
TEST(CapiHost, AChecksLayerOnAnOverlay) {
  if (geteuid() != 0) GTEST_SKIP() << "not root";
  const pathwarden::base_testing::ScratchDir dir("pathwarden-capi-ovl");
  for (const char* d : {"lower", "lower/d", "upper", "upper/d", "work", "m"})
    ASSERT_EQ(mkdir(dir.Path(d).c_str(), 0755), 0) << d;
  ASSERT_TRUE(dir.Write("lower/d/low", "x"));
  ASSERT_TRUE(dir.Write("upper/d/up", "x"));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // 0: every check as expected; 2: no overlay here; others: a failure.
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      _exit(3);
    const std::string opts = "lowerdir=" + dir.Path("lower") + ",upperdir=" + dir.Path("upper") +
                             ",workdir=" + dir.Path("work");
    if (mount("overlay", dir.Path("m").c_str(), "overlay", 0, opts.c_str()) != 0) _exit(2);
    pathwarden_model* m = nullptr;
    pathwarden_process* self = nullptr;
    if (pathwarden_model_from_host(&m, nullptr, PATHWARDEN_SNAPSHOT, 0) != 0 ||
        pathwarden_process_from_pid(m, getpid(), &self, 0) != 0)
      _exit(4);
    auto layer_of = [&](const std::string& path) {
      pathwarden_decision* d = nullptr;
      std::string got = "(no check)";
      pathwarden_check c{};
      if (pathwarden_ask_line(self, ("access " + path + " R_OK|AT_EACCESS").c_str(), &d, 0) == 0 &&
          pathwarden_decision_dac(d, &c, 0) == 0)
        got = c.layer;
      pathwarden_decision_free(d);
      return got;
    };
    int rc = 0;
    if (layer_of(dir.Path("m/d/low")) != "lower 1") rc = 5;
    if (layer_of(dir.Path("m/d/up")) != "upper") rc = 6;
    if (layer_of(dir.Path("m/d")) != "upper + lower 1") rc = 7;
    pathwarden_process_free(self);
    pathwarden_model_free(m);
    _exit(rc);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "no overlayfs here";
  // 5, 6, 7: the lower file, the upper file, the merged directory.
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(CapiHost, APidInAModelWithoutItsCwd) {
  // A model built from nothing has no /work: the pid's cwd does not
  // resolve there.
  pathwarden_model* m = nullptr;
  ASSERT_EQ(pathwarden_model_new(&m, 0, 0), 0);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  pathwarden_process* p = nullptr;
  if (std::string(cwd) != "/") {
    EXPECT_EQ(pathwarden_process_from_pid(m, getpid(), &p, 0), -ENOENT);
    EXPECT_NE(LastError().find("working directory"), std::string::npos) << LastError();
  }
  pathwarden_model_free(m);
}

// pathwarden_apply() answers as pathwarden_ask() does, security modules
// included (whatever they are on this machine: as uid 65534, which cannot
// read which BPF LSM programs are attached, an active BPF LSM makes both
// unknown; before, apply said allowed). In a child that drops to 65534.
TEST(CapiHost, ApplyAnswersAsAskDoes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to become uid 65534)";
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipefd[0]);
    std::string out;
    pathwarden_model* m = nullptr;
    pathwarden_process* p = nullptr;
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0 || chdir("/") != 0) {
      out = "could not become uid 65534";
    } else if (pathwarden_model_from_host(&m, nullptr, PATHWARDEN_SNAPSHOT, 0) != 0 ||
               pathwarden_process_from_pid(m, getpid(), &p, 0) != 0) {
      out = "host: " + LastError();
    } else {
      for (int op : {PATHWARDEN_OP_STAT, PATHWARDEN_OP_ACCESS, PATHWARDEN_OP_OPEN}) {
        pathwarden_request r;
        pathwarden_request_init(&r, op);
        r.path = "/etc/passwd";
        pathwarden_decision* asked = nullptr;
        pathwarden_decision* applied = nullptr;
        if (pathwarden_ask(p, &r, 0, &asked, 0) != 0 || pathwarden_apply(p, &r, 0, &applied, 0) != 0) {
          out += "ask/apply failed: " + LastError() + "\n";
          continue;
        }
        if (pathwarden_decision_verdict(asked) != pathwarden_decision_verdict(applied) ||
            pathwarden_decision_errno(asked) != pathwarden_decision_errno(applied))
          out += std::string("op ") + std::to_string(op) + ": ask " +
                 pathwarden_decision_result(asked) + ", apply " +
                 pathwarden_decision_result(applied) + "\n";
        pathwarden_decision_free(asked);
        pathwarden_decision_free(applied);
      }
    }
    (void)!write(pipefd[1], out.data(), out.size());
    _exit(0);
  }
  close(pipefd[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(got, "");
}

}  // namespace
