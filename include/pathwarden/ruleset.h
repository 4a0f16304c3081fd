// File: pathwarden/ruleset.h
//
// A Landlock ruleset in the shape of the kernel's UAPI: the handled
// filesystem and network rights and the scopes of
// landlock_create_ruleset(), then path-beneath rules (by path, resolved as
// the restricting process would open it with O_PATH, or by node handle)
// and port rules, in the order landlock_add_rule() gets them. A Restrict
// request (pathwarden/request.h) or Model::Restrict() turns it into one
// more layer of a process's domain, with the kernel's errors: EINVAL
// (rights unknown to the ABI, not handled, directory rights on a file, a
// port above 65535), ENOMSG (nothing handled, a rule granting nothing),
// E2BIG (a 17th layer).
//
// Example:
//   LandlockRuleset rs{.handled_access_fs = landlock::kFsReadFile |
//                                           landlock::kFsWriteFile};
//   rs.AllowPath("/srv", landlock::kFsReadFile);
//   rs.AllowPort(443, landlock::kNetConnectTcp);

#ifndef PATHWARDEN_RULESET_H_
#define PATHWARDEN_RULESET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "pathwarden/handles.h"
#include "pathwarden/landlock.h"
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// LandlockRule
//
// One landlock_add_rule(): LANDLOCK_RULE_PATH_BENEATH (`path` or `parent`)
// or LANDLOCK_RULE_NET_PORT (`port`).
struct LandlockRule {
  int type = landlock::kRulePathBeneath;
  landlock::AccessMask allowed_access = 0;
  // Path-beneath: by `path`, or by handle `parent` (then `path`, if
  // given, is only how reasons name it; a stale handle is ESTALE).
  std::string path;
  Node parent;
  bool nofollow = false;  // the path is opened with O_PATH|O_NOFOLLOW
  uint64_t port = 0;      // net-port
};

// LandlockRuleset
//
// landlock_ruleset_attr and the rules to add.
struct LandlockRuleset {
  landlock::AccessMask handled_access_fs = 0;
  landlock::AccessMask handled_access_net = 0;
  landlock::AccessMask scoped = 0;
  std::vector<LandlockRule> rules = {};

  LandlockRuleset& AllowPath(std::string path, landlock::AccessMask access, bool nofollow = false) {
    rules.push_back({landlock::kRulePathBeneath, access, std::move(path), Node{}, nofollow, 0});
    return *this;
  }
  LandlockRuleset& AllowPath(Node parent, landlock::AccessMask access) {
    rules.push_back({landlock::kRulePathBeneath, access, std::string(), parent, false, 0});
    return *this;
  }
  LandlockRuleset& AllowPort(uint64_t port, landlock::AccessMask access) {
    rules.push_back({landlock::kRuleNetPort, access, std::string(), Node{}, false, port});
    return *this;
  }
};

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_RULESET_H_
