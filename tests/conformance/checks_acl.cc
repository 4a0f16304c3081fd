// POSIX ACL checks: setting them (the owner or CAP_FOWNER), the mode they
// mirror, the default ACL a new object inherits, and the access they
// grant (one matching group entry must grant all of it; the mask).
//
// Linux: fs/posix_acl.c posix_acl_permission(), set_posix_acl(),
// posix_acl_chmod(), posix_acl_create(); fs/xattr.c (the system.posix_acl_*
// names).

#include <acl/libacl.h>
#include <fcntl.h>
#include <sys/acl.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "tests/conformance/conformance.h"

namespace pathwarden::conformance {
namespace {

std::string SetAclOp(const char* path, const char* text, bool default_acl = false) {
  acl_t acl = acl_from_text(text);
  if (acl == nullptr) return "acl_from_text " + ErrnoName(errno);
  std::string r = Result(acl_set_file(path, default_acl ? ACL_TYPE_DEFAULT : ACL_TYPE_ACCESS, acl));
  acl_free(acl);
  return r;
}

}  // namespace

void AddAclChecks() {
  auto file = [](uid_t u, gid_t g, mode_t m) { return [=] { MkFile("f", u, g, m); }; };
  auto sa = [] { return Stat("f") + " " + Acl("f"); };
  const char* kAcl = "u::rw-,u:1001:r--,g::r--,m::r--,o::---";
  // Setting an ACL: the owner or CAP_FOWNER; the mode follows it.
  Add(
      "acl.set.owner", U1000(), file(1000, 1000, 0644), [=] { return SetAclOp("f", kAcl); }, sa,
      "ok f=f0640,1000:1000 f.acl=u::rw-,u:1001:r--,g::r--,m::r--,o::---");
  Add(
      "acl.set.owner-readonly-file", U1000(), file(1000, 1000, 0444),
      [=] { return SetAclOp("f", kAcl); }, sa,
      "ok f=f0640,1000:1000 f.acl=u::rw-,u:1001:r--,g::r--,m::r--,o::---");
  Add(
      "acl.set.nonowner-writable", U1001(), file(1000, 1000, 0666),
      [=] { return SetAclOp("f", kAcl); }, sa,
      "EPERM f=f0666,1000:1000 f.acl=u::rw-,g::rw-,o::rw-");
  Add(
      "acl.set.cap-fowner", U1001().With({CAP_FOWNER}), file(1000, 1000, 0644),
      [=] { return SetAclOp("f", kAcl); }, sa,
      "ok f=f0640,1000:1000 f.acl=u::rw-,u:1001:r--,g::r--,m::r--,o::---");
  Add(
      "acl.set.root", Root(), file(1000, 1000, 0644), [=] { return SetAclOp("f", kAcl); }, sa,
      "ok f=f0640,1000:1000 f.acl=u::rw-,u:1001:r--,g::r--,m::r--,o::---");
  Add(
      "acl.set.root-nocaps", RootNoCaps(), file(1000, 1000, 0644),
      [=] { return SetAclOp("f", kAcl); }, sa,
      "EPERM f=f0644,1000:1000 f.acl=u::rw-,g::r--,o::r--");
  Add(
      "acl.set.minimal-sets-mode", U1000(), file(1000, 1000, 0644),
      [] { return SetAclOp("f", "u::rwx,g::r-x,o::--x"); },
      [] { return Stat("f") + " " + Xattrs("f"); }, "ok f=f0751,1000:1000 f.xattrs=");
  Add(
      "acl.set.clears-setgid-nonmember", U1000(), file(1000, 2001, 02660),
      [] { return SetAclOp("f", "u::rw-,u:1001:r--,g::rw-,m::rw-,o::---"); }, sa,
      "ok f=f0660,1000:2001 f.acl=u::rw-,u:1001:r--,g::rw-,m::rw-,o::---");
  Add(
      "acl.set.keeps-setgid-member", U1000(), file(1000, 100, 02660),
      [] { return SetAclOp("f", "u::rw-,u:1001:r--,g::rw-,m::rw-,o::---"); }, sa,
      "ok f=f2660,1000:100 f.acl=u::rw-,u:1001:r--,g::rw-,m::rw-,o::---");
  Add(
      "acl.set.default-on-file", U1000(), file(1000, 1000, 0644),
      [] { return SetAclOp("f", "u::rwx,g::r-x,o::r-x", true); }, nullptr, "EACCES");
  Add(
      "acl.set.default-on-dir-owner", U1000(), [] { MkDir("f", 1000, 1000, 0755); },
      [=] { return SetAclOp("f", kAcl, true); }, [] { return Acl("f", true); },
      "ok f.dacl=u::rw-,u:1001:r--,g::r--,m::r--,o::---");
  Add(
      "acl.set.default-on-dir-nonowner", U1001(), [] { MkDir("f", 1000, 1000, 0777); },
      [=] { return SetAclOp("f", kAcl, true); }, [] { return Acl("f", true); },
      "EPERM f.dacl=none");
  Add(
      "acl.set.symlink-follows", U1000(),
      [] {
        MkFile("t", 1000, 1000, 0644);
        MkSymlink("t", "f", 1001, 1001);
      },
      [=] { return SetAclOp("f", kAcl); }, [] { return Acl("t"); },
      "ok t.acl=u::rw-,u:1001:r--,g::r--,m::r--,o::---");
  Add(
      "acl.remove.nonowner", U1001(),
      [=] {
        MkFile("f", 1000, 1000, 0666);
        SetAcl("f", "u::rw-,u:1001:rw-,g::rw-,m::rw-,o::rw-");
      },
      [] { return Result(lremovexattr("f", "system.posix_acl_access")); },
      [] { return Xattrs("f"); }, "EPERM f.xattrs=system.posix_acl_access");
  Add(
      "acl.remove.owner", U1000(),
      [=] {
        MkFile("f", 1000, 1000, 0666);
        SetAcl("f", "u::rw-,u:1001:rw-,g::rw-,m::r--,o::rw-");
      },
      [] { return Result(lremovexattr("f", "system.posix_acl_access")); }, sa,
      "ok f=f0646,1000:1000 f.acl=u::rw-,g::r--,o::rw-");
  Add(
      "acl.get.nonowner-unreadable", U1001(),
      [=] {
        MkFile("f", 1000, 1000, 0600);
        SetAcl("f", "u::rw-,u:1002:r--,g::---,m::r--,o::---");
      },
      [] {
        acl_t acl = acl_get_file("f", ACL_TYPE_ACCESS);
        if (acl == nullptr) return ErrnoName(errno);
        char* text = acl_to_any_text(acl, nullptr, ',', TEXT_ABBREVIATE | TEXT_NUMERIC_IDS);
        std::string r = "ok " + std::string(text != nullptr ? text : "?");
        acl_free(text);
        acl_free(acl);
        return r;
      },
      nullptr, "ok u::rw-,u:1002:r--,g::---,m::r--,o::---");
  // chmod rewrites the mask, not the group entry.
  Add(
      "acl.chmod.sets-mask", U1000(),
      [=] {
        MkFile("f", 1000, 1000, 0644);
        SetAcl("f", "u::rw-,u:1001:rw-,g::r--,m::rw-,o::---");
      },
      [] { return Result(chmod("f", 0640)); }, sa,
      "ok f=f0640,1000:1000 f.acl=u::rw-,u:1001:rw-,g::r--,m::r--,o::---");
  Add(
      "acl.chmod.nonowner", U1001(),
      [=] {
        MkFile("f", 1000, 1000, 0644);
        SetAcl("f", "u::rw-,u:1001:rw-,g::r--,m::rw-,o::---");
      },
      [] { return Result(chmod("f", 0600)); }, sa,
      "EPERM f=f0660,1000:1000 f.acl=u::rw-,u:1001:rw-,g::r--,m::rw-,o::---");
  Add(
      "acl.chown.keeps-acl", Root(),
      [=] {
        MkFile("f", 1000, 1000, 0644);
        SetAcl("f", "u::rw-,u:1001:rw-,g::r--,m::rw-,o::---");
      },
      [] { return Result(chown("f", 1002, 2001)); }, sa,
      "ok f=f0660,1002:2001 f.acl=u::rw-,u:1001:rw-,g::r--,m::rw-,o::---");

  // Access through ACLs: the owner's entry, named users, the group class
  // (owning group and named groups, any one granting everything asked),
  // the mask, other.
  struct Row {
    const char* name;
    gid_t g;
    const char* acl;
    const Identity& who;
    int flags;
    const char* want;
  };
  const Row rows[] = {
      {"named-user.rw", 1000, "u::rw-,u:1001:rw-,g::---,m::rw-,o::---", U1001(), O_RDWR, "ok"},
      {"named-user.other-denied", 1000, "u::rw-,u:1001:rw-,g::---,m::rw-,o::---", U1002(), O_RDONLY,
       "EACCES"},
      {"named-user.mask-limits-write", 1000, "u::rw-,u:1001:rw-,g::---,m::r--,o::---", U1001(),
       O_WRONLY, "EACCES"},
      {"named-user.mask-limits-read-ok", 1000, "u::rw-,u:1001:rw-,g::---,m::r--,o::---", U1001(),
       O_RDONLY, "ok"},
      {"named-user.no-fallthrough-to-group", 100, "u::rw-,u:1001:---,g::rw-,m::rw-,o::rw-", U1001(),
       O_RDONLY, "EACCES"},
      {"named-user.no-fallthrough-to-other", 1000, "u::rw-,u:1001:---,g::---,m::rw-,o::rw-",
       U1001(), O_RDONLY, "EACCES"},
      {"owner.ignores-mask", 1000, "u::rw-,u:1001:r--,g::---,m::---,o::---", U1000(), O_RDWR, "ok"},
      {"owner.ignores-named-entry", 1000, "u::r--,u:1000:rw-,g::---,m::rw-,o::---", U1000(),
       O_WRONLY, "EACCES"},
      {"owner.no-fallthrough-to-other", 1000, "u::---,g::rw-,m::rw-,o::rw-", U1000(), O_RDONLY,
       "EACCES"},
      {"group-obj.mask-limits", 100, "u::rw-,u:1002:r--,g::rw-,m::r--,o::---", U1001(), O_WRONLY,
       "EACCES"},
      {"group-obj.mask-allows", 100, "u::rw-,u:1002:r--,g::rw-,m::rw-,o::---", U1001(), O_WRONLY,
       "ok"},
      {"named-group.supplementary", 1000, "u::rw-,g::---,g:2000:rw-,m::rw-,o::---", U1001(), O_RDWR,
       "ok"},
      {"named-group.primary", 1000, "u::rw-,g::---,g:2000:rw-,m::rw-,o::---", U1003(), O_RDWR,
       "ok"},
      {"named-group.nonmember", 1000, "u::rw-,g::---,g:2000:rw-,m::rw-,o::---", U1002(), O_RDONLY,
       "EACCES"},
      {"named-group.mask-limits", 1000, "u::rw-,g::---,g:2000:rw-,m::r--,o::---", U1001(), O_RDWR,
       "EACCES"},
      {"named-group.no-fallthrough-to-other", 1000, "u::rw-,g::---,g:2000:r--,m::rwx,o::rw-",
       U1001(), O_WRONLY, "EACCES"},
      {"named-group.other-not-in-group", 1000, "u::rw-,g::---,g:2000:r--,m::rwx,o::rw-", U1002(),
       O_WRONLY, "ok"},
      {"group.one-entry-grants-write", 100, "u::rw-,g::r--,g:2000:-w-,m::rw-,o::---", U1001(),
       O_WRONLY, "ok"},
      {"group.one-entry-grants-read", 100, "u::rw-,g::r--,g:2000:-w-,m::rw-,o::---", U1001(),
       O_RDONLY, "ok"},
      {"group.entries-not-combined", 100, "u::rw-,g::r--,g:2000:-w-,m::rw-,o::---", U1001(), O_RDWR,
       "EACCES"},
      {"named-user-before-group", 100, "u::rw-,u:1001:r--,g::rw-,m::rw-,o::---", U1001(), O_WRONLY,
       "EACCES"},
      {"other.no-entry-matches", 1000, "u::---,u:1001:---,g::---,g:2000:---,m::---,o::r--", U1002(),
       O_RDONLY, "ok"},
      {"other.mask-not-applied", 1000, "u::---,u:1001:---,g::---,m::---,o::rw-", U1002(), O_RDWR,
       "ok"},
      {"cap-dac-override.ignores-acl", 1000, "u::---,u:1002:---,g::---,m::---,o::---",
       U1002().With({CAP_DAC_OVERRIDE}), O_RDWR, "ok"},
  };
  for (const Row& r : rows) {
    std::string acl = r.acl;
    gid_t g = r.g;
    int flags = r.flags;
    Add(
        std::string("acl.access.") + r.name, r.who,
        [acl, g] {
          MkFile("f", 1000, g, 0600);
          SetAcl("f", acl);
        },
        [flags] { return Open("f", flags); }, nullptr, r.want);
  }
  Add(
      "acl.access.named-user-access-w", U1001(),
      [] {
        MkFile("f", 1000, 1000, 0600);
        SetAcl("f", "u::rw-,u:1001:rw-,g::---,m::rw-,o::---");
      },
      [] { return Result(access("f", W_OK)); }, nullptr, "ok");
  Add(
      "acl.access.named-user-access-x-denied", U1001(),
      [] {
        MkFile("f", 1000, 1000, 0600);
        SetAcl("f", "u::rwx,u:1001:rwx,g::---,m::rw-,o::---");
      },
      [] { return Result(access("f", X_OK)); }, nullptr, "EACCES");
  Add(
      "acl.access.dir-search-named-user", U1001(),
      [] {
        MkDir("d", 0, 0, 0700);
        SetAcl("d", "u::rwx,u:1001:--x,g::---,m::--x,o::---");
        MkFile("d/f", 0, 0, 0644);
      },
      [] { return Open("d/f", O_RDONLY); }, nullptr, "ok");
  Add(
      "acl.access.dir-search-other-denied", U1002(),
      [] {
        MkDir("d", 0, 0, 0700);
        SetAcl("d", "u::rwx,u:1001:--x,g::---,m::--x,o::---");
        MkFile("d/f", 0, 0, 0644);
      },
      [] { return Open("d/f", O_RDONLY); }, nullptr, "EACCES");
  Add(
      "acl.access.dir-create-named-group", U1001(),
      [] {
        MkDir("d", 0, 0, 0755);
        SetAcl("d", "u::rwx,g::r-x,g:2000:rwx,m::rwx,o::r-x");
      },
      [] { return Open("d/n", O_WRONLY | O_CREAT, 0644); }, [] { return Stat("d/n"); },
      "ok d/n=f0644,1001:1001");
  Add(
      "acl.access.dir-delete-mask-denied", U1001(),
      [] {
        MkDir("d", 0, 0, 0755);
        MkFile("d/f", 0, 0, 0644);
        SetAcl("d", "u::rwx,g::r-x,g:2000:rwx,m::r-x,o::r-x");
      },
      [] { return Result(unlink("d/f")); }, [] { return Stat("d/f"); }, "EACCES d/f=f0644,0:0");
  Add(
      "acl.access.xattr-user-named-user-write", U1001(),
      [] {
        MkFile("f", 1000, 1000, 0644);
        SetAcl("f", "u::rw-,u:1001:rw-,g::r--,m::rw-,o::r--");
      },
      [] { return SetXattrOp("f", "user.new"); }, [] { return Xattrs("f"); },
      "ok f.xattrs=system.posix_acl_access,user.new");
  Add(
      "acl.access.truncate-named-group", U1003(),
      [] {
        MkFile("f", 1000, 1000, 0644, "hello");
        SetAcl("f", "u::rw-,g::r--,g:2000:rw-,m::rw-,o::r--");
      },
      [] { return TruncateOp("f", 0); }, [] { return Size("f"); }, "ok f.size=0");
  Add(
      "acl.access.utimensat-null-named-user", U1001(),
      [] {
        MkFile("f", 1000, 1000, 0644);
        SetAcl("f", "u::rw-,u:1001:rw-,g::r--,m::rw-,o::r--");
      },
      [] { return Result(utimensat(AT_FDCWD, "f", nullptr, 0)); }, nullptr, "ok");
}

}  // namespace pathwarden::conformance
