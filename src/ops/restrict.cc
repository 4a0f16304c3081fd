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
    if (!ctx.apply) continue;
    if (int err = ll.AddPathRule(rs, rule, target, &why)) {
      ctx.Fail(Stage::kLandlock, [&] { return "landlock_add_rule: " + why; });
      return err;
    }
  }
  if (!ctx.apply) return 0;
  if (int err = ll.Restrict(ctx.p, rs, &why)) {
    ctx.Fail(Stage::kLandlock, [&] { return "landlock_restrict_self: " + why; });
    return err;
  }
  ctx.Ok(Stage::kLandlock, [&] {
    return fmt::format("{} now has {} layer{}", ctx.p.name, ctx.p.domain->num_layers(),
                       ctx.p.domain->num_layers() == 1 ? "" : "s");
  });
  return 0;
}

}  // namespace pathwarden::ops
