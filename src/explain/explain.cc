// Reasons in human sentences.

#include "src/explain/explain.h"

#include <cerrno>

#include <fmt/format.h>

#include "src/vfs/backend.h"

namespace pathwarden {

using perm::PermCheck;
using Via = PermCheck::Via;

std::string_view StageName(Stage s) {
  switch (s) {
    case Stage::kNone: return "none";
    case Stage::kArgs: return "args";
    case Stage::kWalk: return "walk";
    case Stage::kDac: return "dac";
    case Stage::kMount: return "mount";
    case Stage::kSticky: return "sticky";
    case Stage::kProtected: return "protected";
    case Stage::kVfs: return "vfs";
    case Stage::kCapability: return "capability";
    case Stage::kLandlock: return "landlock";
    case Stage::kFd: return "fd";
    case Stage::kUnix: return "unix";
  }
  return "?";
}

std::string ReasonLine(Stage stage, std::string_view text) {
  if (stage == Stage::kNone) return std::string(text);
  return fmt::format("{}: {}", StageName(stage), text);
}

Reason FailedClosedReason(Reason r, const char* what) {
  r.stage = Stage::kNone;
  r.text = fmt::format("internal error: {}", what);
  r.unknown_why.clear();
  return r;
}

std::string Explainer::Line() const { return ReasonLine(r_.stage, r_.text); }

std::string Decision::ToText() const { return ReasonLine(reason().stage, reason().text); }

const Reason& Decision::EmptyReason() {
  static const Reason kEmpty;
  return kEmpty;
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kAllowed: return "allowed";
    case Verdict::kDenied: return "denied";
    case Verdict::kUnknown: return "unknown";
  }
  return "?";
}

std::string_view PermClassName(PermClass c) {
  switch (c) {
    case PermClass::kNone: return "none";
    case PermClass::kOwner: return "owner";
    case PermClass::kAclUser: return "acl-user";
    case PermClass::kGroup: return "group";
    case PermClass::kAclGroup: return "acl-group";
    case PermClass::kOther: return "other";
    case PermClass::kAclOther: return "acl-other";
    case PermClass::kAllHave: return "all";
    case PermClass::kCapability: return "capability";
    case PermClass::kReadonly: return "read-only";
    case PermClass::kImmutable: return "immutable";
    case PermClass::kFastSearch: return "fast-search";
    case PermClass::kUnknown: return "unknown";
    case PermClass::kUnmappedId: return "unmapped-id";
    case PermClass::kFuseMounterOnly: return "fuse-mounter-only";
  }
  return "?";
}

std::string ModeString(uint32_t mode) {
  std::string s(10, '-');
  switch (mode & S_IFMT) {
    case S_IFDIR: s[0] = 'd'; break;
    case S_IFLNK: s[0] = 'l'; break;
    case S_IFIFO: s[0] = 'p'; break;
    case S_IFSOCK: s[0] = 's'; break;
    case S_IFCHR: s[0] = 'c'; break;
    case S_IFBLK: s[0] = 'b'; break;
    default: break;
  }
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i)
    if (mode & (0400u >> i)) s[1 + i] = rwx[i];
  if (mode & S_ISUID) s[3] = (mode & 0100) ? 's' : 'S';
  if (mode & S_ISGID) s[6] = (mode & 0010) ? 's' : 'S';
  if (mode & S_ISVTX) s[9] = (mode & 0001) ? 't' : 'T';
  return s;
}

std::string_view TypeName(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "dir";
    case S_IFLNK: return "symlink";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "socket";
    case S_IFCHR: return "char";
    case S_IFBLK: return "block";
    default: return "file";
  }
}

std::string WantString(uint32_t want) {
  std::string s;
  if (want & perm::kMayRead) s += 'r';
  if (want & perm::kMayWrite) s += 'w';
  if (want & perm::kMayExec) s += 'x';
  return s.empty() ? "-" : s;
}

