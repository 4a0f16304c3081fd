// Issue 13: pathwarden-fs (fileserver) against the same server
// mounted -o default_permissions, where the kernel makes the Unix checks
// and the server decides nothing: `find` (a stat of every entry) and
// `cat` of every file over one copy of /usr/include on a scratch tmpfs,
// as root and as an unprivileged user, the two mounts with the same
// entry and attribute timeouts (0) taking turns. Target: pathwarden-fs at
// 0.9x the rate of default_permissions or better. Each server's CPU time
// per run is reported beside: what the decisions cost the server, less
// noisy than the wall times on a shared machine. Needs root and
// /dev/fuse; runs in a child in its own mount namespace, so that nothing
// it mounts outlives it.

#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/process.h"

namespace pathwarden::bench {
namespace {

constexpr long kFuseSuperMagic = 0x65735546;

std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// The CPU time (user and system) process `pid` has used so far.
double CpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream in(text.substr(paren + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

bool WaitMounted(const std::string& dir) {
  for (int i = 0; i < 200; ++i) {
    struct statfs s;
    if (statfs(dir.c_str(), &s) == 0 && s.f_type == kFuseSuperMagic) return true;
    usleep(25000);
  }
  return false;
}

pid_t StartServer(const std::string& exe, const std::string& backing, const std::string& at,
                  bool default_permissions) {
  std::vector<std::string> argv = {exe, "-f"};
  if (default_permissions) {
    argv.push_back("-o");
    argv.push_back("default_permissions");
  }
  argv.push_back(backing);
  argv.push_back(at);
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// The measurement, in the child: JSON lines on `out`, notes as lines
// starting with '#'.
void Measure(const Options& o, const std::string& exe, FILE* out) {
  if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr)) {
    std::fprintf(out, "# fileserver: no private mount namespace: %s\n", std::strerror(errno));
    return;
  }
  char tmpl[] = "/tmp/pathwarden-bench-fs-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return;
  const std::string dir = tmpl;
  chmod(dir.c_str(), 0755);
  const std::string backing = dir + "/backing", pw = dir + "/pathwarden", dp = dir + "/kernel";
  for (const std::string& d : {backing, pw, dp}) mkdir(d.c_str(), 0755);
  std::vector<pid_t> servers;
  auto done = [&] {
    for (const std::string& m : {pw, dp}) umount2(m.c_str(), MNT_DETACH);
    for (pid_t p : servers) {
      kill(p, SIGTERM);
      waitpid(p, nullptr, 0);
    }
    umount2(backing.c_str(), MNT_DETACH);
    for (const std::string& d : {backing, pw, dp}) rmdir(d.c_str());
    rmdir(dir.c_str());
  };
  if (mount("pathwarden-bench", backing.c_str(), "tmpfs", 0, "mode=0755") != 0) {
    std::fprintf(out, "# fileserver: cannot mount a tmpfs: %s\n", std::strerror(errno));
    done();
    return;
  }
  // The tree: /usr/include (with --smoke, one small directory of it).
  std::string src = o.usr + "/include";
  struct stat st;
  if (o.smoke && stat((src + "/linux/netfilter").c_str(), &st) == 0) src += "/linux/netfilter";
  if (!RunProcess({"cp", "-a", src, backing + "/include"}).ok()) {
    std::fprintf(out, "# fileserver: cannot copy %s\n", src.c_str());
    done();
    return;
  }
  servers.push_back(StartServer(exe, backing, pw, false));
  servers.push_back(StartServer(exe, backing, dp, true));
  if (!WaitMounted(pw) || !WaitMounted(dp)) {
    std::fprintf(out, "# fileserver: pathwarden-fs did not mount\n");
    done();
    return;
  }
  const int runs = o.smoke ? 1 : 5;
  size_t n = 0;  // entries in the tree
  {
    FILE* p = popen(fmt::format("find '{}/include' | wc -l", backing).c_str(), "r");
    if (p != nullptr) {
      if (std::fscanf(p, "%zu", &n) != 1) n = 0;
      pclose(p);
    }
  }
  struct As {
    const char* who;
    std::vector<std::string> prefix;
  };
  const std::vector<As> users = {
      {"root", {}},
      {"uid 65534", {"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"}}};
  for (const As& as : users) {
    for (const char* workload : {"find", "cat"}) {
      std::vector<std::vector<std::string>> cmds;
      for (const std::string& m : {pw, dp}) {
        std::vector<std::string> argv = as.prefix;
        if (std::string(workload) == "find") {
          for (const char* a : {"find", "-printf", "%m %u %s\n"}) argv.push_back(a);
          argv.insert(argv.end() - 2, m + "/include");
        } else {
          for (const char* a : {"sh", "-c", "find \"$0\" -type f -print0 | xargs -0 cat", ""})
            argv.push_back(a);
          argv.back() = m + "/include";
        }
        cmds.push_back(argv);
      }
      const double cpu0[2] = {CpuSeconds(servers[0]), CpuSeconds(servers[1])};
      const auto best = BestOfEach(cmds, runs);
      const double cpu[2] = {(CpuSeconds(servers[0]) - cpu0[0]) / runs,
                             (CpuSeconds(servers[1]) - cpu0[1]) / runs};
      if (!best[0] || !best[1]) {
        std::fprintf(out, "# fileserver %s as %s: a run failed\n", workload, as.who);
        continue;
      }
      const double ratio = best[1]->seconds / best[0]->seconds;  // rate of pw over dp
      const nlohmann::json m = {{"bench", "fileserver"},
                                {"workload", workload},
                                {"as", as.who},
                                {"entries", n},
                                {"runs", runs},
                                {"pathwarden_s", best[0]->seconds},
                                {"default_permissions_s", best[1]->seconds},
                                {"ratio", ratio},
                                {"pathwarden_server_cpu_s", cpu[0]},
                                {"default_permissions_server_cpu_s", cpu[1]},
                                {"target", 0.9},
                                {"met", ratio >= 0.9},
                                {"loadavg", LoadAverage()},
                                {"path", src}};
      std::fprintf(out, "%s\n", m.dump().c_str());
    }
  }
  done();
}

}  // namespace

void RunFileserverBench(const Options& o, Reporter& r) {
  const std::string self = SelfExe();
  const std::string exe = self.substr(0, self.rfind('/') + 1) + "pathwarden-fs";
  if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
    r.Note("fileserver: needs root and /dev/fuse");
    return;
  }
  if (access(exe.c_str(), X_OK) != 0) {
    r.Note(fmt::format("fileserver: no {} (build the pathwarden-fs target)", exe));
    return;
  }
  int fds[2];
  if (pipe(fds) != 0) return;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    FILE* out = fdopen(fds[1], "w");
    Measure(o, exe, out);
    std::fclose(out);
    _exit(0);
  }
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  char* line = nullptr;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, in)) > 0) {
    std::string s(line, static_cast<size_t>(len));
    if (!s.empty() && s.back() == '\n') s.pop_back();
    if (s.starts_with("#")) {
      r.Note(s.substr(2));
    } else {
      r.Add(nlohmann::json::parse(s, nullptr, false));
    }
  }
  free(line);
  std::fclose(in);
  waitpid(pid, nullptr, 0);
}

}  // namespace pathwarden::bench
