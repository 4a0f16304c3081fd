// getxattr(2), setxattr(2), listxattr(2), removexattr(2) in their *at,
// l* and f* forms, on tmpfs: the name's namespace decides who may read and
// write (user.* only on files and directories, and not in someone else's
// sticky directory; trusted.* with CAP_SYS_ADMIN; security.* written with
// CAP_SYS_ADMIN, security.capability with CAP_SETFCAP), the POSIX ACL
// names go to the ACL code (only the owner or CAP_FOWNER sets them, and
// the access ACL moves the mode).
// Linux: fs/xattr.c @6.18 path_setxattrat(), setxattr_copy(),
// import_xattr_name(), file_setxattr(), filename_setxattr(),
// do_setxattr(), vfs_setxattr(), __vfs_setxattr_locked(),
// xattr_permission(), may_write_xattr(), xattr_resolve_name(),
// vfs_getxattr(), vfs_listxattr(), vfs_removexattr(), simple_xattr_set(),
// simple_xattr_list(); security/commoncap.c cap_inode_setxattr(),
// cap_inode_removexattr(), cap_convert_nscap(), cap_inode_getsecurity();
// fs/posix_acl.c do_set_acl(), vfs_set_acl(), set_posix_acl(),
// vfs_get_acl(), vfs_remove_acl(), posix_acl_update_mode(),
// simple_set_acl(); mm/shmem.c shmem_xattr_handlers

#include <fcntl.h>

#include <fmt/format.h>

#include "src/ops/common.h"
#include "src/ops/ops.h"
#include "src/vfs/backend.h"
#include "src/vfs/xattr.h"

namespace pathwarden::ops {
namespace {

using vfs::InodeId;
using vfs::PathPos;
using vfs::XattrNs;
using vfs::NamespaceOf;
using vfs::PrefixOf;
using vfs::IsPosixAclName;
using vfs::kXattrNameCaps;
using vfs::kXattrNameAclDefault;

constexpr uint32_t kXattrCreate = 0x1;   // XATTR_CREATE
constexpr uint32_t kXattrReplace = 0x2;  // XATTR_REPLACE
constexpr size_t kXattrNameMax = 255;    // XATTR_NAME_MAX
constexpr size_t kXattrSizeMax = 65536;  // XATTR_SIZE_MAX

// import_xattr_name(): an empty name, or one of XATTR_NAME_MAX + 1 bytes
// or more, does not fit.
int ImportName(const OpCtx& ctx) {
  const std::string_view name = ctx.a.xattr_name;
  if (name.empty() || name.size() > kXattrNameMax || name.find('\0') == 0) {
    ctx.Fail(Stage::kArgs, [&] {
      return name.empty() ? std::string("an empty xattr name")
                          : fmt::format("an xattr name of {} bytes (at most {})", name.size(),
                                        kXattrNameMax);
    });
    return ERANGE;
  }
  return 0;
}

// The object a call names: the file of dirfd for an empty path with
// AT_EMPTY_PATH and a dirfd (fdget(): not an O_PATH one), else the path
// (followed unless AT_SYMLINK_NOFOLLOW). `write` adds the mount's write
// access (mnt_want_write_file() / mnt_want_write()).
int Target(OpCtx& ctx, bool write, PathPos* at) {
  const OpArgs& st = ctx.a;
  const uint32_t flags = static_cast<uint32_t>(st.flags);
  if (st.path.empty() && (flags & AT_EMPTY_PATH) && !st.dirfd.at_cwd()) {
    const OpenFile* f = FdGet(ctx, st.dirfd);
    if (!f) return EBADF;
    *at = f->path;
  } else {
    if (int err = UserPathAt(ctx, LookupFlagsFor(flags, true), at))
      return err;
  }
  if (write) return MntWantWrite(ctx, *at);
  return 0;
}

int CheckAtFlags(const OpCtx& ctx) {
  if (ctx.a.flags & ~static_cast<uint64_t>(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
    ctx.Fail(Stage::kArgs, "flags other than AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH");
    return EINVAL;
  }
  return 0;
}

// The host's extended attributes are not read into the model: where an
// answer depends on which exist, it is unknown.
int HostXattrsUnknown(const OpCtx& ctx) {
  if (ctx.w.backend() == nullptr) return 0;
  return vfs::Unknown("the model does not hold the host's extended attributes");
}

std::string_view Immutability(const vfs::Inode& i) {
  return (i.flags & vfs::kInodeImmutable) ? "immutable" : "append-only";
}

// may_write_xattr(): no attribute of an immutable or append-only inode
// changes.
int MayWriteXattr(const OpCtx& ctx, PathPos at) {
  const vfs::Inode& i = ctx.w.inode_at(at.dentry);
  if (i.flags & (vfs::kInodeImmutable | vfs::kInodeAppend)) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("{} is {}: its extended attributes cannot change", ctx.PathOf(at),
                         Immutability(i));
    });
    return EPERM;
  }
  // "Updating an xattr will likely cause i_uid and i_gid to be written
  // back improperly if their true value is unknown to the vfs."
  if (i.uid == vfs::kInvalidId || i.gid == vfs::kInvalidId) {
    ctx.Fail(Stage::kVfs, [&] {
      return fmt::format("the idmapped mount maps the {} of {} nowhere: its extended attributes "
                         "cannot change",
                         i.uid == vfs::kInvalidId ? "owner" : "group", ctx.PathOf(at));
    });
    return EPERM;
  }
  return 0;
}

