// landlock_create_ruleset(2) + landlock_add_rule(2) +
// landlock_restrict_self(2), as one `restrict` request.
// Linux: security/landlock/syscalls.c

#include <fmt/format.h>

#include "src/landlock/landlock.h"
#include "src/ops/common.h"
#include "src/ops/ops.h"

namespace pathwarden::ops {

template <>
int Do<pathwarden::Restrict>(OpCtx& ctx) {
  if (!ctx.a.ruleset) return EINVAL;
  const LandlockRuleset& spec = *ctx.a.ruleset;
  landlock::Landlock& ll = ctx.t.landlock();
  landlock::Ruleset rs;
  std::string why;
  using Call = RestrictFailure::Call;
  auto refused = [&](Call call, int rule, const char* name) {
    if (!ctx.explain()) return;
    ctx.Fail(Stage::kLandlock, [&] { return name + why; });
    ctx.ex->RestrictFailed({call, rule, why});
  };
  if (int err = ll.CreateRuleset(ctx.t.abi(), spec, &rs, &why)) {
    refused(Call::kCreateRuleset, -1, "landlock_create_ruleset: ");
    return err;
  }
  for (size_t ri = 0; ri < spec.rules.size(); ++ri) {
    const LandlockRule& rule = spec.rules[ri];
    const int index = static_cast<int>(ri);
    if (rule.type == landlock::kRuleNetPort) {
      if (int err = ll.AddPortRule(rs, rule.allowed_access, rule.port, &why)) {
        refused(Call::kAddRule, index, "landlock_add_rule: ");
        return err;
      }
      continue;
    }
    if (rule.type != landlock::kRulePathBeneath) {
      why = "an unknown rule type";
      refused(Call::kAddRule, index, "landlock_add_rule: ");
      return EINVAL;
    }
    vfs::PathPos target;
    std::string label;
    if (rule.parent.valid()) {
      // By handle: an O_PATH fd the caller already holds; `path`, if
      // given, is how reasons name it.
      if (!ctx.w.IsCurrent({rule.parent.mount, rule.parent.dentry}, rule.parent.inode)) {
        why = "the rule's node was removed or unmounted";
        refused(Call::kAddRule, index, "landlock_add_rule: ");
        return ESTALE;
      }
      target = {rule.parent.mount, rule.parent.dentry};
      label = rule.path.empty() ? ctx.PathOf(target) : rule.path;
    } else {
      // open(path, O_PATH) as the acting process.
      const uint32_t lookup = rule.nofollow ? 0 : walk::kLookupFollow;
      if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, rule.path, lookup, &target)) {
        if (ctx.explain())
          ctx.Fail(ctx.ex->stage(), [&] {
            return fmt::format("rule path \"{}\" does not resolve: {}", rule.path,
                               ctx.ex->text());
          });
        return err;
      }
      label = rule.path;
    }
    // A dry run checks the rule without giving the inode a Landlock
    // object (a change to the world).
    if (int err = ctx.apply ? ll.AddPathRule(rs, rule.allowed_access, label, target, &why)
                            : ll.CheckPathRule(rs, rule.allowed_access, label, target, &why)) {
      refused(Call::kAddRule, index, "landlock_add_rule: ");
      return err;
    }
  }
  if (int err = ctx.apply ? ll.Restrict(ctx.p, rs, &why) : ll.CheckRestrict(ctx.p, &why)) {
    refused(Call::kRestrictSelf, -1, "landlock_restrict_self: ");
    return err;
  }
  ctx.Ok(Stage::kLandlock, [&] {
    // A dry run tells the layer count the step would give.
    const size_t n = (ctx.p.domain ? ctx.p.domain->num_layers() : 0) + (ctx.apply ? 0 : 1);
    return fmt::format("{} now has {} layer{}", ctx.p.name, n, n == 1 ? "" : "s");
  });
  return 0;
}

}  // namespace pathwarden::ops
