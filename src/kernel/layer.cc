// Landlock layers enforced through the raw system calls, in the order a
// sandboxing launcher makes them. Linux: security/landlock/syscalls.c

#include "src/kernel/layer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/kernel/landlock_uapi.h"

namespace pathwarden::kernel_internal {

int OpenRulePath(const RuleSpec& rule) {
  int flags = O_PATH | O_CLOEXEC | (rule.nofollow ? O_NOFOLLOW : 0);
  return open(rule.path.c_str(), flags);
}

int EnforceLayer(const LayerSpec& layer, std::span<const int> opened,
                 LayerFailure* failure) {
  LandlockRulesetAttr attr;
  attr.handled_access_fs = layer.handled_fs;
  attr.handled_access_net = layer.handled_net;
  attr.scoped = layer.scoped;
  int ruleset = LandlockCreateRuleset(&attr, sizeof(attr), 0);
  if (ruleset < 0) {
    *failure = {LayerFailure::Stage::kCreate, 0};
    return errno;
  }
  int err = 0;
  for (size_t i = 0; i < layer.rules.size() && err == 0; ++i) {
    const RuleSpec& rule = layer.rules[i];
    int r;
    if (rule.is_port) {
      LandlockNetPortAttr port{rule.access, rule.port};
      r = LandlockAddRule(ruleset, landlock::kRuleNetPort, &port, 0);
    } else {
      int fd = opened.empty() ? OpenRulePath(rule) : opened[i];
      if (fd < 0) {
        *failure = {LayerFailure::Stage::kOpen, i};
        err = errno;
        break;
      }
      LandlockPathBeneathAttr beneath{rule.access, fd};
      r = LandlockAddRule(ruleset, landlock::kRulePathBeneath, &beneath, 0);
      int saved = errno;
      if (opened.empty()) close(fd);
      errno = saved;
    }
    if (r != 0) {
      *failure = {LayerFailure::Stage::kAddRule, i};
      err = errno;
    }
  }
  if (err == 0 && LandlockRestrictSelf(ruleset, 0) != 0) {
    *failure = {LayerFailure::Stage::kRestrict, 0};
    err = errno;
  }
  close(ruleset);
  return err;
}

std::string DescribeFailure(const LayerSpec& layer, const LayerFailure& f,
                            int err) {
  switch (f.stage) {
    case LayerFailure::Stage::kCreate:
      return fmt::format("the kernel refuses the layer: landlock_create_ruleset: {}",
                         ErrnoName(err));
    case LayerFailure::Stage::kOpen:
      return fmt::format("rule path \"{}\" does not resolve: {}",
                         layer.rules[f.rule].path, ErrnoName(err));
    case LayerFailure::Stage::kAddRule:
      return fmt::format("the kernel refuses the rule: landlock_add_rule: {}",
                         ErrnoName(err));
    case LayerFailure::Stage::kRestrict:
      return fmt::format("the kernel refuses the layer: landlock_restrict_self: {}",
                         ErrnoName(err));
  }
  return ErrnoName(err);
}

}  // namespace pathwarden::kernel_internal
