// Landlock in the engine: objects tagging inodes, building layers
// (landlock_create_ruleset, landlock_add_rule, landlock_restrict_self),
// and the checks behind each security hook, with audit-grade reasons.
// Linux: security/landlock/{syscalls,fs,net,task,audit}.c

#ifndef PATHWARDEN_SRC_LANDLOCK_LANDLOCK_H_
#define PATHWARDEN_SRC_LANDLOCK_LANDLOCK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "pathwarden/ruleset.h"
#include "src/base/engine_options.h"
#include "src/landlock/domain.h"
#include "src/security/hooks.h"
#include "src/task/task.h"

namespace pathwarden::landlock {

class Landlock final : public security::Module {
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
  int CreateRuleset(int abi, const LandlockRuleset& attr, Ruleset* out, std::string* why) const;
  // AddPathRule(): ENOMSG for no rights, EINVAL for rights not handled or
  // directory rights on a file (CheckPathRule(), which changes nothing);
  // then the rule, on the target's Landlock object. `target` is the
  // resolved rule path, `path` how the rule names it in reasons.
  int CheckPathRule(const Ruleset& rs, AccessMask access, std::string_view path,
                    vfs::PathPos target, std::string* why) const;
  int AddPathRule(Ruleset& rs, AccessMask access, std::string_view path, vfs::PathPos target,
                  std::string* why);
  // AddPortRule(): ENOMSG, EINVAL as above, and EINVAL above port 65535.
  int AddPortRule(Ruleset& rs, AccessMask access, uint64_t port, std::string* why) const;
  // Restrict(): E2BIG on the 17th layer (CheckRestrict(), which changes
  // nothing); else the process gets a new domain (and new credentials).
  int CheckRestrict(const Task& p, std::string* why) const;
  int Restrict(Task& p, const Ruleset& rs, std::string* why);

  // The hooks (see src/security/hooks.h).
  int CheckPath(OpCtx& ctx, vfs::PathPos path, AccessMask request, std::string_view what);
  int CheckRefer(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir, vfs::DentryId new_dentry,
                 bool removable, bool exchange);
  int FileOpen(OpCtx& ctx, OpenFile& file) override;
  // FileOpenNew()
  //
  // The open of a regular file a dry run would create in `dir` (it does
  // not exist, so it has no rule: the walk is its parent's).
  int FileOpenNew(OpCtx& ctx, vfs::PathPos dir, uint32_t f_mode) override;
  int FileTruncate(OpCtx& ctx, const OpenFile& file) override;
  int FileIoctl(OpCtx& ctx, const OpenFile& file, uint32_t cmd) override;

  // The other hooks (src/landlock/hooks.cc): the right each asks for.
  int PathMknod(OpCtx& ctx, vfs::PathPos dir, uint32_t mode) override;
  int PathMkdir(OpCtx& ctx, vfs::PathPos dir) override;
  int PathSymlink(OpCtx& ctx, vfs::PathPos dir) override;
  int PathUnlink(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) override;
  int PathRmdir(OpCtx& ctx, vfs::PathPos dir, vfs::DentryId victim) override;
  int PathLink(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir,
               vfs::DentryId new_dentry) override;
  int PathRename(OpCtx& ctx, vfs::PathPos old_dir, vfs::DentryId old_dentry,
                 vfs::PathPos new_dir, vfs::DentryId new_dentry, uint32_t flags) override;
  int PathTruncate(OpCtx& ctx, vfs::PathPos file) override;
  int SbMount(OpCtx& ctx) override;
  int SbUmount(OpCtx& ctx) override;
  int TaskKill(OpCtx& ctx, const Task& target) override;
  int UnixStreamConnect(OpCtx& ctx, const Task& target) override;
  int SocketBind(OpCtx& ctx, uint16_t port) override;
  int SocketConnect(OpCtx& ctx, uint16_t port) override;
  int TopologyChange(OpCtx& ctx);
  int Net(OpCtx& ctx, uint16_t port, AccessMask request);
  int Scope(OpCtx& ctx, const Task& target, const Domain* server, AccessMask scope);

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

// RecordFsRequest() / RecordReferRequests()
//
// What a hook asks of a path (a link or rename: of its two directories),
// for the reason (Reason::fs_requests: with Model::Detail::kTrace), whether or
// not a domain handles it: the needs `trace --learn` learns. Nothing
// outside a trace.
void RecordFsRequest(OpCtx& ctx, vfs::PathPos at, AccessMask access);
void RecordReferRequests(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir,
                         vfs::DentryId new_dentry, bool removable, bool exchange);

}  // namespace pathwarden::landlock

#endif  // PATHWARDEN_SRC_LANDLOCK_LANDLOCK_H_
