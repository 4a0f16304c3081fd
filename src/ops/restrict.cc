// landlock_create_ruleset(2) + landlock_add_rule(2) +
// landlock_restrict_self(2), as one `restrict` step.
// Linux: security/landlock/syscalls.c

#include <fmt/format.h>

#include "src/landlock/landlock.h"
#include "src/ops/common.h"
#include "src/ops/ops.h"

namespace pathwarden::ops {

int DoRestrict(OpCtx& ctx) {
  if (!ctx.st.layer) return EINVAL;
  const LayerSpec& spec = *ctx.st.layer;
  landlock::Landlock& ll = ctx.e.landlock();
  landlock::Ruleset rs;
  std::string why;
  if (int err = ll.CreateRuleset(ctx.e.abi(), spec, &rs, &why)) {
    ctx.Fail(Stage::kLandlock, [&] { return "landlock_create_ruleset: " + why; });
    return err;
  }
  for (const RuleSpec& rule : spec.rules) {
    if (rule.is_port) {
      if (int err = ll.AddPortRule(rs, rule, &why)) {
        ctx.Fail(Stage::kLandlock, [&] { return "landlock_add_rule: " + why; });
        return err;
      }
      continue;
    }
    // open(path, O_PATH) as the acting process.
    vfs::PathPos target;
    const uint32_t lookup = rule.nofollow ? 0 : walk::kLookupFollow;
    if (int err = walk::FilenameLookup(ctx.env, walk::Start{}, rule.path, lookup, &target)) {
      if (ctx.explain())
        ctx.Fail(ctx.ex->stage(), [&] {
          return fmt::format("rule path \"{}\" does not resolve: {}", rule.path, ctx.ex->text());
        });
      return err;
    }
    // A dry run checks the rule without giving the inode a Landlock
    // object (a change to the world).
    if (int err = ctx.apply ? ll.AddPathRule(rs, rule, target, &why)
                            : ll.CheckPathRule(rs, rule, target, &why)) {
      ctx.Fail(Stage::kLandlock, [&] { return "landlock_add_rule: " + why; });
      return err;
    }
  }
  if (int err = ctx.apply ? ll.Restrict(ctx.p, rs, &why) : ll.CheckRestrict(ctx.p, &why)) {
    ctx.Fail(Stage::kLandlock, [&] { return "landlock_restrict_self: " + why; });
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
