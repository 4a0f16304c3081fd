// `pathwarden run` as its users run it: the real binary (PATHWARDEN_BINARY)
// forked and executed in a temp dir, confining /bin/sh children, with its
// exit statuses. Best-effort drops and --hard refusals use the hidden
// --pretend-abi to play an older kernel.
//
//   tmp/
//     ro/f ro/true   read-only (LL_FS_RO), true executable
//     rw/x           read-write (LL_FS_RW)
//     out/g out/true no rule
//     plain          a file without any execute bit

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/base/scratch_dir_test_util.h"

extern char** environ;

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Outcome {
  int status = -1;  // the exit status, or 128 + the signal
  std::string out, err;
};

class RunCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* d : {"ro", "rw", "out"}) std::filesystem::create_directory(dir_ + "/" + d);
    for (const char* f : {"ro/f", "rw/x", "out/g", "plain"}) {
      std::ofstream(dir_ + "/" + f) << "data\n";
    }
    std::filesystem::copy_file("/bin/true", dir_ + "/ro/true");
    std::filesystem::copy_file("/bin/true", dir_ + "/out/true");
  }
  // pathwarden [GLOBAL...] run ARGS in the temp dir, with the LL_*
  // variables of `env` only (and the rest of this process's environment).
  Outcome Run(const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env = {},
              const std::vector<std::string>& global = {}) {
    std::vector<std::string> envs;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::string(*e).rfind("LL_", 0) != 0) envs.push_back(*e);
    }
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    std::vector<std::string> argv = {PATHWARDEN_BINARY};
    argv.insert(argv.end(), global.begin(), global.end());
    argv.push_back("run");
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out_file = dir_ + "/.out", err_file = dir_ + "/.err";
    pid_t pid = fork();
    if (pid == 0) {
      int o = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(o, 1);
      dup2(e, 2);
      if (chdir(dir_.c_str()) != 0) _exit(90);
      std::vector<char*> a, en;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      for (auto& s : envs) en.push_back(s.data());
      en.push_back(nullptr);
      execve(a[0], a.data(), en.data());
      _exit(91);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    Outcome r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = Slurp(out_file);
    r.err = Slurp(err_file);
    return r;
  }

  static std::string Slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

  // The sandboxer's variables for a shell: the system read-only, ro/
  // read-only, rw/ read-write.
  static std::map<std::string, std::string> ShellEnv() {
    std::string system;
    for (const char* d : {"/usr", "/bin", "/lib", "/lib64", "/etc"}) {
      if (access(d, F_OK) == 0) system += std::string(d) + ":";
    }
    return {{"LL_FS_RO", system + "ro"}, {"LL_FS_RW", "rw:/dev/null"}};
  }

  // Sh(script) under ShellEnv() plus `extra`: the shell's status.
  Outcome Sh(const std::string& script, std::map<std::string, std::string> extra = {}) {
    auto env = ShellEnv();
    for (auto& [k, v] : extra) env[k] = v;
    return Run({"--from-env", "--", "/bin/sh", "-c", script}, env);
  }

  static int KernelAbi() {
    long abi = syscall(444, nullptr, 0, 1u);
    return abi < 0 ? 0 : static_cast<int>(abi);
  }

  pathwarden::base_testing::ScratchDir scratch_{"pathwarden-run"};
  const std::string& dir_ = scratch_.path();
};

#define SKIP_UNLESS_LANDLOCK(min_abi)                                             \
  do {                                                                            \
    if (KernelAbi() < (min_abi))                                                  \
      GTEST_SKIP() << "needs Landlock ABI " << (min_abi) << " (this kernel: " \
                   << KernelAbi() << ")";                                         \
  } while (0)

// --- Exit statuses ------------------------------------------------------

TEST_F(RunCommand, CommandStatusPassesThrough) {
  Outcome r = Sh("exit 42");
  EXPECT_EQ(r.status, 42) << r.err;
  EXPECT_EQ(Sh("exit 0").status, 0);
}

TEST_F(RunCommand, MissingCommandIs127) {
  Outcome r = Run({"--from-env", "--", "./no-such-command"}, ShellEnv());
  EXPECT_EQ(r.status, 127);
  EXPECT_THAT(r.err, HasSubstr("./no-such-command: command not found"));
}

TEST_F(RunCommand, NonExecutableFileIs126) {
  Outcome r = Run({"--from-env", "--", "./plain"}, ShellEnv());
  EXPECT_EQ(r.status, 126);
  EXPECT_THAT(r.err, HasSubstr("cannot execute ./plain: Permission denied"));
}