// xattr_permission().
int XattrPermission(const OpCtx& ctx, PathPos at, std::string_view name, uint32_t mask) {
  const vfs::Inode& i = ctx.w.inode_at(at.dentry);
  const bool write = mask & perm::kMayWrite;
  if (write) {
    if (int err = MayWriteXattr(ctx, at)) return err;
  }
  const XattrNs ns = NamespaceOf(name);
  if (ns == XattrNs::kSecurity || ns == XattrNs::kSystem) return 0;
  if (ns == XattrNs::kTrusted) {
    if (!ctx.cred().CapableInitial(kCapSysAdmin)) {
      ctx.Fail(Stage::kCapability,
               "trusted.* attributes need CAP_SYS_ADMIN in the initial user namespace");
      return write ? EPERM : ENODATA;
    }
    return 0;
  }
  if (ns == XattrNs::kUser) {
    if (!S_ISREG(i.mode) && !S_ISDIR(i.mode)) {
      FailAt(ctx, Stage::kVfs, "{} is neither a regular file nor a directory: no user.* attributes",
             at);
      return write ? EPERM : ENODATA;
    }
    if (S_ISDIR(i.mode) && (i.mode & S_ISVTX) && write &&
        !perm::OwnerOrCapable(ctx.w, ctx.cred(), ctx.w.inode_of(at.dentry))) {
      FailAt(ctx, Stage::kSticky,
             "{} is a sticky directory: only its owner or CAP_FOWNER writes its user.* "
             "attributes",
             at);
      return EPERM;
    }
  }
  return DacCheck(ctx, at, mask, write ? "write permission on" : "read permission on");
}

// xattr_resolve_name() among tmpfs's handlers (security., trusted.,
// user.): another namespace has none, an empty suffix is invalid. btrfs
// has one more, its properties (btrfs.*), whose handler the model does
// not hold.
int ResolveName(const OpCtx& ctx, PathPos at, std::string_view name) {
  const uint32_t sb = ctx.w.sb(ctx.w.inode_at(at.dentry).sb).flags;
  if (sb & vfs::kSbProc)
    return vfs::Unknown("procfs has no attribute handlers of its own; a security module's "
                        "security.* ones aside, not modelled");
  if ((sb & vfs::kSbBtrfs) && name.starts_with("btrfs."))
    return vfs::Unknown(fmt::format(
        "\"{}\" is a btrfs property, which its own handler validates and stores "
        "(btrfs_xattr_handler_set_prop()); not modelled",
        name));
  const XattrNs ns = NamespaceOf(name);
  if (ns != XattrNs::kSecurity && ns != XattrNs::kTrusted && ns != XattrNs::kUser) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("tmpfs has no attribute namespace for \"{}\"", name); });
    return EOPNOTSUPP;
  }
  if (name.size() == PrefixOf(ns).size()) {
    ctx.Fail(Stage::kArgs, [&] { return fmt::format("\"{}\" names no attribute", name); });
    return EINVAL;
  }
  return 0;
}

