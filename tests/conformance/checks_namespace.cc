// Checks of the name space: link, unlink, rmdir, rename, mkdir, mknod,
// symlink.
//
// Linux: fs/namei.c may_create() and may_delete() (write and search on
// the parent, check_sticky(): the file's owner, the directory's owner or
// CAP_FOWNER), may_linkat() (protected_hardlinks), vfs_rename() (a
// directory moved to another parent needs write on itself, for '..'),
// vfs_mknod() (CAP_MKNOD for devices, after may_create()),
// filename_create() (EEXIST before may_create()).

#include <fcntl.h>
#include <stdio.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <string>

#include "tests/conformance/conformance.h"

namespace pathwarden::conformance {
namespace {

std::string Link(const char* from, const char* to) { return Result(link(from, to)); }
std::string Rename(const char* from, const char* to, unsigned flags = 0) {
  return Result(renameat2(AT_FDCWD, from, AT_FDCWD, to, flags));
}

void AddLink() {
  const Sysctls& s = HostSysctls();
  auto src = [](uid_t u, gid_t g, mode_t m) {
    return [=] {
      MkDir("d", 0, 0, 0777);
      MkFile("f", u, g, m);
    };
  };
  auto st = [] { return Stat("d/l"); };
  Add("link.owner", U1000(), src(1000, 1000, 0600), [] { return Link("f", "d/l"); }, st, "ok d/l=f0600,1000:1000");
  Add("link.root", Root(), src(1000, 1000, 0), [] { return Link("f", "d/l"); }, st, "ok d/l=f0000,1000:1000");
  Add("link.protected.nonowner-no-access", U1001(), src(1000, 1000, 0600), [] { return Link("f", "d/l"); }, st,
      s.hardlinks ? "EPERM d/l=absent" : "ok d/l=f0600,1000:1000");
  Add("link.protected.nonowner-read-only", U1001(), src(1000, 1000, 0644), [] { return Link("f", "d/l"); }, st,
      s.hardlinks ? "EPERM d/l=absent" : "ok d/l=f0644,1000:1000");
  Add("link.protected.nonowner-read-write", U1001(), src(1000, 1000, 0666), [] { return Link("f", "d/l"); }, st,
      "ok d/l=f0666,1000:1000");
  Add("link.protected.nonowner-rw-via-group", U1001(), src(1000, 2000, 0660), [] { return Link("f", "d/l"); }, st,
      "ok d/l=f0660,1000:2000");
  Add("link.protected.nonowner-setuid-rw", U1001(), src(1000, 1000, 04666), [] { return Link("f", "d/l"); }, st,
      s.hardlinks ? "EPERM d/l=absent" : "ok d/l=f4666,1000:1000");
  Add("link.protected.nonowner-setgid-group-exec", U1001(), src(1000, 1000, 02676), [] { return Link("f", "d/l"); },
      st, s.hardlinks ? "EPERM d/l=absent" : "ok d/l=f2676,1000:1000");
  Add("link.protected.nonowner-setgid-no-group-exec", U1001(), src(1000, 1000, 02666),
      [] { return Link("f", "d/l"); }, st, "ok d/l=f2666,1000:1000");
  Add("link.protected.owner-setuid", U1000(), src(1000, 1000, 04755), [] { return Link("f", "d/l"); }, st,
      "ok d/l=f4755,1000:1000");
  Add("link.protected.cap-fowner", U1001().With({CAP_FOWNER}), src(1000, 1000, 0600), [] { return Link("f", "d/l"); },
      st, "ok d/l=f0600,1000:1000");
  Add("link.protected.root-nocaps", RootNoCaps(), src(1000, 1000, 0600), [] { return Link("f", "d/l"); }, st,
      s.hardlinks ? "EPERM d/l=absent" : "ok d/l=f0600,1000:1000");
  Add("link.protected.nonowner-fifo-rw", U1001(),
      [] {
        MkDir("d", 0, 0, 0777);
        MkFifo("f", 1000, 1000, 0666);
      },
      [] { return Link("f", "d/l"); }, st, s.hardlinks ? "EPERM d/l=absent" : "ok d/l=p0666,1000:1000");
  Add("link.target-dir-no-write", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0555);
        MkFile("f", 1000, 1000, 0644);
      },
      [] { return Link("f", "d/l"); }, st, "EACCES d/l=absent");
  Add("link.target-dir-no-search", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0666);
        MkFile("f", 1000, 1000, 0644);
      },
      [] { return Link("f", "d/l"); }, st, "EACCES d/l=absent");
  Add("link.source-dir-no-search", U1000(),
      [] {
        MkDir("d", 0, 0, 0777);
        MkDir("s", 0, 0, 0700);
        MkFile("s/f", 1000, 1000, 0644);
      },
      [] { return Link("s/f", "d/l"); }, st, "EACCES d/l=absent");
  Add("link.source-dir-no-write-ok", U1000(),
      [] {
        MkDir("d", 0, 0, 0777);
        MkDir("s", 0, 0, 0555);
        MkFile("s/f", 1000, 1000, 0644);
      },
      [] { return Link("s/f", "d/l"); }, st, "ok d/l=f0644,1000:1000");
  Add("link.directory", Root(), [] { MkDir("d", 0, 0, 0777); MkDir("s", 0, 0, 0755); },
      [] { return Link("s", "d/l"); }, st, "EPERM d/l=absent");
  Add("link.directory-no-write", U1000(), [] { MkDir("d", 0, 0, 0755); MkDir("s", 1000, 1000, 0755); },
      [] { return Link("s", "d/l"); }, st, "EACCES d/l=absent");
  Add("link.existing", U1000(),
      [] {
        MkDir("d", 0, 0, 0777);
        MkFile("f", 1000, 1000, 0644);
        MkFile("d/l", 1001, 1001, 0644);
      },
      [] { return Link("f", "d/l"); }, st, "EEXIST d/l=f0644,1001:1001");
  Add("link.existing-no-write", U1000(),
      [] {
        MkDir("d", 0, 0, 0755);
        MkFile("f", 1000, 1000, 0644);
        MkFile("d/l", 1001, 1001, 0644);
      },
      [] { return Link("f", "d/l"); }, st, "EEXIST d/l=f0644,1001:1001");
  Add("link.symlink-not-followed", U1001(),
      [] {
        MkDir("d", 0, 0, 0777);
        MkFile("f", 1000, 1000, 0600);
        MkSymlink("f", "s", 1001, 1001);
      },
      [] { return Link("s", "d/l"); }, st, "ok d/l=l0777,1001:1001");
  Add("link.setgid-dir-keeps-group", U1000(),
      [] {
        MkDir("d", 0, 2000, 02777);
        MkFile("f", 1000, 1000, 0644);
      },
      [] { return Link("f", "d/l"); }, st, "ok d/l=f0644,1000:1000");
}