TEST_F(RunCommand, NothingToEnforceIs125) {
  Outcome r = Run({"--", "/bin/true"});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("nothing to enforce"));
}

TEST_F(RunCommand, BadEnvironmentIs125) {
  auto env = ShellEnv();
  env["LL_TCP_BIND"] = "http";
  Outcome r = Run({"--from-env", "--", "/bin/true"}, env);
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("LL_TCP_BIND: \"http\" is not a port number"));

  Outcome missing = Run({"--from-env", "--", "/bin/true"}, {{"LL_FS_RW", ""}});
  EXPECT_EQ(missing.status, 125);
  EXPECT_THAT(missing.err, HasSubstr("missing environment variable LL_FS_RO"));
}

TEST_F(RunCommand, BadPolicyIs125) {
  Outcome r = Run({"--policy", "no-such-policy.toml", "--", "/bin/true"});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("no-such-policy.toml"));
}

TEST_F(RunCommand, BadFlagIs125) {
  EXPECT_EQ(Run({"--no-such-flag", "--", "/bin/true"}).status, 125);
  EXPECT_EQ(Run({"--hard", "--best-effort", "--from-env", "--", "/bin/true"}, ShellEnv()).status,
            125);
}

// Global options before the command: "--" still ends run's options, and
// what follows is the command (trace: tests/trace/cli_test.sh).
TEST_F(RunCommand, GlobalOptionsBeforeTheCommand) {
  for (const std::vector<std::string>& global :
       {std::vector<std::string>{"--memory-budget", "1000"},
        std::vector<std::string>{"--memory-budget=1000"}}) {
    Outcome r = Run({"--from-env", "--", "/bin/sh", "-c", "echo hi; exit 7"}, ShellEnv(), global);
    EXPECT_EQ(r.status, 7) << global[0] << ": " << r.err;
    EXPECT_EQ(r.out, "hi\n") << global[0];
  }
  // A bad option after the global ones is still run's own error.
  EXPECT_EQ(Run({"--no-such-flag", "--", "/bin/true"}, {}, {"--memory-budget", "1000"}).status,
            125);
}

// --- Confinement --------------------------------------------------------

TEST_F(RunCommand, ReadOnlyAndReadWritePathsHold) {
  SKIP_UNLESS_LANDLOCK(1);
  EXPECT_EQ(Sh("cat ro/f >/dev/null").status, 0);
  EXPECT_NE(Sh("cat out/g").status, 0);                 // no rule: read denied
  EXPECT_NE(Sh("echo y > ro/new").status, 0);           // create denied
  EXPECT_EQ(Sh("echo y > rw/new && rm rw/new").status, 0);
  EXPECT_NE(Sh("rm -f ro/f").status, 0);                // remove denied
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/ro/f"));
  EXPECT_EQ(Sh("mkdir rw/d && rmdir rw/d").status, 0);
  EXPECT_NE(Sh("mkdir ro/d").status, 0);
  EXPECT_NE(Sh("ls out >/dev/null").status, 0);         // read_dir denied
}

TEST_F(RunCommand, ExecuteRightHolds) {
  SKIP_UNLESS_LANDLOCK(1);
  EXPECT_EQ(Sh("./ro/true").status, 0);
  EXPECT_EQ(Sh("./out/true").status, 126);  // the shell's "permission denied"
  Outcome direct = Run({"--from-env", "--", "./out/true"}, ShellEnv());
  EXPECT_EQ(direct.status, 126);
  EXPECT_THAT(direct.err, HasSubstr("may be denied"));
}

TEST_F(RunCommand, SignalScopeHolds) {
  SKIP_UNLESS_LANDLOCK(6);
  // The shell's parent is this test, outside the domain.
  EXPECT_EQ(Sh("kill -0 $PPID").status, 0);
  EXPECT_NE(Sh("kill -0 $PPID 2>/dev/null", {{"LL_SCOPED", "s"}}).status, 0);
  EXPECT_EQ(Sh("kill -0 $$", {{"LL_SCOPED", "s"}}).status, 0);  // itself, inside
}

// A loopback TCP listener of this test (outside the domain), or -1.
int Listener(int* port) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(s, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(s, 4) != 0 ||
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(s);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return s;
}

// Perl (in /usr) makes the socket calls the shell cannot: exit 0 when
// the call succeeds, 1 when it fails.
constexpr const char* kPerlBind =
    "perl -MSocket -e 'socket(S,PF_INET,SOCK_STREAM,0) or exit 2; "
    "bind(S, sockaddr_in($ARGV[0], INADDR_LOOPBACK)) or exit 1' ";