// Overlay's own prefix (trusted.overlay., or user.overlay. with
// userxattr) has a handler of its own: a name that is the prefix alone is
// EINVAL (xattr_resolve_name()); any longer one is escaped onto the real
// inode (trusted.overlay.overlay.*, Linux 6.7 on) like any other name.
int OverlayOwnName(const OpCtx& ctx, PathPos at, std::string_view name) {
  const uint32_t sb = ctx.w.sb(ctx.w.inode_at(at.dentry).sb).flags;
  if (!(sb & vfs::kSbOverlay)) return 0;
  const std::string_view own =
      (sb & vfs::kSbOverlayUserXattr) ? "user.overlay." : "trusted.overlay.";
  if (name != own) return 0;
  ctx.Fail(Stage::kArgs, [&] {
    return fmt::format("\"{}\" is overlayfs's own prefix alone: it names no attribute", name);
  });
  return EINVAL;
}

// The ACL a system.posix_acl_* name stands for (kNone: none).
vfs::AclId AclOf(const vfs::Inode& i, bool is_default) {
  return is_default ? i.default_acl.get() : i.acl.get();
}

// vfs_set_acl() from set_posix_acl() on: `acl` (nullptr: remove).
int SetAcl(OpCtx& ctx, PathPos at, bool is_default, const std::vector<AclEntry>* entries) {
  vfs::World& w = ctx.w;
  const InodeId ino = w.inode_of(at.dentry);
  const vfs::Inode& i = w.inode(ino);
  if (int err = MayWriteXattr(ctx, at)) return err;
  if (w.sb(i.sb).flags & vfs::kSbProc)
    return vfs::Unknown("procfs's files take no ACLs (no ->set_acl); not modelled");
  // set_posix_acl(): tmpfs symlinks have no ->set_acl.
  if (S_ISLNK(i.mode)) {
    FailAt(ctx, Stage::kVfs, "{} is a symlink: it has no ACLs", at);
    return EOPNOTSUPP;
  }
  if (is_default && !S_ISDIR(i.mode)) {
    if (entries == nullptr) return 0;
    FailAt(ctx, Stage::kVfs, "{} is not a directory: it takes no default ACL", at);
    return EACCES;
  }
  if (!perm::OwnerOrCapable(w, ctx.cred(), ino)) {
    ctx.Fail(Stage::kDac, [&] {
      return fmt::format("setting the ACLs of {} ({}) needs the owner or CAP_FOWNER",
                         ctx.PathOf(at), DescribeInode(w, ino));
    });
    return EPERM;
  }
  std::optional<PosixAcl> acl;
  if (entries != nullptr) {
    // posix_acl_from_xattr(current_user_ns()): a named entry's id is the
    // namespace's own, refused (EINVAL) when it does not map.
    if (!ctx.cred().InInitialUserNs())
      for (const AclEntry& e : *entries)
        if (e.tag == AclTag::kUser || e.tag == AclTag::kGroup)
          return vfs::Unknown(
              "the ids of an ACL set from a user namespace are the namespace's own "
              "(posix_acl_from_xattr()); not modelled");
    auto valid = AclFromValidEntries(*entries);
    if (!valid) {
      if (valid.error() == kAclOutsideModel)
        return vfs::Unknown("an ACL whose named entries are out of order or repeated");
      ctx.Fail(Stage::kArgs, "the ACL is not valid (posix_acl_valid())");
      return valid.error();
    }
    acl = *valid;
  }
  if (!ctx.apply) return 0;
  if (is_default) {
    w.SetDefaultAcl(ino, acl ? w.InternAcl(*acl) : vfs::kNone);
    return 0;
  }
  // posix_acl_update_mode(): the mode takes the ACL's bits; an ACL a mode
  // says as well goes; setgid drops outside the group without CAP_FSETID.
  uint32_t mode = i.mode;
  vfs::AclId id = vfs::kNone;
  if (acl && !acl->EquivMode(&mode)) id = w.InternAcl(*acl);
  mode = perm::ModeSetBy(ctx.cred(), mode, i.gid, perm::Ids(i));
  w.SetModeAndAcl(ino, mode, id);
  return 0;
}

}  // namespace

