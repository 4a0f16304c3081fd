// One Landlock layer enforced on the calling process, as a scenario's
// starting layers and `restrict` steps do. Linux: security/landlock/syscalls.c

#ifndef PATHWARDEN_SRC_KERNEL_LAYER_H_
#define PATHWARDEN_SRC_KERNEL_LAYER_H_

#include <cstddef>
#include <span>
#include <string>

#include "pathwarden/scenario.h"

namespace pathwarden::kernel_internal {

// Which call refused a layer, and for the rule calls which rule.
struct LayerFailure {
  enum class Stage { kCreate, kOpen, kAddRule, kRestrict };
  Stage stage = Stage::kCreate;
  size_t rule = 0;
};

// OpenRulePath()
//
// The O_PATH descriptor a path-beneath rule is attached to (with
// O_NOFOLLOW for `nofollow`), resolved as the calling process; -1 with
// errno set when the path does not resolve.
int OpenRulePath(const RuleSpec& rule);

// EnforceLayer()
//
// landlock_create_ruleset(), landlock_add_rule() for each rule in order,
// landlock_restrict_self(). `opened` holds one descriptor per rule (-1 for
// port rules) opened beforehand, as a launcher does; when empty, each path
// is opened just before its rule is added. Returns 0 or the errno of the
// first call that failed (described by *failure); then nothing is enforced.
int EnforceLayer(const LayerSpec& layer, std::span<const int> opened,
                 LayerFailure* failure);

// DescribeFailure()
//
// "rule path \"/x\" does not resolve: ENOENT" and the like.
std::string DescribeFailure(const LayerSpec& layer, const LayerFailure& f,
                            int err);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_LAYER_H_
