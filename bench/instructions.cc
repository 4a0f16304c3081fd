// Instruction counts of engine variants, from valgrind's callgrind: they
// repeat exactly where timings on these shared machines do not, so a
// ratio between two variants (by-layer against by-access, fast search on
// and off) is read from them too.
//
// The benchmark re-executes this binary as `pathwarden bench-probe ...`
// under callgrind, which counts only inside ProbeChecks().

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/fixtures.h"

namespace pathwarden::bench {

// The measured loop: callgrind's --toggle-collect names it.
[[gnu::noinline]] void ProbeChecks(const Model& m, Process p, const Request& req, int n) {
  for (int i = 0; i < n; ++i) (void)m.Evaluate(p, req, Model::Detail::kVerdictOnly);
}

int RunProbe(const std::vector<std::string>& args) {
  auto fail = [](const std::string& why) {
    fmt::print(stderr, "bench-probe: {}\n", why);
    return 2;
  };
  try {
    if (args.size() == 5 && args[0] == "landlock") {
      EngineOptions eo;
      eo.layout = args[1] == "by-access" ? LayerLayout::kByAccess : LayerLayout::kByLayer;
      eo.memo = args[1] == "memoized";
      auto c = ChainModel(std::stoi(args[2]), std::stoi(args[3]), eo);
      if (!c) return fail("cannot build the chain");
      const Request req = ChainRequest(*c);
      if (c->model.Evaluate(c->sb, req).err() != EACCES)
        return fail("the chain's check is not denied");
      ProbeChecks(c->model, c->sb, req, std::stoi(args[4]));
      return 0;
    }
    if (args.size() == 5 && args[0] == "lookup") {
      EngineOptions eo;
      eo.fast_search = args[1] == "fast";
      std::string why;
      auto u = UsrModel(args[2], eo, false, &why);
      if (!u) return fail(why);
      const Request req = Stat{.path = args[3]};
      if (u->model.Evaluate(u->user, req).err() != 0)
        return fail("stat " + args[3] + " fails in the engine");
      ProbeChecks(u->model, u->user, req, std::stoi(args[4]));
      return 0;
    }
  } catch (const std::exception& ex) {
    return fail(ex.what());
  }
  return fail("usage: bench-probe landlock LAYOUT DEPTH LAYERS N | lookup fast|slow USR PATH N");
}

double InstructionsPerCheck(const std::vector<std::string>& probe, int n, std::string* why) {
  int err_pipe[2];
  if (pipe(err_pipe) != 0) {
    *why = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  // This binary, by its real path (valgrind's own /proc/self/exe is not).
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    close(err_pipe[0]);
    close(err_pipe[1]);
    *why = std::string("readlink /proc/self/exe: ") + std::strerror(errno);
    return -1;
  }
  self[len] = 0;
  std::vector<std::string> argv = {"valgrind",
                                   "--tool=callgrind",
                                   "--callgrind-out-file=/dev/null",
                                   "--collect-atstart=no",
                                   "--toggle-collect=pathwarden::bench::ProbeChecks*",
                                   self,
                                   "bench-probe"};
  argv.insert(argv.end(), probe.begin(), probe.end());
  const pid_t pid = fork();
  if (pid < 0) {
    close(err_pipe[0]);
    close(err_pipe[1]);
    *why = std::string("fork: ") + std::strerror(errno);
    return -1;
  }
  if (pid == 0) {
    dup2(err_pipe[1], 2);
    close(err_pipe[0]);
    close(err_pipe[1]);
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execvp("valgrind", cargv.data());
    fmt::print(stderr, "exec valgrind: {}\n", std::strerror(errno));
    _exit(127);
  }
  close(err_pipe[1]);
  std::string err;
  char buf[4096];
  for (ssize_t r; (r = read(err_pipe[0], buf, sizeof buf)) != 0;) {
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    err.append(buf, static_cast<size_t>(r));
  }
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *why = WIFEXITED(status) && WEXITSTATUS(status) == 127
               ? "valgrind is not installed (scripts/setup installs it)"
               : "callgrind run failed: " + err.substr(err.size() > 400 ? err.size() - 400 : 0);
    return -1;
  }
  std::smatch m;
  static const std::regex kCollected(R"(Collected\s*:\s*([0-9]+))");
  if (!std::regex_search(err, m, kCollected)) {
    *why = "no instruction count in callgrind's output";
    return -1;
  }
  return std::stod(m[1].str()) / n;
}

}  // namespace pathwarden::bench
