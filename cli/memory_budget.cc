// A run's memory budget.

#include "cli/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include <fmt/format.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PATHWARDEN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PATHWARDEN_SANITIZED 1
#endif
#endif

namespace pathwarden::cli {
namespace {

// Written once before the handler can run; the handler only reads it.
char g_message[160];
size_t g_message_len = 0;

void OutOfMemory() {
  // No allocation here: write(2) the prepared message and leave. Scratch
  // mounts live in private namespaces and go with the process; the sysctl
  // guard restores the host's values from its file on the next run.
  ssize_t ignored = write(STDERR_FILENO, g_message, g_message_len);
  (void)ignored;
  _exit(2);
}

}  // namespace

uint64_t DefaultMemoryBudgetMib() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) >> 20;
}

std::string ApplyMemoryBudget(uint64_t mib) {
  const fmt::format_to_n_result<char*> r = fmt::format_to_n(
      g_message, sizeof g_message - 1,
      "pathwarden: out of memory: this run needs more than its budget of {} MiB "
      "(--memory-budget)\n",
      mib);
  g_message_len = r.size < sizeof g_message - 1 ? r.size : sizeof g_message - 1;
  std::set_new_handler(OutOfMemory);
#ifndef PATHWARDEN_SANITIZED
  if (mib == 0) return "--memory-budget: 0 MiB";
  rlimit lim{};
  if (getrlimit(RLIMIT_DATA, &lim) != 0) return fmt::format("getrlimit: {}", std::strerror(errno));
  const rlim_t want = static_cast<rlim_t>(mib) << 20;
  // Never raise a limit someone set lower.
  if (lim.rlim_max != RLIM_INFINITY && want > lim.rlim_max) return "";
  lim.rlim_cur = want;
  if (setrlimit(RLIMIT_DATA, &lim) != 0) return fmt::format("setrlimit: {}", std::strerror(errno));
#endif
  return "";
}

}  // namespace pathwarden::cli