constexpr const char* kPerlConnect =
    "perl -MSocket -e 'socket(S,PF_INET,SOCK_STREAM,0) or exit 2; "
    "connect(S, sockaddr_in($ARGV[0], INADDR_LOOPBACK)) or exit 1' ";
constexpr const char* kPerlAbstract =
    "perl -MSocket -e 'socket(S,PF_UNIX,SOCK_STREAM,0) or exit 2; "
    "connect(S, pack_sockaddr_un(\"\\0\" . $ARGV[0])) or exit 1' ";

TEST_F(RunCommand, TcpBindAndConnectHoldTheirPorts) {
  SKIP_UNLESS_LANDLOCK(4);
  if (system("perl -MSocket -e 1 2>/dev/null") != 0) GTEST_SKIP() << "no perl Socket module";
  int allowed_port = 0, denied_port = 0;
  int allowed = Listener(&allowed_port), denied = Listener(&denied_port);
  ASSERT_GE(allowed, 0);
  ASSERT_GE(denied, 0);
  // Binding checks port 0 (ephemeral), the one port sure to be free: a
  // rule on port 0 allows it; handled without it, it is denied.
  std::map<std::string, std::string> net = {
      {"LL_TCP_BIND", "0"}, {"LL_TCP_CONNECT", std::to_string(allowed_port)}};
  EXPECT_EQ(Sh(std::string(kPerlBind) + "0", net).status, 0);
  EXPECT_EQ(Sh(std::string(kPerlBind) + "0", {{"LL_TCP_BIND", ""}}).status, 1);
  EXPECT_EQ(Sh(std::string(kPerlConnect) + std::to_string(allowed_port), net).status, 0);
  EXPECT_EQ(Sh(std::string(kPerlConnect) + std::to_string(denied_port), net).status, 1);
  // Unset: not handled, so every port passes.
  EXPECT_EQ(Sh(std::string(kPerlConnect) + std::to_string(denied_port)).status, 0);
  close(allowed);
  close(denied);
}

TEST_F(RunCommand, AbstractSocketScopeHolds) {
  SKIP_UNLESS_LANDLOCK(6);
  if (system("perl -MSocket -e 1 2>/dev/null") != 0) GTEST_SKIP() << "no perl Socket module";
  int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::string name = "pathwarden-run-test-" + std::to_string(getpid());
  std::copy(name.begin(), name.end(), a.sun_path + 1);
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&a), len), 0);
  ASSERT_EQ(listen(server, 4), 0);
  EXPECT_EQ(Sh(kPerlAbstract + name).status, 0);
  EXPECT_EQ(Sh(kPerlAbstract + name, {{"LL_SCOPED", "a"}}).status, 1);
  EXPECT_EQ(Sh(kPerlAbstract + name, {{"LL_SCOPED", "s"}}).status, 0);
  close(server);
}

// The sandboxer's variables are not passed on (as the sandboxer does).
TEST_F(RunCommand, EnvironmentVariablesAreConsumed) {
  EXPECT_EQ(Sh("test -z \"${LL_FS_RO+set}\"").status, 0);
}

