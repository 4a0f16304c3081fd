// The running kernel's rules where kernel builds differ
// (pathwarden/kernel_rules.h): probed once per process, changing nothing.

#include "pathwarden/kernel_rules.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fmt/format.h>

#include "pathwarden/errno.h"

namespace pathwarden {

namespace {

// The rules a test pretends the kernel has (ScopedKernelRulesForTesting).
const KernelRules* g_pretend = nullptr;

}  // namespace

EmptyFileCaps EmptyFileCapsFromProbe(int err) {
  if (err == 0) return EmptyFileCaps::kStored;
  if (err == EINVAL) return EmptyFileCaps::kRefused;
  return EmptyFileCaps::kUnknown;
}

KernelRules ProbeKernelRules(std::array<KernelRuleProbe, std::size(kKernelRuleFields)>* probes) {
  KernelRules k;
  // A memfd is a shmem inode that no path names and that goes away with
  // its last descriptor: setting an attribute on it changes nothing that
  // anyone else can see. Its xattr handlers are tmpfs's (security.*
  // included), so a kernel that stores an empty file capability answers 0
  // here as on any tmpfs file; one that converts every value answers
  // EINVAL before the filesystem is asked.
  int err = 0;
  std::string observed;
  const int fd = memfd_create("pathwarden-probe", MFD_CLOEXEC);
  if (fd < 0) {
    err = errno;
    observed = fmt::format("memfd_create: {}", ErrnoName(err));
  } else {
    err = fsetxattr(fd, "security.capability", "", 0, 0) == 0 ? 0 : errno;
    observed = fmt::format("fsetxattr(memfd, \"security.capability\", \"\", 0, 0): {}",
                           err == 0 ? "0" : ErrnoName(err));
    close(fd);
  }
  k.empty_file_caps = fd < 0 ? EmptyFileCaps::kUnknown : EmptyFileCapsFromProbe(err);
  if (probes != nullptr)
    (*probes)[0] = KernelRuleProbe{kKernelRuleFields[0].key,
                                   static_cast<uint8_t>(k.empty_file_caps), std::move(observed)};
  return k;
}

const KernelRules& RunningKernelRules() {
  if (g_pretend != nullptr) return *g_pretend;
  static const KernelRules kRunning = ProbeKernelRules();
  return kRunning;
}

ScopedKernelRulesForTesting::ScopedKernelRulesForTesting(const KernelRules& rules)
    : saved_(g_pretend), rules_(rules) {
  g_pretend = &rules_;
}

ScopedKernelRulesForTesting::~ScopedKernelRulesForTesting() { g_pretend = saved_; }

}  // namespace pathwarden