template <>
int Do<pathwarden::Getxattr>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  if (int err = CheckAtFlags(ctx)) return err;
  if (int err = ImportName(ctx)) return err;
  PathPos at;
  if (int err = Target(ctx, false, &at)) return err;
  const InodeId ino = ctx.w.inode_of(at.dentry);
  const vfs::Inode& i = ctx.w.inode(ino);
  if (i.flags & vfs::kInodeOpaque) return vfs::UnknownAt(ino);
  const std::string_view name = st.xattr_name;
  if (IsPosixAclName(name)) {
    // vfs_get_acl(): no permission asked; a symlink has none to give.
    if (S_ISLNK(i.mode)) {
      FailAt(ctx, Stage::kVfs, "{} is a symlink: it has no ACLs", at);
      return EOPNOTSUPP;
    }
    if (AclOf(i, name == kXattrNameAclDefault) == vfs::kNone) {
      FailAt(ctx, Stage::kVfs, "{} has no such ACL", at);
      return ENODATA;
    }
    ctx.Ok(Stage::kVfs, "ACLs are readable by anyone who reaches the file");
    return 0;
  }
  if (int err = XattrPermission(ctx, at, name, perm::kMayRead)) return err;
  if (int err = OverlayOwnName(ctx, at, name)) return err;
  if (int err = ResolveName(ctx, at, name)) return err;
  if (int err = HostXattrsUnknown(ctx)) return err;
  auto value = vfs::FindXattr(ctx.w.xattrs(ino), name);
  if (!value) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("{} has no attribute {}", ctx.PathOf(at), name); });
    return ENODATA;
  }
  // cap_inode_getsecurity() reads security.capability through its header.
  uint32_t root = 0;
  if (name == kXattrNameCaps && !vfs::ValidFileCaps(*value, &root)) {
    ctx.Fail(Stage::kCapability, "the stored security.capability has no valid header");
    return EINVAL;
  }
  // In another user namespace it is shown in the namespace's terms, or
  // refused when its root id does not own the namespace.
  if (name == kXattrNameCaps && !ctx.cred().InInitialUserNs())
    return vfs::Unknown(
        "in a user namespace a file capability is shown in the namespace's terms "
        "(cap_inode_getsecurity()); not modelled");
  ctx.Ok(Stage::kVfs, [&] { return fmt::format("{} has {}", ctx.PathOf(at), name); });
  return 0;
}

