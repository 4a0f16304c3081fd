// File: pathwarden/kernel_rules.h
//
// The rules where builds of the modelled kernel (Linux 6.18) are known to
// answer differently, and the running kernel's, probed once per process.
// A Model follows the running kernel's rules unless told otherwise
// (Model::SetKernelRules()); a scenario may name the rules it was written
// for (its `[kernel]` table: docs/scenario-format.md), and the kernel
// executor skips it, saying why, on a kernel that answers otherwise.
// `pathwarden selftest` probes every rule and runs a sample of the suites
// (docs/testing.md, "Kernel-dependent rules").
//
// Example:
//   const KernelRules& k = RunningKernelRules();
//   if (k.empty_file_caps == EmptyFileCaps::kRefused) ...
//   for (const KernelRuleField& f : kKernelRuleFields)
//     fmt::print("{} = {}\n", f.key, f.ValueName(k));

#ifndef PATHWARDEN_KERNEL_RULES_H_
#define PATHWARDEN_KERNEL_RULES_H_

#include <array>
#include <cstddef>
#include <iterator>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// EmptyFileCaps
//
// setxattr() of security.capability with an empty value (size 0, whatever
// the pointer), by any caller:
//   kStored   mainline 6.18 (fs/xattr.c vfs_setxattr() converts the value
//             through cap_convert_nscap() only `if (size && ...)`): no
//             check of the value or of CAP_SETFCAP; the empty value is
//             stored after the attribute's own checks, and reads back as
//             EINVAL (no valid header);
//   kRefused  builds that convert every value: cap_convert_nscap()
//             refuses the empty one with EINVAL, where it refuses a value
//             without a valid header (after the walk and EROFS, before
//             immutability and every permission); nothing is stored;
//   kUnknown  not known (the probe could not tell): such a call answers
//             unknown.
enum class EmptyFileCaps : uint8_t { kUnknown = 0, kStored = 1, kRefused = 2 };

// KernelRules
//
// One value per rule; the default is mainline 6.18's.
struct KernelRules {
  EmptyFileCaps empty_file_caps = EmptyFileCaps::kStored;
  friend bool operator==(const KernelRules&, const KernelRules&) = default;
};

// KernelRuleField
//
// One rule: its key (the scenario's `[kernel]` key, selftest's name), what
// it is about, and the names of its values, indexed by the value (index 0
// is "unknown", which a scenario cannot name).
struct KernelRuleField {
  std::string_view key;
  std::string_view about;
  EmptyFileCaps KernelRules::*value;
  std::array<std::string_view, 3> names;
  std::string_view ValueName(const KernelRules& k) const {
    return names[static_cast<size_t>(k.*value)];
  }
};

inline constexpr KernelRuleField kKernelRuleFields[] = {
    {"empty_file_caps", "setxattr() of an empty security.capability",
     &KernelRules::empty_file_caps, {"unknown", "stored", "refused"}},
};
static_assert(sizeof(KernelRules) == sizeof(kKernelRuleFields) / sizeof(KernelRuleField),
              "a field of KernelRules is missing from kKernelRuleFields");

// ScenarioKernelRules
//
// The rules a scenario names (its `[kernel]` table); each unnamed one is
// the running kernel's.
struct ScenarioKernelRules {
  KernelRules rules;  // the values named (the others unread)
  std::array<bool, std::size(kKernelRuleFields)> named{};
  bool Empty() const {
    for (bool n : named)
      if (n) return false;
    return true;
  }
  // Over(): the named rules over `base` (the running kernel's).
  KernelRules Over(const KernelRules& base) const {
    KernelRules k = base;
    for (size_t i = 0; i < named.size(); ++i)
      if (named[i]) k.*kKernelRuleFields[i].value = rules.*kKernelRuleFields[i].value;
    return k;
  }
};

// KernelRuleProbe
//
// What probing one rule found: the value, and the observation behind it
// ("fsetxattr(memfd, security.capability, \"\", 0): EINVAL").
struct KernelRuleProbe {
  std::string_view key;
  uint8_t value = 0;  // index into the field's names
  std::string observed;
};

// ProbeKernelRules()
//
// Asks the running kernel, changing nothing on the machine: an empty
// security.capability is set on a memfd of this process (a shmem inode no
// path names, gone when closed). EINVAL is kRefused, success kStored,
// anything else (a seccomp filter, a security module) kUnknown. Fills
// `probes` (one per rule) when given.
KernelRules ProbeKernelRules(std::array<KernelRuleProbe, std::size(kKernelRuleFields)>* probes = nullptr);

// EmptyFileCapsFromProbe()
//
// The rule from the probe's result: 0 or a positive errno.
EmptyFileCaps EmptyFileCapsFromProbe(int err);

// RunningKernelRules()
//
// ProbeKernelRules(), once per process (thread-safe), unless a test
// pretends otherwise (ScopedKernelRulesForTesting).
const KernelRules& RunningKernelRules();

// ScopedKernelRulesForTesting
//
// While alive, RunningKernelRules() answers `rules` (tests of the road a
// kernel of another build takes). Not thread-safe against readers.
class ScopedKernelRulesForTesting {
 public:
  explicit ScopedKernelRulesForTesting(const KernelRules& rules);
  ~ScopedKernelRulesForTesting();
  ScopedKernelRulesForTesting(const ScopedKernelRulesForTesting&) = delete;
  ScopedKernelRulesForTesting& operator=(const ScopedKernelRulesForTesting&) = delete;

 private:
  const KernelRules* saved_;
  KernelRules rules_;
};

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_KERNEL_RULES_H_
