// chmod and chown/chgrp checks.
//
// Linux: fs/attr.c setattr_prepare() (owner or CAP_FOWNER for a mode,
// chown_ok()/chgrp_ok() for owners), setattr_copy() (S_ISGID dropped for
// a group the caller is not in without CAP_FSETID), fs/open.c
// chown_common() (S_ISUID always, S_ISGID with group exec, dropped from
// non-directories on any chown, even by root).

#include <fcntl.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/conformance/conformance.h"

namespace pathwarden::conformance {
namespace {

std::string Chmod(const std::string& path, mode_t mode) { return Result(chmod(path.c_str(), mode)); }

std::string Chown(const std::string& path, uid_t uid, gid_t gid, int flags = 0) {
  return Result(fchownat(AT_FDCWD, path.c_str(), uid, gid, flags));
}

constexpr uid_t kSame = static_cast<uid_t>(-1);
constexpr gid_t kSameG = static_cast<gid_t>(-1);

void AddChmod() {
  auto file = [](uid_t u, gid_t g, mode_t m) { return [=] { MkFile("f", u, g, m); }; };
  auto st = [] { return Stat("f"); };
  Add("chmod.owner", U1000(), file(1000, 1000, 0644), [] { return Chmod("f", 0600); }, st,
      "ok f=f0600,1000:1000");
  Add("chmod.owner.all-bits-own-group", U1000(), file(1000, 1000, 0644), [] { return Chmod("f", 07777); }, st,
      "ok f=f7777,1000:1000");
  Add("chmod.owner.mode-0000", U1000(), file(1000, 1000, 0644), [] { return Chmod("f", 0); }, st,
      "ok f=f0000,1000:1000");
  Add("chmod.owner.setuid", U1000(), file(1000, 1000, 0755), [] { return Chmod("f", 04755); }, st,
      "ok f=f4755,1000:1000");
  Add("chmod.owner.sticky-file", U1000(), file(1000, 1000, 0644), [] { return Chmod("f", 01644); }, st,
      "ok f=f1644,1000:1000");
  Add("chmod.nonowner", U1001(), file(1000, 1000, 0666), [] { return Chmod("f", 0600); }, st,
      "EPERM f=f0666,1000:1000");
  Add("chmod.nonowner.group-member", U1001(), file(1000, 2000, 0664), [] { return Chmod("f", 0600); }, st,
      "EPERM f=f0664,1000:2000");
  Add("chmod.nonowner.same-mode", U1001(), file(1000, 1000, 0644), [] { return Chmod("f", 0644); }, st,
      "EPERM f=f0644,1000:1000");
  Add("chmod.nonowner.cap-fowner", U1001().With({CAP_FOWNER}), file(1000, 1000, 0644),
      [] { return Chmod("f", 0600); }, st, "ok f=f0600,1000:1000");
  Add("chmod.nonowner.cap-dac-override", U1001().With({CAP_DAC_OVERRIDE}), file(1000, 1000, 0644),
      [] { return Chmod("f", 0600); }, st, "EPERM f=f0644,1000:1000");
  Add("chmod.nonowner.cap-chown", U1001().With({CAP_CHOWN}), file(1000, 1000, 0644),
      [] { return Chmod("f", 0600); }, st, "EPERM f=f0644,1000:1000");
  Add("chmod.root", Root(), file(1000, 1000, 0644), [] { return Chmod("f", 06711); }, st,
      "ok f=f6711,1000:1000");
  Add("chmod.root-nocaps.other-owner", RootNoCaps(), file(1000, 1000, 0644), [] { return Chmod("f", 0600); },
      st, "EPERM f=f0644,1000:1000");
  Add("chmod.root-nocaps.own", RootNoCaps(), file(0, 0, 0644), [] { return Chmod("f", 0600); }, st,
      "ok f=f0600,0:0");
  Add("chmod.setgid.nonmember-group", U1000(), file(1000, 2001, 0755), [] { return Chmod("f", 02755); }, st,
      "ok f=f0755,1000:2001");
  Add("chmod.setgid.supplementary-group", U1000(), file(1000, 100, 0755), [] { return Chmod("f", 02755); }, st,
      "ok f=f2755,1000:100");
  Add("chmod.setgid.primary-group", U1003(), file(1003, 2000, 0755), [] { return Chmod("f", 02755); }, st,
      "ok f=f2755,1003:2000");
  Add("chmod.setgid.nonmember-cap-fsetid", U1000().With({CAP_FSETID}), file(1000, 2001, 0755),
      [] { return Chmod("f", 02755); }, st, "ok f=f2755,1000:2001");
  Add("chmod.setgid.nonmember-cap-fowner", U1000().With({CAP_FOWNER}), file(1002, 2001, 0755),
      [] { return Chmod("f", 02755); }, st, "ok f=f0755,1002:2001");
  Add("chmod.setgid.nonmember-no-group-exec", U1000(), file(1000, 2001, 0644), [] { return Chmod("f", 02644); },
      st, "ok f=f0644,1000:2001");
  Add("chmod.setgid.root", Root(), file(1000, 2001, 0755), [] { return Chmod("f", 02755); }, st,
      "ok f=f2755,1000:2001");
  Add("chmod.setuid.nonmember-group-kept", U1000(), file(1000, 2001, 0755), [] { return Chmod("f", 04755); },
      st, "ok f=f4755,1000:2001");
  auto dir = [](uid_t u, gid_t g, mode_t m) { return [=] { MkDir("f", u, g, m); }; };
  Add("chmod.dir.owner", U1000(), dir(1000, 1000, 0755), [] { return Chmod("f", 0700); }, st,
      "ok f=d0700,1000:1000");
  Add("chmod.dir.sticky", U1000(), dir(1000, 1000, 0755), [] { return Chmod("f", 01777); }, st,
      "ok f=d1777,1000:1000");
  Add("chmod.dir.setgid-nonmember", U1000(), dir(1000, 2001, 0755), [] { return Chmod("f", 02755); }, st,
      "ok f=d0755,1000:2001");
  Add("chmod.dir.setgid-member", U1000(), dir(1000, 100, 0755), [] { return Chmod("f", 02775); }, st,
      "ok f=d2775,1000:100");
  Add("chmod.dir.nonowner", U1001(), dir(1000, 1000, 0777), [] { return Chmod("f", 0700); }, st,
      "EPERM f=d0777,1000:1000");
  Add("chmod.path.search-denied", U1000(),
      [] {
        MkDir("a", 0, 0, 0700);
        MkFile("a/f", 1000, 1000, 0644);
      },
      [] { return Chmod("a/f", 0600); }, [] { return Stat("a/f"); }, "EACCES a/f=f0644,1000:1000");
  Add("chmod.path.missing", U1000(), nullptr, [] { return Chmod("missing", 0600); }, nullptr, "ENOENT");
  Add("chmod.path.file-as-dir", U1000(), file(1000, 1000, 0644), [] { return Chmod("f/x", 0600); }, nullptr,
      "ENOTDIR");
  Add("chmod.symlink.follows", U1000(),
      [] {
        MkFile("f", 1000, 1000, 0644);
        MkSymlink("f", "l", 1001, 1001);
      },
      [] { return Chmod("l", 0600); }, [] { return Stat("f") + " " + Stat("l"); },
      "ok f=f0600,1000:1000 l=l0777,1001:1001");
  Add("chmod.symlink.follows-nonowner-target", U1001(),
      [] {
        MkFile("f", 1000, 1000, 0644);
        MkSymlink("f", "l", 1001, 1001);
      },
      [] { return Chmod("l", 0600); }, st, "EPERM f=f0644,1000:1000");
  Add("chmod.fchmod.owner-rdonly-fd", U1000(), file(1000, 1000, 0644),
      [] {
        int fd = open("f", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return "open " + ErrnoName(errno);
        std::string r = Result(fchmod(fd, 0600));
        close(fd);
        return r;
      },
      st, "ok f=f0600,1000:1000");
  Add("chmod.fchmod.nonowner-rdwr-fd", U1001(), file(1000, 1000, 0666),
      [] {
        int fd = open("f", O_RDWR | O_CLOEXEC);
        if (fd < 0) return "open " + ErrnoName(errno);
        std::string r = Result(fchmod(fd, 0600));
        close(fd);
        return r;
      },
      st, "EPERM f=f0666,1000:1000");
}

void AddChown() {
  auto file = [](uid_t u, gid_t g, mode_t m) { return [=] { MkFile("f", u, g, m); }; };
  auto st = [] { return Stat("f"); };
  // The Curvine bug: a non-owner must not change the group, even to one
  // of its own.
  Add("chown.chgrp.nonowner-to-own-group", U1001(), file(1000, 1000, 0644),
      [] { return Chown("f", kSame, 2000); }, st, "EPERM f=f0644,1000:1000");
  Add("chown.chgrp.nonowner-group-member", U1001(), file(1000, 100, 0664),
      [] { return Chown("f", kSame, 2000); }, st, "EPERM f=f0664,1000:100");
  Add("chown.chgrp.nonowner-writable-file", U1002(), file(1000, 1000, 0666),
      [] { return Chown("f", kSame, 2001); }, st, "EPERM f=f0666,1000:1000");
  Add("chown.chgrp.owner-supplementary", U1000(), file(1000, 1000, 0644), [] { return Chown("f", kSame, 100); },
      st, "ok f=f0644,1000:100");
  Add("chown.chgrp.owner-primary", U1000(), file(1000, 100, 0644), [] { return Chown("f", kSame, 1000); }, st,
      "ok f=f0644,1000:1000");
  Add("chown.chgrp.owner-second-supplementary", U1001(), file(1001, 1001, 0644),
      [] { return Chown("f", kSame, 2000); }, st, "ok f=f0644,1001:2000");
  Add("chown.chgrp.owner-nonmember", U1000(), file(1000, 1000, 0644), [] { return Chown("f", kSame, 2001); },
      st, "EPERM f=f0644,1000:1000");
  Add("chown.chgrp.owner-only-primary", U1003(), file(1003, 2000, 0644), [] { return Chown("f", kSame, 100); },
      st, "EPERM f=f0644,1003:2000");
  Add("chown.chgrp.owner-same-group", U1003(), file(1003, 2000, 0644), [] { return Chown("f", kSame, 2000); },
      st, "ok f=f0644,1003:2000");
  Add("chown.chgrp.owner-from-foreign-group", U1000(), file(1000, 2001, 0644),
      [] { return Chown("f", kSame, 100); }, st, "ok f=f0644,1000:100");
  Add("chown.chown.owner-give-away", U1000(), file(1000, 1000, 0644), [] { return Chown("f", 1001, kSameG); },
      st, "EPERM f=f0644,1000:1000");
  Add("chown.chown.owner-same-uid", U1000(), file(1000, 1000, 0644), [] { return Chown("f", 1000, kSameG); },
      st, "ok f=f0644,1000:1000");
  Add("chown.chown.owner-same-uid-member-group", U1000(), file(1000, 1000, 0644),
      [] { return Chown("f", 1000, 100); }, st, "ok f=f0644,1000:100");
  Add("chown.chown.owner-same-uid-nonmember-group", U1000(), file(1000, 1000, 0644),
      [] { return Chown("f", 1000, 2001); }, st, "EPERM f=f0644,1000:1000");
  Add("chown.chown.nonowner-take", U1001(), file(1000, 1000, 0666), [] { return Chown("f", 1001, kSameG); },
      st, "EPERM f=f0666,1000:1000");
  Add("chown.chown.nonowner-same-values", U1001(), file(1000, 1000, 0644),
      [] { return Chown("f", 1000, 1000); }, st, "EPERM f=f0644,1000:1000");
  Add("chown.chown.nonowner-nothing", U1001(), file(1000, 1000, 0644), [] { return Chown("f", kSame, kSameG); },
      st, "ok f=f0644,1000:1000");
  Add("chown.cap-chown.other-owner", U1000().With({CAP_CHOWN}), file(1001, 1001, 0644),
      [] { return Chown("f", 1002, 2001); }, st, "ok f=f0644,1002:2001");
  Add("chown.cap-chown.chgrp-nonmember", U1000().With({CAP_CHOWN}), file(1000, 1000, 0644),
      [] { return Chown("f", kSame, 2001); }, st, "ok f=f0644,1000:2001");
  Add("chown.cap-fowner.not-enough", U1000().With({CAP_FOWNER}), file(1001, 1001, 0644),
      [] { return Chown("f", 1000, kSameG); }, st, "EPERM f=f0644,1001:1001");
  Add("chown.root", Root(), file(1000, 1000, 0644), [] { return Chown("f", 1002, 2001); }, st,
      "ok f=f0644,1002:2001");
  Add("chown.root-nocaps", RootNoCaps(), file(1000, 1000, 0644), [] { return Chown("f", 0, 0); }, st,
      "EPERM f=f0644,1000:1000");
  Add("chown.root-nocaps.own-to-group", RootNoCaps(), file(0, 0, 0644), [] { return Chown("f", kSame, 100); },
      st, "EPERM f=f0644,0:0");
  // What a chown clears.
  Add("chown.clears.setuid-by-root", Root(), file(1000, 1000, 04755), [] { return Chown("f", 1001, 1001); }, st,
      "ok f=f0755,1001:1001");
  Add("chown.clears.setgid-group-exec-by-root", Root(), file(1000, 1000, 02755),
      [] { return Chown("f", 1001, 1001); }, st, "ok f=f0755,1001:1001");
  Add("chown.clears.setuid-setgid-by-root", Root(), file(1000, 1000, 06755),
      [] { return Chown("f", 1001, kSameG); }, st, "ok f=f0755,1001:1000");
  Add("chown.keeps.setgid-no-group-exec-by-root", Root(), file(1000, 1000, 02644),
      [] { return Chown("f", 1001, 1001); }, st, "ok f=f2644,1001:1001");
  Add("chown.clears.setuid-no-exec-by-root", Root(), file(1000, 1000, 04644),
      [] { return Chown("f", 1001, 1001); }, st, "ok f=f0644,1001:1001");
  Add("chown.clears.setuid-owner-chgrp", U1000(), file(1000, 1000, 04755), [] { return Chown("f", kSame, 100); },
      st, "ok f=f0755,1000:100");
  Add("chown.clears.setgid-owner-chgrp", U1000(), file(1000, 1000, 02775), [] { return Chown("f", kSame, 100); },
      st, "ok f=f0775,1000:100");
  Add("chown.clears.setuid-same-owner-by-root", Root(), file(1000, 1000, 04755),
      [] { return Chown("f", 1000, 1000); }, st, "ok f=f0755,1000:1000");
  Add("chown.keeps.sticky-file", Root(), file(1000, 1000, 01755), [] { return Chown("f", 1001, 1001); }, st,
      "ok f=f1755,1001:1001");
  Add("chown.keeps.dir-setgid", Root(), [] { MkDir("f", 1000, 1000, 06775); },
      [] { return Chown("f", 1001, 1001); }, st, "ok f=d6775,1001:1001");
  Add("chown.failed-keeps.setuid", U1000(), file(1000, 1000, 04755), [] { return Chown("f", kSame, 2001); }, st,
      "EPERM f=f4755,1000:1000");
  // Symlinks: lchown changes the link, chown its target.
  Add("chown.lchown.owner-chgrp", U1000(),
      [] {
        MkFile("f", 1001, 1001, 0644);
        MkSymlink("f", "l", 1000, 1000);
      },
      [] { return Chown("l", kSame, 100, AT_SYMLINK_NOFOLLOW); }, [] { return Stat("l") + " " + Stat("f"); },
      "ok l=l0777,1000:100 f=f0644,1001:1001");
  Add("chown.chown.follows-symlink", U1000(),
      [] {
        MkFile("f", 1001, 1001, 0644);
        MkSymlink("f", "l", 1000, 1000);
      },
      [] { return Chown("l", kSame, 100); }, [] { return Stat("l") + " " + Stat("f"); },
      "EPERM l=l0777,1000:1000 f=f0644,1001:1001");
  Add("chown.lchown.nonowner", U1001(),
      [] {
        MkFile("f", 1001, 1001, 0644);
        MkSymlink("f", "l", 1000, 1000);
      },
      [] { return Chown("l", kSame, 1001, AT_SYMLINK_NOFOLLOW); }, [] { return Stat("l"); },
      "EPERM l=l0777,1000:1000");
  Add("chown.path.search-denied", U1000(),
      [] {
        MkDir("a", 0, 0, 0770);
        MkFile("a/f", 1000, 1000, 0644);
      },
      [] { return Chown("a/f", kSame, 100); }, [] { return Stat("a/f"); }, "EACCES a/f=f0644,1000:1000");
  Add("chown.dir.owner-chgrp", U1000(), [] { MkDir("f", 1000, 1000, 0755); },
      [] { return Chown("f", kSame, 100); }, st, "ok f=d0755,1000:100");
  Add("chown.dir.nonowner-chgrp", U1001(), [] { MkDir("f", 1000, 1000, 0777); },
      [] { return Chown("f", kSame, 2000); }, st, "EPERM f=d0777,1000:1000");
}

}  // namespace

void AddChmodChownChecks() {
  AddChmod();
  AddChown();
}

}  // namespace pathwarden::conformance