template <>
int Do<pathwarden::Setxattr>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const std::string_view name = st.xattr_name, value = st.xattr_value;
  if (int err = CheckAtFlags(ctx)) return err;
  // setxattr_copy()
  if (st.xattr_flags & ~(kXattrCreate | kXattrReplace)) {
    ctx.Fail(Stage::kArgs, "xattr flags other than XATTR_CREATE and XATTR_REPLACE");
    return EINVAL;
  }
  if (int err = ImportName(ctx)) return err;
  if (value.size() > kXattrSizeMax) {
    ctx.Fail(Stage::kArgs, [&] {
      return fmt::format("a value of {} bytes (at most {})", value.size(), kXattrSizeMax);
    });
    return E2BIG;
  }
  PathPos at;
  if (int err = Target(ctx, true, &at)) return err;
  const InodeId ino = ctx.w.inode_of(at.dentry);
  if (ctx.w.inode(ino).flags & vfs::kInodeOpaque) return vfs::UnknownAt(ino);
  if (IsPosixAclName(name)) {
    // do_set_acl(): XATTR_CREATE and XATTR_REPLACE mean nothing here.
    std::vector<AclEntry> entries;
    if (!value.empty()) {
      auto e = AclEntriesFromXattr(value);
      if (!e) {
        ctx.Fail(Stage::kArgs, "the value is not an ACL in the xattr form");
        return e.error();
      }
      entries = std::move(*e);
    }
    const bool remove = entries.empty();
    if (int err = SetAcl(ctx, at, name == kXattrNameAclDefault, remove ? nullptr : &entries))
      return err;
    OkAt(ctx, Stage::kDac, "the ACLs of {} may change", at);
    return 0;
  }
  // vfs_setxattr(): a file capability is checked (cap_convert_nscap())
  // before the attribute's permission. Mainline converts only a value of
  // some size: an empty one is stored unchecked; other builds refuse it
  // as a value without a header (pathwarden/kernel_rules.h).
  if (name == kXattrNameCaps && value.empty()) {
    switch (ctx.t.kernel_rules().empty_file_caps) {
      case EmptyFileCaps::kStored:
        break;
      case EmptyFileCaps::kRefused:
        ctx.Fail(Stage::kCapability,
                 "an empty value is not a file capability (this kernel converts every "
                 "security.capability value: kernel rule empty_file_caps = refused)");
        return EINVAL;
      case EmptyFileCaps::kUnknown:
        return vfs::Unknown(
            "whether this kernel stores an empty security.capability or refuses it (EINVAL) "
            "could not be probed (kernel rule empty_file_caps)");
    }
  }
  if (name == kXattrNameCaps && !value.empty()) {
    uint32_t root = 0;
    const bool valid = vfs::ValidFileCaps(value, &root);
    const bool bad_root = valid && root != 0;
    if (!valid || bad_root) {
      ctx.Fail(Stage::kCapability, bad_root ? "a v3 file capability whose root id is not 0"
                                            : "the value is not a file capability (v2 or v3)");
      return EINVAL;
    }
    if (!perm::CapableWrt(ctx.cred(), kCapSetfcap, ctx.w.inode_at(at.dentry))) {
      ctx.Fail(Stage::kCapability, "setting a file capability needs CAP_SETFCAP over the file");
      return EPERM;
    }
    // In another user namespace the value is rewritten to a v3 one whose
    // root id is the namespace's root, or refused when that does not map.
    if (!ctx.cred().InInitialUserNs())
      return vfs::Unknown(
          "in a user namespace a file capability is converted to the namespace's root "
          "(cap_convert_nscap()); not modelled");
  }
  if (int err = XattrPermission(ctx, at, name, perm::kMayWrite)) return err;
  // cap_inode_setxattr(): CAP_SYS_ADMIN over the superblock's user
  // namespace (one mounted inside a user namespace belongs to it), which
  // the model does not hold: CapableOver().
  if (NamespaceOf(name) == XattrNs::kSecurity && name != kXattrNameCaps &&
      !ctx.cred().CapableOver(kCapSysAdmin)) {
    ctx.Fail(Stage::kCapability, "security.* attributes other than security.capability need CAP_SYS_ADMIN");
    return EPERM;
  }
  if (int err = OverlayOwnName(ctx, at, name)) return err;
  if (int err = ResolveName(ctx, at, name)) return err;
  // Linux: fs/btrfs/xattr.c btrfs_xattr_handler_set(), first in it.
  if (int err = SubvolReadonly(ctx, at, "a change of its extended attributes")) return err;
  if (st.xattr_flags & (kXattrCreate | kXattrReplace)) {
    if (int err = HostXattrsUnknown(ctx)) return err;
  }
  const std::string_view set = ctx.w.xattrs(ino);
  const bool exists = vfs::FindXattr(set, name).has_value();
  // simple_xattr_set()
  if (exists && (st.xattr_flags & kXattrCreate)) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("{} already has {} (XATTR_CREATE)", ctx.PathOf(at), name); });
    return EEXIST;
  }
  if (!exists && (st.xattr_flags & kXattrReplace)) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("{} has no {} (XATTR_REPLACE)", ctx.PathOf(at), name); });
    return ENODATA;
  }
  ctx.Ok(Stage::kVfs, [&] { return fmt::format("{} of {} may be set", name, ctx.PathOf(at)); });
  if (!ctx.apply) return 0;
  vfs::XattrMap m = vfs::DecodeXattrs(set);
  m[std::string(name)] = std::string(value);
  ctx.w.SetXattrs(ino, vfs::EncodeXattrs(m));
  return 0;
}