void AddUnlinkRmdir() {
  auto in = [](uid_t du, gid_t dg, mode_t dm, uid_t fu) {
    return [=] {
      MkDir("d", du, dg, 0777);
      MkFile("d/f", fu, fu, 0);
      MkDir("d/e", fu, fu, 0);
      SetMode("d", dm);
    };
  };
  auto stf = [] { return Stat("d/f"); };
  auto ste = [] { return Stat("d/e"); };
  auto unl = [] { return Result(unlink("d/f")); };
  auto rmd = [] { return Result(rmdir("d/e")); };
  struct Row {
    const char* name;
    uid_t du;
    gid_t dg;
    mode_t dm;
    uid_t fu;
    const Identity& who;
    bool allowed;
    const char* denial;
  };
  const Row rows[] = {
      {"writable-dir-others-file", 0, 0, 0777, 1001, U1000(), true, ""},
      {"no-write", 1000, 1000, 0555, 1000, U1000(), false, "EACCES"},
      {"no-search", 1000, 1000, 0666, 1000, U1000(), false, "EACCES"},
      {"write-search-only", 1000, 1000, 0300, 1001, U1000(), true, ""},
      {"group-writable-member", 0, 100, 0770, 1001, U1000(), true, ""},
      {"group-writable-nonmember", 0, 100, 0770, 1001, U1002(), false, "EACCES"},
      {"sticky.others-file", 0, 0, 01777, 1001, U1000(), false, "EPERM"},
      {"sticky.own-file", 0, 0, 01777, 1000, U1000(), true, ""},
      {"sticky.dir-owner", 1000, 1000, 01777, 1001, U1000(), true, ""},
      {"sticky.cap-fowner", 0, 0, 01777, 1001, U1000().With({CAP_FOWNER}), true, ""},
      {"sticky.root", 0, 0, 01777, 1001, Root(), true, ""},
      {"sticky.root-nocaps-others-file", 1001, 1001, 01777, 1002, RootNoCaps(), false, "EPERM"},
      {"sticky.group-writable-others-file", 0, 100, 01770, 1001, U1000(), false, "EPERM"},
      {"sticky.no-write", 0, 0, 01755, 1000, U1000(), false, "EACCES"},
      {"cap-dac-override-no-write", 0, 0, 0755, 1001, U1000().With({CAP_DAC_OVERRIDE}), true, ""},
      {"cap-fowner-no-write", 0, 0, 0755, 1001, U1000().With({CAP_FOWNER}), false, "EACCES"},
      {"root-nocaps-no-write", 1000, 1000, 0755, 0, RootNoCaps(), false, "EACCES"},
  };
  for (const Row& r : rows) {
    std::string fu = std::to_string(r.fu) + ":" + std::to_string(r.fu);
    Add(std::string("unlink.") + r.name, r.who, in(r.du, r.dg, r.dm, r.fu), unl, stf,
        r.allowed ? "ok d/f=absent" : std::string(r.denial) + " d/f=f0000," + fu);
    Add(std::string("rmdir.") + r.name, r.who, in(r.du, r.dg, r.dm, r.fu), rmd, ste,
        r.allowed ? "ok d/e=absent" : std::string(r.denial) + " d/e=d0000," + fu);
  }
  Add("unlink.directory", U1000(), in(1000, 1000, 0777, 1000), [] { return Result(unlink("d/e")); }, ste,
      "EISDIR d/e=d0000,1000:1000");
  Add("unlink.missing", U1000(), in(1000, 1000, 0777, 1000), [] { return Result(unlink("d/missing")); }, nullptr,
      "ENOENT");
  Add("unlink.missing-no-write", U1000(), in(1000, 1000, 0555, 1000), [] { return Result(unlink("d/missing")); },
      nullptr, "ENOENT");
  Add("unlink.symlink-not-target", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0777);
        MkFile("f", 0, 0, 0644);
        MkSymlink("../f", "d/l", 0, 0);
      },
      [] { return Result(unlink("d/l")); }, [] { return Stat("d/l") + " " + Stat("f"); },
      "ok d/l=absent f=f0644,0:0");
  Add("rmdir.file", U1000(), in(1000, 1000, 0777, 1000), [] { return Result(rmdir("d/f")); }, stf,
      "ENOTDIR d/f=f0000,1000:1000");
  Add("rmdir.nonempty", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0777);
        MkDir("d/e", 1000, 1000, 0777);
        MkFile("d/e/x", 1000, 1000, 0644);
      },
      rmd, ste, "ENOTEMPTY d/e=d0777,1000:1000");
  Add("rmdir.nonempty-no-write", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0777);
        MkDir("d/e", 1000, 1000, 0777);
        MkFile("d/e/x", 1000, 1000, 0644);
        SetMode("d", 0555);
      },
      rmd, ste, "EACCES d/e=d0777,1000:1000");
  Add("rmdir.nonempty-sticky-others", U1000(),
      [] {
        MkDir("d", 0, 0, 01777);
        MkDir("d/e", 1001, 1001, 0777);
        MkFile("d/e/x", 1001, 1001, 0644);
      },
      rmd, ste, "EPERM d/e=d0777,1001:1001");
  Add("rmdir.dot", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0777);
        MkDir("d/e", 1000, 1000, 0777);
      },
      [] { return Result(rmdir("d/e/.")); }, ste, "EINVAL d/e=d0777,1000:1000");
  Add("rmdir.dotdot", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0777);
        MkDir("d/e", 1000, 1000, 0777);
      },
      [] { return Result(rmdir("d/e/..")); }, nullptr, "ENOTEMPTY");
  Add("rmdir.missing", U1000(), in(1000, 1000, 0777, 1000), [] { return Result(rmdir("d/missing")); }, nullptr,
      "ENOENT");
}

