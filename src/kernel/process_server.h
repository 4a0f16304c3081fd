// The long-lived child behind each scenario process: its setup (cwd,
// credentials, Landlock layers, abstract socket) and its request loop.

#ifndef PATHWARDEN_SRC_KERNEL_PROCESS_SERVER_H_
#define PATHWARDEN_SRC_KERNEL_PROCESS_SERVER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pathwarden/scenario.h"
#include "src/kernel/wire.h"

namespace pathwarden::kernel_internal {

// The fd every child talks to the supervisor on.
inline constexpr int kServerSock = 3;

// ProcessTable
//
// The scenario's processes with the implicit "root" at index 0, as the
// supervisor and every child (its forks) see them.
struct ProcessTable {
  std::vector<ProcessSpec> procs;
  // Capabilities this machine can grant ("all" means these).
  uint64_t caps_available = 0;
  // Names the abstract sockets, unique per run.
  pid_t supervisor = 0;

  static ProcessTable For(const Scenario& s, uint64_t caps_available);
  int IndexOf(std::string_view name) const;
  uint64_t CapsOf(int index) const;
  // The user namespace process `index` lives in, its own or the one it
  // was forked in (null: the initial one).
  std::shared_ptr<const UserNamespace> UserNsOf(int index) const;
  // The id a step names (the scenario's, the initial namespace's) as
  // process `index` passes it to the kernel: its namespace's own, or an id
  // that namespace does not map when it has none; -1 stays -1.
  uint32_t IdAsPassed(int index, int64_t id, bool gid) const;
};

// ForkTied()
//
// fork(); the child gets SIGKILL when its parent dies (also after it
// changes credentials, see RearmDeathSignal()), so nothing outlives a
// crashed executor.
pid_t ForkTied();
void RearmDeathSignal();

// SpawnSelf()
//
// ForkTied(), then /proc/self/exe exec'd anew as `name` with nothing but
// `env_name`=1 in its environment and, besides descriptors 0 to 2, one end
// of a new stream socket pair at `channel`: a lean server that a
// constructor of this binary takes over before main() when it sees the
// variable. Returns the child's pid with this end (O_CLOEXEC) in *sock,
// or -1 with errno (socketpair() or fork()).
pid_t SpawnSelf(const char* name, std::string_view env_name, int channel, int* sock);

// AbstractSocketName()
//
// The abstract UNIX socket process `index` listens on (without the NUL).
std::string AbstractSocketName(pid_t supervisor, int index);

// FdTable
//
// A process's named descriptors (`fd` keys of steps).
class FdTable {
 public:
  // -1 when the name is not open.
  int Find(std::string_view name) const;
  // Holds `fd` under `name`, closing an older one of that name.
  void Put(std::string_view name, int fd);
  // Forgets and closes `name`; false when it was not open.
  bool Close(std::string_view name, int* close_result);

 private:
  std::vector<std::pair<std::string, int>> fds_;
};

// RunStep()
//
// Runs one step as this process: the raw system call, its errno (0 for
// success). Linux: the syscall of the same name.
int RunStep(const ProcessTable& table, const StepSpec& step, const Request& req,
            FdTable* fds);

// RunProcess()
//
// The body of the child for process `index`, talking on `sock`: sets the
// process up (for `inherited`, on top of the parent's state it was forked
// with), reports ready, and serves requests until the supervisor goes away.
[[noreturn]] void RunProcess(const Scenario& s, const ProcessTable& table,
                             int index, int sock, bool inherited);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_PROCESS_SERVER_H_
