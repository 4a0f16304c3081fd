// A run's memory budget: the commands that read files and build models
// (check, fuzz, policy, explain, map) stop with a message and exit 2 when
// an allocation fails, instead of std::bad_alloc or the OOM killer.

#ifndef PATHWARDEN_CLI_MEMORY_BUDGET_H_
#define PATHWARDEN_CLI_MEMORY_BUDGET_H_

#include <cstdint>
#include <string>

namespace pathwarden::cli {

// DefaultMemoryBudgetMib()
//
// The machine's physical memory, in MiB.
uint64_t DefaultMemoryBudgetMib();

// ApplyMemoryBudget()
//
// Limits this process's data (RLIMIT_DATA: its private writable memory,
// what malloc and the engine's arenas commit; not the address space the
// arenas reserve) to `mib` MiB (not under ASan or TSan, whose shadow
// memory is terabytes of it: there only the handler below is installed),
// and installs a new-handler that prints "pathwarden: out of memory: ..."
// and exits 2, from any thread (the arenas call it too).
// Children forked by the kernel executor inherit the limit. Returns "" or
// why the limit could not be set.
std::string ApplyMemoryBudget(uint64_t mib);

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_MEMORY_BUDGET_H_