template <>
int Do<pathwarden::Listxattr>(OpCtx& ctx) {
  if (int err = CheckAtFlags(ctx)) return err;
  PathPos at;
  if (int err = Target(ctx, false, &at)) return err;
  const InodeId ino = ctx.w.inode_of(at.dentry);
  // Linux: fs/fuse/xattr.c fuse_listxattr().
  if (int err = FuseGate(ctx, at, "listing its attributes")) return err;
  if (ctx.w.inode(ino).flags & vfs::kInodeOpaque) return vfs::UnknownAt(ino);
  // simple_xattr_list(): no permission; trusted.* names are left out
  // without CAP_SYS_ADMIN.
  ctx.Ok(Stage::kVfs, ctx.cred().CapableInitial(kCapSysAdmin)
                          ? "listing attributes needs no permission"
                          : "listing attributes needs no permission (trusted.* left out without "
                            "CAP_SYS_ADMIN)");
  return 0;
}

template <>
int Do<pathwarden::Removexattr>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const std::string_view name = st.xattr_name;
  if (int err = CheckAtFlags(ctx)) return err;
  if (int err = ImportName(ctx)) return err;
  PathPos at;
  if (int err = Target(ctx, true, &at)) return err;
  const InodeId ino = ctx.w.inode_of(at.dentry);
  if (ctx.w.inode(ino).flags & vfs::kInodeOpaque) return vfs::UnknownAt(ino);
  if (IsPosixAclName(name)) {
    if (int err = SetAcl(ctx, at, name == kXattrNameAclDefault, nullptr)) return err;
    OkAt(ctx, Stage::kDac, "the ACLs of {} may change", at);
    return 0;
  }
  if (int err = XattrPermission(ctx, at, name, perm::kMayWrite)) return err;
  // cap_inode_removexattr()
  if (name == kXattrNameCaps) {
    if (!perm::CapableWrt(ctx.cred(), kCapSetfcap, ctx.w.inode(ino))) {
      ctx.Fail(Stage::kCapability, "removing a file capability needs CAP_SETFCAP over the file");
      return EPERM;
    }
  } else if (NamespaceOf(name) == XattrNs::kSecurity && !ctx.cred().CapableOver(kCapSysAdmin)) {
    ctx.Fail(Stage::kCapability, "security.* attributes other than security.capability need CAP_SYS_ADMIN");
    return EPERM;
  }
  if (int err = OverlayOwnName(ctx, at, name)) return err;
  if (int err = ResolveName(ctx, at, name)) return err;
  if (int err = SubvolReadonly(ctx, at, "a change of its extended attributes")) return err;
  if (int err = HostXattrsUnknown(ctx)) return err;
  const std::string_view set = ctx.w.xattrs(ino);
  if (!vfs::FindXattr(set, name)) {
    ctx.Fail(Stage::kVfs, [&] { return fmt::format("{} has no attribute {}", ctx.PathOf(at), name); });
    return ENODATA;
  }
  ctx.Ok(Stage::kVfs, [&] { return fmt::format("{} of {} may be removed", name, ctx.PathOf(at)); });
  if (!ctx.apply) return 0;
  vfs::XattrMap m = vfs::DecodeXattrs(set);
  m.erase(std::string(name));
  ctx.w.SetXattrs(ino, vfs::EncodeXattrs(m));
  return 0;
}

}  // namespace pathwarden::ops
