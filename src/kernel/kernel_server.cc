// The lean server of a kernel session: /proc/self/exe exec'd anew, taken
// over by a constructor before main(), forking one supervisor per scenario.

#include "src/kernel/kernel_server.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/kernel/codec.h"
#include "src/kernel/process_server.h"
#include "src/kernel/wire.h"

namespace pathwarden::kernel_internal {
namespace {

constexpr const char* kServerEnv = "PATHWARDEN_KERNEL_SERVER";
// The first frame: this, or why the server cannot run. A binary without
// this file (a script interpreter embedding the library) says neither.
constexpr std::string_view kReady = "pathwarden kernel server ready";
// The server's end of the channel to its session.
constexpr int kChannel = 3;

std::string EncodeRequest(const Scenario& s, const KernelOptions& o,
                          const SupervisorParams& p) {
  ByteWriter w;
  EncodeScenario(s, &w);
  w.Int(o.capture_tree);
  w.Str(p.mount_dir);
  w.Int(p.caps_available);
  w.Int(p.reply_timeout_ms);
  return w.Take();
}

bool DecodeRequest(std::string_view bytes, Scenario* s, KernelOptions* o,
                   SupervisorParams* p) {
  ByteReader in(bytes);
  uint8_t capture = 0;
  return DecodeScenario(&in, s) && in.Int(&capture) && in.Str(&p->mount_dir) &&
         in.Int(&p->caps_available) && in.Int(&p->reply_timeout_ms) && in.AtEnd() &&
         (o->capture_tree = capture != 0, true);
}

void ReapFinished() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

[[noreturn]] void Serve() {
  // The session's signal dispositions came along through exec where they
  // were "ignore"; the supervisors must be reaped here.
  signal(SIGCHLD, SIG_DFL);
  std::string startup(kReady);
  if (unshare(CLONE_NEWNET) != 0) {
    startup = fmt::format("unshare(CLONE_NEWNET): {}", ErrnoName(errno));
  } else if (int err = LoopbackUp(); err != 0) {
    startup = fmt::format("bring lo up: {}", ErrnoName(err));
  }
  if (WriteFrame(kChannel, startup) != 0 || startup != kReady) _exit(1);
  for (;;) {
    std::string request;
    if (ReadFrame(kChannel, &request, std::numeric_limits<int64_t>::max()) != 0) break;
    // Supervisors of earlier scenarios finish their teardown meanwhile.
    ReapFinished();
    Scenario s;
    KernelOptions options;
    SupervisorParams params;
    if (!DecodeRequest(request, &s, &options, &params)) break;
    params.own_netns = false;
    ByteWriter w;
    EncodeResult(RunSupervised(s, options, params, /*wait_for_teardown=*/false), &w);
    if (WriteFrame(kChannel, w.Take()) != 0) break;
  }
  close(kChannel);
  for (;;) {
    if (waitpid(-1, nullptr, 0) < 0 && errno != EINTR) break;
  }
  _exit(0);
}

// Runs before main() in every process of a binary linking this file; only
// the exec'd server has the variable (its environment is just that).
__attribute__((constructor)) void ServeIfAsked() {
  const char* v = getenv(kServerEnv);
  if (v != nullptr && std::string_view(v) == "1") Serve();
}

}  // namespace

Result<std::unique_ptr<KernelServer>, std::string> KernelServer::Spawn() {
  int sock = -1;
  const pid_t pid = SpawnSelf("pathwarden-kernel-server", kServerEnv, kChannel, &sock);
  if (pid < 0)
    return Unexpected(fmt::format("start the kernel server: {}", ErrnoName(errno)));
  std::unique_ptr<KernelServer> server(new KernelServer(pid, sock));
  std::string hello;
  int e = ReadFrame(sock, &hello, NowMs() + 10000);
  if (e == 0 && hello == kReady) return server;
  kill(pid, SIGKILL);
  server->Stop();
  if (e != 0) return Unexpected(fmt::format("the kernel server did not start: {}", ErrnoName(e)));
  return Unexpected(fmt::format("the kernel server cannot run: {}", hello));
}

KernelServer::~KernelServer() { Stop(); }

void KernelServer::Stop() {
  if (sock_ >= 0) {
    close(sock_);
    sock_ = -1;
  }
  if (pid_ > 0) {
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

RunResult KernelServer::Run(const Scenario& s, const KernelOptions& options,
                            const SupervisorParams& params) {
  auto fail = [&](std::string_view what, int err) {
    // A server that misses a beat is not trusted with the next scenario.
    if (pid_ > 0) kill(pid_, SIGKILL);
    Stop();
    return Failed(fmt::format("{}: internal: {}: {}", s.file, what, ErrnoName(err)));
  };
  if (sock_ < 0) return fail("the kernel server is gone", EPIPE);
  if (int err = WriteFrame(sock_, EncodeRequest(s, options, params)); err != 0)
    return fail("send the scenario to the kernel server", err);
  // The server bounds the supervisor's time and answers even when that
  // one dies; this bounds the server.
  std::string bytes;
  if (int err = ReadFrame(sock_, &bytes, NowMs() + ResultBudgetMs(s, params) + 10000); err != 0)
    return fail("the kernel server's answer", err);
  ByteReader in(bytes);
  RunResult r;
  if (!DecodeResult(&in, &r) || !in.AtEnd()) return fail("decode the kernel server's answer", EBADMSG);
  return r;
}

}  // namespace pathwarden::kernel_internal