TEST_F(RunCommand, MissingRulePathIsAWarning) {
  SKIP_UNLESS_LANDLOCK(1);
  auto env = ShellEnv();
  env["LL_FS_RO"] += ":no-such-dir";
  Outcome r = Run({"--from-env", "--", "/bin/sh", "-c", "cat ro/f >/dev/null"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("LL_FS_RO: cannot open \"no-such-dir\": No such file or "
                               "directory: rule skipped"));
}

TEST_F(RunCommand, FileRuleKeepsFileRights) {
  SKIP_UNLESS_LANDLOCK(1);
  auto env = ShellEnv();
  env["LL_FS_RW"] += ":out/g";
  Outcome r = Run({"--from-env", "--", "/bin/sh", "-c", "cat out/g >/dev/null"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("LL_FS_RW: \"out/g\" is not a directory: fs.read_dir,"));
}

// --- Dry runs, best effort and --hard on a pretended older kernel -------

TEST_F(RunCommand, DryRunPrintsTheRulesets) {
  SKIP_UNLESS_LANDLOCK(4);
  auto env = ShellEnv();
  env["LL_TCP_CONNECT"] = "443";
  Outcome r = Run({"--from-env", "--dry-run", "--", "/bin/false"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("layer 1 (environment)\n"));
  EXPECT_THAT(r.out, HasSubstr("  path_beneath \"ro\" (directory): "
                               "fs.execute,fs.read_file,fs.read_dir  [LL_FS_RO]\n"));
  EXPECT_THAT(r.out, HasSubstr("  path_beneath \"/dev/null\" (file): "
                               "fs.execute,fs.write_file,fs.read_file"));
  EXPECT_THAT(r.out, HasSubstr("  handled_access_net: net.connect_tcp\n"));
  EXPECT_THAT(r.out, HasSubstr("  net_port 443: net.connect_tcp  [LL_TCP_CONNECT]\n"));
}

// --from-env's layer is stacked where --from-env stands among the
// --policy options.
TEST_F(RunCommand, FromEnvIsStackedWhereItStands) {
  SKIP_UNLESS_LANDLOCK(1);
  std::ofstream(dir_ + "/p.toml") << "[[ruleset]]\nhandled_access_fs = [\"read_file\"]\n";
  auto layers = [&](std::vector<std::string> args) {
    args.push_back("--dry-run");
    Outcome r = Run(args, ShellEnv());
    EXPECT_EQ(r.status, 0) << r.err;
    std::string names;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("layer ", 0) == 0) names += line + ";";
    return names;
  };
  EXPECT_EQ(layers({"--from-env", "--policy", "p.toml"}),
            "layer 1 (environment);layer 2 (p.toml);");
  EXPECT_EQ(layers({"--policy", "p.toml", "--from-env"}),
            "layer 1 (p.toml);layer 2 (environment);");
  EXPECT_EQ(layers({"--policy=p.toml", "--from-env", "--policy", "p.toml"}),
            "layer 1 (p.toml);layer 2 (environment);layer 3 (p.toml);");
}

// A policy's abi above the kernel's is clamped to it, with a warning, as
// explain gives it (here the kernel pretends ABI 3).
TEST_F(RunCommand, AbiAboveTheKernelsIsClampedWithAWarning) {
  SKIP_UNLESS_LANDLOCK(4);
  std::ofstream(dir_ + "/p.toml") << "abi = " << KernelAbi()
                                  << "\n[[ruleset]]\nhandled_access_fs = [\"read_file\"]\n";
  Outcome r = Run({"--policy", "p.toml", "--pretend-abi", "3", "--dry-run"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("pathwarden run: layer 1 (p.toml): policy ABI " +
                               std::to_string(KernelAbi()) +
                               " is above the kernel's (3): clamped to 3\n"));
  Outcome same = Run({"--policy", "p.toml", "--dry-run"});
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_THAT(same.err, Not(HasSubstr("clamped")));
}

TEST_F(RunCommand, BestEffortDropsWhatAnOlderAbiLacks) {
  SKIP_UNLESS_LANDLOCK(6);
  auto env = ShellEnv();
  env["LL_TCP_BIND"] = "9418";
  env["LL_SCOPED"] = "s";
  struct Case {
    int abi;
    const char* dropped;
  } cases[] = {
      {5, "Landlock ABI 5 lacks scope.signal: dropped"},
      {3, "Landlock ABI 3 lacks fs.ioctl_dev,net.bind_tcp,scope.signal: dropped"},
      {1, "Landlock ABI 1 lacks fs.refer,fs.truncate,fs.ioctl_dev,net.bind_tcp,scope.signal: "
          "dropped"},
  };
  for (const Case& c : cases) {
    Outcome r = Run({"--from-env", "--pretend-abi", std::to_string(c.abi), "--", "/bin/sh", "-c",
                     "cat ro/f >/dev/null && kill -0 $PPID"},
                    env);
    // Dropped the signal scope: the parent can be signalled; ro still read-only.
    EXPECT_EQ(r.status, 0) << c.abi << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.dropped)) << c.abi;
  }
  // At the kernel's own ABI nothing is dropped and the scope holds.
  Outcome full = Run({"--from-env", "--", "/bin/sh", "-c", "kill -0 $PPID 2>/dev/null"}, env);
  EXPECT_NE(full.status, 0);
  EXPECT_THAT(full.err, Not(HasSubstr("lacks")));
}

TEST_F(RunCommand, HardRefusesWhatAnOlderAbiLacks) {
  SKIP_UNLESS_LANDLOCK(5);
  auto env = ShellEnv();
  env["LL_TCP_BIND"] = "9418";
  Outcome r = Run({"--from-env", "--hard", "--pretend-abi", "3", "--", "/bin/sh", "-c",
                   "echo ran > rw/ran"},
                  env);
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("--hard: layer 1 (environment) needs fs.ioctl_dev,net.bind_tcp, "
                               "which Landlock ABI 3 lacks: not running"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/rw/ran"));
  // Nothing lacking: --hard runs it.
  Outcome ok = Run({"--from-env", "--hard", "--", "/bin/sh", "-c", "exit 7"}, env);
  EXPECT_EQ(ok.status, 7) << ok.err;
}

}  // namespace
