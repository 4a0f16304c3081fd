// Landlock in the engine: objects tagging inodes, building layers
// (landlock_create_ruleset, landlock_add_rule, landlock_restrict_self),
// and the checks behind each security hook, with audit-grade reasons.
// Linux: security/landlock/{syscalls,fs,net,task,audit}.c

#ifndef PATHWARDEN_SRC_LANDLOCK_LANDLOCK_H_
#define PATHWARDEN_SRC_LANDLOCK_LANDLOCK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "pathwarden/executor.h"
#include "src/base/engine_options.h"
#include "pathwarden/scenario.h"
#include "src/engine/engine.h"
#include "src/landlock/domain.h"

namespace pathwarden::landlock {

class Landlock {
 public:
  Landlock(vfs::World& w, const EngineOptions& options);
  Landlock(const Landlock&) = delete;
  Landlock& operator=(const Landlock&) = delete;

  // The Landlock object of an inode, created on first use (writer).
  uint32_t ObjectFor(vfs::InodeId ino);

  // Building a layer, as the three system calls do.
  //
  // CreateRuleset(): EINVAL for rights the ABI does not know, ENOMSG for
  // an empty ruleset.
  int CreateRuleset(int abi, const LayerSpec& spec, Ruleset* out, std::string* why) const;
  // AddPathRule(): ENOMSG for no rights, EINVAL for rights not handled or
  // directory rights on a file (CheckPathRule(), which changes nothing);
  // then the rule, on the target's Landlock object. `target` is the
  // resolved rule path.
  int CheckPathRule(const Ruleset& rs, const RuleSpec& rule, vfs::PathPos target,
                    std::string* why) const;
  int AddPathRule(Ruleset& rs, const RuleSpec& rule, vfs::PathPos target, std::string* why);
  int AddPortRule(Ruleset& rs, const RuleSpec& rule, std::string* why) const;
  // Restrict(): E2BIG on the 17th layer (CheckRestrict(), which changes
  // nothing); else the process gets a new domain (and new credentials).
  int CheckRestrict(const Process& p, std::string* why) const;
  int Restrict(Process& p, const Ruleset& rs, std::string* why);

  // The hooks (see src/security/hooks.h).
  int CheckPath(OpCtx& ctx, vfs::PathPos path, AccessMask request, std::string_view what);
  int CheckRefer(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir, vfs::DentryId new_dentry,
                 bool removable, bool exchange);
  int FileOpen(OpCtx& ctx, OpenFile& file);
  // FileOpenNew()
  //
  // The open of a regular file a dry run would create in `dir` (it does
  // not exist, so it has no rule: the walk is its parent's).
  int FileOpenNew(OpCtx& ctx, vfs::PathPos dir, uint32_t f_mode);
  int FileTruncate(OpCtx& ctx, const OpenFile& file);
  int FileIoctl(OpCtx& ctx, const OpenFile& file, uint32_t cmd);
  int TopologyChange(OpCtx& ctx);
  int Net(OpCtx& ctx, uint16_t port, AccessMask request);
  int Scope(OpCtx& ctx, const Process& target, const Domain* server, AccessMask scope);

 private:
  static void OnInodeFree(void* self, vfs::InodeId ino);
  // A domain holds its rules' objects, and an object with holders pins its
  // inode (security/landlock/object.c, fs.c get_inode_object()).
  std::shared_ptr<const Domain> Hold(std::shared_ptr<const Domain> d);
  void Release(const Domain& d);

  struct Object {
    vfs::InodeId ino = vfs::kNone;
    uint32_t holders = 0;
  };

  vfs::World& w_;
  const EngineOptions& options_;
  std::vector<Object> objects_{Object{}};  // by id; 0 is none
};

// The ioctl commands always allowed on devices
// (security/landlock/fs.c is_masked_device_ioctl()).
bool IsMaskedDeviceIoctl(uint32_t cmd);

}  // namespace pathwarden::landlock

#endif  // PATHWARDEN_SRC_LANDLOCK_LANDLOCK_H_