void AddRename() {
  auto two = [](mode_t sm, mode_t tm) {
    return [=] {
      MkDir("s", 1000, 1000, 0777);
      MkDir("t", 1000, 1000, 0777);
      MkFile("s/f", 1000, 1000, 0644);
      MkDir("s/e", 1000, 1000, 0755);
      SetMode("s", sm);
      SetMode("t", tm);
    };
  };
  auto both = [](const char* a, const char* b) { return [=] { return Stat(a) + " " + Stat(b); }; };
  Add("rename.same-dir", U1000(), two(0755, 0755), [] { return Rename("s/f", "s/g"); }, both("s/f", "s/g"),
      "ok s/f=absent s/g=f0644,1000:1000");
  Add("rename.same-dir-no-write", U1000(), two(0555, 0755), [] { return Rename("s/f", "s/g"); },
      both("s/f", "s/g"), "EACCES s/f=f0644,1000:1000 s/g=absent");
  Add("rename.same-dir-no-search", U1000(), two(0666, 0755), [] { return Rename("s/f", "s/g"); },
      both("s/f", "s/g"), "EACCES s/f=f0644,1000:1000 s/g=absent");
  Add("rename.cross-dir", U1000(), two(0755, 0755), [] { return Rename("s/f", "t/f"); }, both("s/f", "t/f"),
      "ok s/f=absent t/f=f0644,1000:1000");
  Add("rename.cross-dir-target-no-write", U1000(), two(0755, 0555), [] { return Rename("s/f", "t/f"); },
      both("s/f", "t/f"), "EACCES s/f=f0644,1000:1000 t/f=absent");
  Add("rename.cross-dir-source-no-write", U1000(), two(0555, 0755), [] { return Rename("s/f", "t/f"); },
      both("s/f", "t/f"), "EACCES s/f=f0644,1000:1000 t/f=absent");
  Add("rename.cross-dir-other-user", U1001(), two(0777, 0777), [] { return Rename("s/f", "t/f"); },
      both("s/f", "t/f"), "ok s/f=absent t/f=f0644,1000:1000");
  // A directory moved to another parent needs write on itself ('..').
  auto subdir = [](mode_t em) {
    return [=] {
      MkDir("s", 0, 0, 0777);
      MkDir("t", 0, 0, 0777);
      MkDir("s/e", 1000, 1000, em);
    };
  };
  Add("rename.dir.cross-parent-self-no-write", U1000(), subdir(0555), [] { return Rename("s/e", "t/e"); },
      both("s/e", "t/e"), "EACCES s/e=d0555,1000:1000 t/e=absent");
  Add("rename.dir.cross-parent-self-writable", U1000(), subdir(0755), [] { return Rename("s/e", "t/e"); },
      both("s/e", "t/e"), "ok s/e=absent t/e=d0755,1000:1000");
  Add("rename.dir.cross-parent-other-users-writable", U1001(), subdir(0777), [] { return Rename("s/e", "t/e"); },
      both("s/e", "t/e"), "ok s/e=absent t/e=d0777,1000:1000");
  Add("rename.dir.cross-parent-other-users-no-write", U1001(), subdir(0755), [] { return Rename("s/e", "t/e"); },
      both("s/e", "t/e"), "EACCES s/e=d0755,1000:1000 t/e=absent");
  Add("rename.dir.same-parent-self-no-write", U1000(), subdir(0555), [] { return Rename("s/e", "s/g"); },
      both("s/e", "s/g"), "ok s/e=absent s/g=d0555,1000:1000");
  Add("rename.dir.cross-parent-root", Root(), subdir(0000), [] { return Rename("s/e", "t/e"); }, both("s/e", "t/e"),
      "ok s/e=absent t/e=d0000,1000:1000");
  Add("rename.dir.cross-parent-cap-dac-override", U1002().With({CAP_DAC_OVERRIDE}), subdir(0555),
      [] { return Rename("s/e", "t/e"); }, both("s/e", "t/e"), "ok s/e=absent t/e=d0555,1000:1000");
  Add("rename.dir.into-own-subdir", U1000(),
      [] {
        MkDir("s", 0, 0, 0777);
        MkDir("s/e", 1000, 1000, 0755);
        MkDir("s/e/x", 1000, 1000, 0755);
      },
      [] { return Rename("s/e", "s/e/x/e"); }, both("s/e", "s/e/x/e"), "EINVAL s/e=d0755,1000:1000 s/e/x/e=absent");
  // Sticky source and target directories.
  auto sticky = [](uid_t fu, uid_t gu) {
    return [=] {
      MkDir("s", 0, 0, 01777);
      MkFile("s/f", fu, fu, 0644);
      MkFile("s/g", gu, gu, 0644);
    };
  };
  Add("rename.sticky.source-others", U1000(), sticky(1001, 1000), [] { return Rename("s/f", "s/n"); },
      both("s/f", "s/n"), "EPERM s/f=f0644,1001:1001 s/n=absent");
  Add("rename.sticky.source-own", U1000(), sticky(1000, 1000), [] { return Rename("s/f", "s/n"); },
      both("s/f", "s/n"), "ok s/f=absent s/n=f0644,1000:1000");
  Add("rename.sticky.target-others", U1000(), sticky(1000, 1001), [] { return Rename("s/f", "s/g"); },
      both("s/f", "s/g"), "EPERM s/f=f0644,1000:1000 s/g=f0644,1001:1001");
  Add("rename.sticky.target-own", U1000(), sticky(1000, 1000), [] { return Rename("s/f", "s/g"); },
      both("s/f", "s/g"), "ok s/f=absent s/g=f0644,1000:1000");
  Add("rename.sticky.cap-fowner", U1000().With({CAP_FOWNER}), sticky(1001, 1002), [] { return Rename("s/f", "s/g"); },
      both("s/f", "s/g"), "ok s/f=absent s/g=f0644,1001:1001");
  Add("rename.sticky.dir-owner", U1000(),
      [] {
        MkDir("s", 1000, 1000, 01777);
        MkFile("s/f", 1001, 1001, 0644);
        MkFile("s/g", 1002, 1002, 0644);
      },
      [] { return Rename("s/f", "s/g"); }, both("s/f", "s/g"), "ok s/f=absent s/g=f0644,1001:1001");
  Add("rename.sticky.exchange-others", U1000(), sticky(1000, 1001),
      [] { return Rename("s/f", "s/g", RENAME_EXCHANGE); }, both("s/f", "s/g"),
      "EPERM s/f=f0644,1000:1000 s/g=f0644,1001:1001");
  // Types.
  auto types = [] {
    MkDir("s", 1000, 1000, 0755);
    MkFile("s/f", 1000, 1000, 0644);
    MkDir("s/e", 1000, 1000, 0755);
    MkDir("s/full", 1000, 1000, 0755);
    MkFile("s/full/x", 1000, 1000, 0644);
    MkDir("s/empty", 1000, 1000, 0755);
  };
  Add("rename.file-over-dir", U1000(), types, [] { return Rename("s/f", "s/e"); }, both("s/f", "s/e"),
      "EISDIR s/f=f0644,1000:1000 s/e=d0755,1000:1000");
  Add("rename.dir-over-file", U1000(), types, [] { return Rename("s/e", "s/f"); }, both("s/f", "s/e"),
      "ENOTDIR s/f=f0644,1000:1000 s/e=d0755,1000:1000");
  Add("rename.dir-over-nonempty-dir", U1000(), types, [] { return Rename("s/e", "s/full"); }, both("s/e", "s/full"),
      "ENOTEMPTY s/e=d0755,1000:1000 s/full=d0755,1000:1000");
  Add("rename.dir-over-empty-dir", U1000(), types, [] { return Rename("s/e", "s/empty"); }, both("s/e", "s/empty"),
      "ok s/e=absent s/empty=d0755,1000:1000");
  Add("rename.onto-itself", U1000(), types, [] { return Rename("s/f", "s/f"); }, [] { return Stat("s/f"); },
      "ok s/f=f0644,1000:1000");
  Add("rename.missing", U1000(), types, [] { return Rename("s/missing", "s/n"); }, nullptr, "ENOENT");
  Add("rename.noreplace-existing", U1000(), two(0755, 0755), [] { return Rename("s/f", "s/e", RENAME_NOREPLACE); },
      both("s/f", "s/e"), "EEXIST s/f=f0644,1000:1000 s/e=d0755,1000:1000");
  Add("rename.noreplace-new", U1000(), two(0755, 0755), [] { return Rename("s/f", "s/n", RENAME_NOREPLACE); },
      both("s/f", "s/n"), "ok s/f=absent s/n=f0644,1000:1000");
  Add("rename.exchange", U1000(),
      [] {
        MkDir("s", 1000, 1000, 0755);
        MkFile("s/a", 1000, 1000, 0600);
        MkFile("s/b", 1001, 1001, 0644);
      },
      [] { return Rename("s/a", "s/b", RENAME_EXCHANGE); }, both("s/a", "s/b"),
      "ok s/a=f0644,1001:1001 s/b=f0600,1000:1000");
  Add("rename.exchange-missing", U1000(), two(0755, 0755), [] { return Rename("s/f", "s/n", RENAME_EXCHANGE); },
      both("s/f", "s/n"), "ENOENT s/f=f0644,1000:1000 s/n=absent");
  Add("rename.exchange-dirs-cross-parent-no-write", U1000(),
      [] {
        MkDir("s", 0, 0, 0777);
        MkDir("t", 0, 0, 0777);
        MkDir("s/a", 1000, 1000, 0755);
        MkDir("t/b", 1000, 1000, 0555);
      },
      [] { return Rename("s/a", "t/b", RENAME_EXCHANGE); }, both("s/a", "t/b"),
      "EACCES s/a=d0755,1000:1000 t/b=d0555,1000:1000");
  Add("rename.exchange-dirs-cross-parent", U1000(),
      [] {
        MkDir("s", 0, 0, 0777);
        MkDir("t", 0, 0, 0777);
        MkDir("s/a", 1000, 1000, 0755);
        MkDir("t/b", 1000, 1000, 0700);
      },
      [] { return Rename("s/a", "t/b", RENAME_EXCHANGE); }, both("s/a", "t/b"),
      "ok s/a=d0700,1000:1000 t/b=d0755,1000:1000");
  Add("rename.over-others-file-writable-dir", U1000(),
      [] {
        MkDir("s", 0, 0, 0777);
        MkFile("s/f", 1000, 1000, 0644);
        MkFile("s/g", 1001, 1001, 0600);
      },
      [] { return Rename("s/f", "s/g"); }, both("s/f", "s/g"), "ok s/f=absent s/g=f0644,1000:1000");
  Add("rename.keeps-group-into-setgid-dir", U1000(),
      [] {
        MkDir("s", 1000, 1000, 0755);
        MkDir("t", 0, 2000, 02777);
        MkFile("s/f", 1000, 1000, 0644);
      },
      [] { return Rename("s/f", "t/f"); }, [] { return Stat("t/f"); }, "ok t/f=f0644,1000:1000");
}