std::string DescribeInode(const vfs::World& w, vfs::InodeId ino) {
  const vfs::Inode& i = w.inode(ino);
  return fmt::format("{}{} {}:{}", ModeString(i.mode),
                     i.acl != vfs::kNone ? "+" : "", i.uid.get(), i.gid.get());
}

std::string DescribePerm(const vfs::World& w, const Cred& cred,
                         vfs::InodeId ino, const PermCheck& pc) {
  const vfs::Inode& i = w.inode(ino);
  const std::string want = WantString(pc.want);
  auto verdict = [&](uint32_t bits) {
    std::string b = PermString(bits);
    if ((pc.want & ~bits) == 0) return fmt::format("{} has {}", b, want);
    return fmt::format("{} lacks {}", b, WantString(pc.want & ~bits));
  };
  switch (pc.via) {
    case Via::kOwner:
      return fmt::format("uid {} is the owner: {}", cred.fsuid, verdict(pc.bits));
    case Via::kGroup:
      return fmt::format("uid {} is in group {}: {}", cred.fsuid, i.gid.get(),
                         verdict(pc.bits));
    case Via::kOther:
      return fmt::format("uid {} falls in \"other\": {}", cred.fsuid,
                         verdict(pc.bits));
    case Via::kAclUser:
      return fmt::format("ACL entry u:{}:{} masked by m::{}: {}", pc.entry_id,
                         PermString(pc.bits), PermString(pc.mask),
                         verdict(pc.bits & pc.mask));
    case Via::kAclGroup:
      if (pc.entry_id == 0 && cred.InGroup(i.gid))
        return fmt::format("ACL entry g::{} (owning group {}) masked by m::{}: {}",
                           PermString(pc.bits), i.gid.get(), PermString(pc.mask),
                           verdict(pc.bits & pc.mask));
      return fmt::format("ACL entry g:{}:{} masked by m::{}: {}", pc.entry_id,
                         PermString(pc.bits), PermString(pc.mask),
                         verdict(pc.bits & pc.mask));
    case Via::kAclOther:
      return fmt::format("uid {} falls in the ACL's \"other\": {}", cred.fsuid,
                         verdict(pc.bits));
    case Via::kAllHave:
      return fmt::format("every class has {}", want);
    case Via::kCapOverride:
      return "CAP_DAC_OVERRIDE grants it";
    case Via::kCapReadSearch:
      return "CAP_DAC_READ_SEARCH grants it";
    case Via::kReadonlySb:
      return "the filesystem is read-only";
    case Via::kImmutable:
      return "the inode is immutable";
    case Via::kUnmappedId:
      return "the idmapped mount maps its owner or group nowhere: no write";
    case Via::kReadonlySubvol:
      return "its btrfs subvolume is read-only (a read-only snapshot or subvolume)";
    case Via::kProcSys:
      if (pc.entry_id == 3) return "no file under /proc/sys executes (proc_sys_permission())";
      return fmt::format(
          "the sysctl's mode read as its {} bits (proc_sys_permission(): {}; {}): {}",
          pc.entry_id == 0 ? "owner" : pc.entry_id == 1 ? "group" : "other",
          pc.entry_id == 0 ? "euid 0" : pc.entry_id == 1 ? "in group 0" : "neither euid 0 nor group 0",
          (i.flags & vfs::kInodeProcSysNet)
              ? "CAP_NET_ADMIN gives everyone the owner bits of a network sysctl, no other "
                "capability counts"
          : (i.flags & vfs::kInodeProcSysUser)
              ? "CAP_SYS_RESOURCE gives everyone the owner bits of a user namespace sysctl, "
                "the rest read at most; no other capability counts"
              : "capabilities do not count",
          verdict(pc.bits));
    case Via::kFuseGate:
      return DescribeFuseGate(w.sb_fuse(w.inode(ino).sb));
    case Via::kInternal:
      return "the check failed closed (internal error)";
    case Via::kUnknown:
      return "not known: its filesystem decides, or it could not be read";
  }
  return "?";
}

