// A lean process that forks the supervisors of a session: a fresh exec of
// this binary, so that forking stays cheap however large the caller grows.

#ifndef PATHWARDEN_SRC_KERNEL_KERNEL_SERVER_H_
#define PATHWARDEN_SRC_KERNEL_KERNEL_SERVER_H_

#include <sys/types.h>

#include "pathwarden/result.h"
#include <memory>
#include <string>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"
#include "src/kernel/supervisor.h"

namespace pathwarden::kernel_internal {

// KernelServer
//
// The caller's handle on the server. fork() copies the page tables of the
// forking process, so forking supervisors (and they their children) from a
// fuzzer holding a few hundred MB costs milliseconds each; the server is
// /proc/self/exe started anew (a constructor in kernel_server.cc takes over
// before main() when PATHWARDEN_KERNEL_SERVER is set), holding nothing but
// this code. It also keeps one private network namespace with `lo` up for
// all its supervisors, which saves each run creating one: a scenario leaves
// nothing there (its sockets die with its processes; the abstract socket
// names carry the supervisor's pid).
//
// Example:
//   auto server = KernelServer::Spawn();
//   RunResult r = (*server)->Run(s, options, params);
class KernelServer {
 public:
  static Result<std::unique_ptr<KernelServer>, std::string> Spawn();
  // Closing the channel ends the server once its supervisors are reaped.
  ~KernelServer();
  KernelServer(const KernelServer&) = delete;
  KernelServer& operator=(const KernelServer&) = delete;

  // Run()
  //
  // One scenario in a supervisor forked by the server. The result arrives
  // before that supervisor has torn down. `ok()` turns false when the
  // server stopped answering (the result says so); spawn another then.
  RunResult Run(const Scenario& s, const KernelOptions& options,
                const SupervisorParams& params);
  bool ok() const noexcept { return sock_ >= 0; }

 private:
  KernelServer(pid_t pid, int sock) : pid_(pid), sock_(sock) {}
  void Stop();

  pid_t pid_;
  int sock_;
};

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_KERNEL_SERVER_H_