void AddMkdirMknodSymlink() {
  auto dir = [](uid_t u, gid_t g, mode_t m) {
    return [=] {
      MkDir("d", u, g, m);
      MkFile("d/f", u, u, 0644);
      SetMode("d", m);
    };
  };
  auto st = [] { return Stat("d/n"); };
  auto mkd = [] { return Result(mkdir("d/n", 0777)); };
  Add("mkdir.ok", U1000(), dir(1000, 1000, 0755), mkd, st, "ok d/n=d0755,1000:1000");
  Add("mkdir.other-user-writable", U1001(), dir(1000, 1000, 0777), mkd, st, "ok d/n=d0755,1001:1001");
  Add("mkdir.no-write", U1000(), dir(1000, 1000, 0555), mkd, st, "EACCES d/n=absent");
  Add("mkdir.no-search", U1000(), dir(1000, 1000, 0666), mkd, st, "EACCES d/n=absent");
  Add("mkdir.group-no-write", U1001(), dir(1000, 2000, 0755), mkd, st, "EACCES d/n=absent");
  Add("mkdir.group-write", U1001(), dir(1000, 2000, 0775), mkd, st, "ok d/n=d0755,1001:1001");
  Add("mkdir.cap-dac-override", U1002().With({CAP_DAC_OVERRIDE}), dir(1000, 1000, 0555), mkd, st,
      "ok d/n=d0755,1002:1002");
  Add("mkdir.existing", U1000(), dir(1000, 1000, 0755), [] { return Result(mkdir("d/f", 0777)); }, nullptr,
      "EEXIST");
  Add("mkdir.existing-no-write", U1000(), dir(1000, 1000, 0555), [] { return Result(mkdir("d/f", 0777)); }, nullptr,
      "EEXIST");
  Add("mkdir.existing-no-search", U1000(), dir(1000, 1000, 0666), [] { return Result(mkdir("d/f", 0777)); },
      nullptr, "EACCES");
  Add("mkdir.missing-parent", U1000(), dir(1000, 1000, 0755), [] { return Result(mkdir("d/x/n", 0777)); }, nullptr,
      "ENOENT");
  Add("mkdir.parent-is-file", U1000(), dir(1000, 1000, 0755), [] { return Result(mkdir("d/f/n", 0777)); }, nullptr,
      "ENOTDIR");
  // mknod: FIFOs, regular files and sockets for anyone who may create;
  // devices need CAP_MKNOD, checked after may_create().
  auto mkn = [](mode_t m, dev_t dev) { return [=] { return Result(mknod("d/n", m, dev)); }; };
  dev_t null_dev = makedev(1, 3);
  Add("mknod.fifo.user", U1000(), dir(1000, 1000, 0755), mkn(S_IFIFO | 0666, 0), st, "ok d/n=p0644,1000:1000");
  Add("mknod.fifo.umask-000", U1000(), dir(1000, 1000, 0755), mkn(S_IFIFO | 0666, 0), st, "ok d/n=p0666,1000:1000",
      0);
  Add("mknod.fifo.no-write", U1000(), dir(1000, 1000, 0555), mkn(S_IFIFO | 0666, 0), st, "EACCES d/n=absent");
  Add("mknod.fifo.setgid-dir", U1002(), dir(0, 2000, 02777), mkn(S_IFIFO | 0666, 0), st, "ok d/n=p0644,1002:2000");
  Add("mknod.regular.user", U1000(), dir(1000, 1000, 0755), mkn(S_IFREG | 0640, 0), st, "ok d/n=f0640,1000:1000");
  Add("mknod.regular.type-zero", U1000(), dir(1000, 1000, 0755), mkn(0640, 0), st, "ok d/n=f0640,1000:1000");
  Add("mknod.socket.user", U1000(), dir(1000, 1000, 0755), mkn(S_IFSOCK | 0777, 0), st, "ok d/n=s0755,1000:1000");
  Add("mknod.chr.user", U1000(), dir(1000, 1000, 0755), mkn(S_IFCHR | 0666, null_dev), st, "EPERM d/n=absent");
  Add("mknod.blk.user", U1000(), dir(1000, 1000, 0755), mkn(S_IFBLK | 0666, makedev(7, 0)), st, "EPERM d/n=absent");
  Add("mknod.chr.user-no-write", U1000(), dir(1000, 1000, 0555), mkn(S_IFCHR | 0666, null_dev), st,
      "EACCES d/n=absent");
  Add("mknod.chr.cap-mknod", U1000().With({CAP_MKNOD}), dir(1000, 1000, 0755), mkn(S_IFCHR | 0666, null_dev), st,
      "ok d/n=c0644,1000:1000,rdev=1:3");
  Add("mknod.chr.root", Root(), dir(1000, 1000, 0755), mkn(S_IFCHR | 0600, null_dev), st,
      "ok d/n=c0600,0:0,rdev=1:3");
  Add("mknod.chr.root-nocaps", RootNoCaps(), dir(0, 0, 0755), mkn(S_IFCHR | 0600, null_dev), st,
      "EPERM d/n=absent");
  // A character device 0:0 is a whiteout, which needs no CAP_MKNOD.
  Add("mknod.chr.whiteout-user", U1000(), dir(1000, 1000, 0755), mkn(S_IFCHR | 0600, 0), st,
      "ok d/n=c0600,1000:1000,rdev=0:0");
  Add("mknod.existing", U1000(), dir(1000, 1000, 0755),
      [] { return Result(mknod("d/f", S_IFIFO | 0644, 0)); }, nullptr, "EEXIST");
  Add("mknod.type-dir", U1000(), dir(1000, 1000, 0755), mkn(S_IFDIR | 0755, 0), st, "EPERM d/n=absent");
  Add("mknod.type-unknown", U1000(), dir(1000, 1000, 0755), mkn(S_IFMT | 0755, 0), st, "EINVAL d/n=absent");
  // symlink.
  auto sym = [] { return Result(symlink("target", "d/n")); };
  Add("symlink.ok", U1000(), dir(1000, 1000, 0755), sym, st, "ok d/n=l0777,1000:1000");
  Add("symlink.umask-ignored", U1000(), dir(1000, 1000, 0755), sym, st, "ok d/n=l0777,1000:1000", 077);
  Add("symlink.no-write", U1000(), dir(1000, 1000, 0555), sym, st, "EACCES d/n=absent");
  Add("symlink.no-search", U1000(), dir(1000, 1000, 0666), sym, st, "EACCES d/n=absent");
  Add("symlink.existing", U1000(), dir(1000, 1000, 0755), [] { return Result(symlink("target", "d/f")); }, nullptr,
      "EEXIST");
  Add("symlink.setgid-dir", U1002(), dir(0, 2000, 02777), sym, st, "ok d/n=l0777,1002:2000");
  Add("symlink.sticky-dir", U1002(), dir(0, 0, 01777), sym, st, "ok d/n=l0777,1002:1002");
  Add("symlink.readlink-no-search", U1000(),
      [] {
        MkDir("d", 0, 0, 0700);
        MkSymlink("target", "d/l", 1000, 1000);
      },
      [] {
        char buf[64];
        return Result(readlink("d/l", buf, sizeof buf));
      },
      nullptr, "EACCES");
  Add("symlink.readlink-others-link", U1000(),
      [] {
        MkDir("d", 0, 0, 0755);
        MkSymlink("target", "d/l", 1001, 1001);
      },
      [] {
        char buf[64];
        ssize_t n = readlink("d/l", buf, sizeof buf);
        if (n < 0) return ErrnoName(errno);
        return "ok " + std::string(buf, static_cast<size_t>(n));
      },
      nullptr, "ok target");
}

}  // namespace

void AddNamespaceChecks() {
  AddLink();
  AddUnlinkRmdir();
  AddRename();
  AddMkdirMknodSymlink();
}

}  // namespace pathwarden::conformance