std::string DescribeFuseGate(const vfs::SbFuse* gate) {
  if (gate == nullptr) return "a FUSE inode without its mount's gate (failed closed)";
  return fmt::format("its FUSE mount, without allow_other, admits only uid {} and gid {} (real, "
                     "effective and saved ids; fuse_allow_current_process())",
                     gate->uid, gate->gid);
}

std::string DescribeCheck(const vfs::World& w, const Cred& cred,
                          vfs::PathPos at, vfs::PathPos root,
                          const PermCheck& pc) {
  vfs::InodeId ino = w.inode_of(at.dentry);
  std::string s = fmt::format("{} ({}; {}", w.DisplayPathOf(at, root),
                              DescribeInode(w, ino), DescribePerm(w, cred, ino, pc));
  if (pc.exec_lacks_x) s += "; CAP_DAC_OVERRIDE needs some x bit to execute";
  // Held, but in a user namespace the inode's ids do not map into.
  if (pc.err == EACCES && !cred.InInitialUserNs() &&
      (cred.Capable(kCapDacOverride) || cred.Capable(kCapDacReadSearch))) {
    const vfs::Inode& i = w.inode(ino);
    const bool uid_maps = cred.userns->ShownUidMaps(i.uid);
    if (!uid_maps || !cred.userns->ShownGidMaps(i.gid))
      s += fmt::format(
          "; its user namespace's CAP_DAC_* do not apply: {} {} does not map into it",
          uid_maps ? "group" : "owner", uid_maps ? i.gid.get() : i.uid.get());
  }
  return s + ")";
}

void FillObject(const vfs::World& w, vfs::PathPos at, PermVerdict* v) {
  const vfs::Inode& i = w.inode_at(at.dentry);
  v->mode = i.mode;
  v->uid = i.uid;
  v->gid = i.gid;
  v->has_acl = i.acl != vfs::kNone;
  if ((w.sb(i.sb).flags & vfs::kSbOverlay) && w.backend() != nullptr)
    v->layer = w.backend()->Layer(w, at.dentry);
}

PermVerdict VerdictOf(const vfs::World& w, vfs::PathPos at, std::string path,
                      const perm::PermCheck& pc) {
  PermVerdict v;
  v.path = std::move(path);
  v.want = pc.want;
  v.granted = pc.err == 0;
  switch (pc.via) {
    case Via::kOwner: v.decided_by = PermClass::kOwner; break;
    case Via::kGroup: v.decided_by = PermClass::kGroup; break;
    case Via::kOther: v.decided_by = PermClass::kOther; break;
    case Via::kAclUser: v.decided_by = PermClass::kAclUser; break;
    case Via::kAclGroup: v.decided_by = PermClass::kAclGroup; break;
    case Via::kAclOther: v.decided_by = PermClass::kAclOther; break;
    case Via::kAllHave: v.decided_by = PermClass::kAllHave; break;
    case Via::kCapOverride:
      v.decided_by = PermClass::kCapability;
      v.capability = kCapDacOverride;
      break;
    case Via::kCapReadSearch:
      v.decided_by = PermClass::kCapability;
      v.capability = kCapDacReadSearch;
      break;
    case Via::kReadonlySb:
    case Via::kReadonlySubvol: v.decided_by = PermClass::kReadonly; break;
    case Via::kImmutable: v.decided_by = PermClass::kImmutable; break;
    case Via::kUnmappedId: v.decided_by = PermClass::kUnmappedId; break;
    case Via::kFuseGate: v.decided_by = PermClass::kFuseMounterOnly; break;
    case Via::kProcSys:
      v.decided_by = pc.entry_id == 0   ? PermClass::kOwner
                     : pc.entry_id == 1 ? PermClass::kGroup
                     : pc.entry_id == 2 ? PermClass::kOther
                                        : PermClass::kNone;
      break;
    case Via::kInternal: v.decided_by = PermClass::kNone; break;
    case Via::kUnknown: v.decided_by = PermClass::kUnknown; break;
  }
  if (pc.via == Via::kAclUser || pc.via == Via::kAclGroup) v.acl_id = pc.entry_id;
  FillObject(w, at, &v);
  return v;
}

}  // namespace pathwarden
