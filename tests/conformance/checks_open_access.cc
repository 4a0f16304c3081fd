// open(), access()/faccessat() and path search checks; and what a new
// file, directory or node gets (owner, group, mode, ACLs).
//
// Linux: fs/namei.c generic_permission() and acl_permission_check() (the
// owner class, then the group class with supplementary groups, then
// other; CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), may_open() (EISDIR
// before permission, O_NOATIME), may_lookup() on every component,
// may_o_create(); fs/open.c do_faccessat() (real ids, and a real root's
// permitted capabilities); fs/inode.c inode_init_owner() and
// mode_strip_sgid(); fs/posix_acl.c posix_acl_create_masq().

#include <fcntl.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/conformance/conformance.h"

namespace pathwarden::conformance {
namespace {

std::string Oct(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m));
  return buf;
}

// The class matrix: a file owned 1000:2000 opened by its owner (1000,
// not in 2000), its group as the primary group (1003) and as a
// supplementary one (1001), and another user (1002). Linux uses the bits
// of the first class that matches, and only those: an owner with 0066 is
// denied what group and other may do.
void AddOpenMatrix() {
  struct Class {
    const char* name;
    const Identity& who;
    int shift;
  };
  const Class classes[] = {{"owner", U1000(), 6},
                           {"group-primary", U1003(), 3},
                           {"group-supplementary", U1001(), 3},
                           {"other", U1002(), 0}};
  const mode_t modes[] = {0000, 0400, 0200, 0600, 0040, 0020, 0060, 0004,
                          0002, 0006, 0066, 0606, 0660, 0777, 0007};
  struct Access {
    const char* name;
    int flags;
    int need;  // rwx bits
  };
  const Access accesses[] = {{"rdonly", O_RDONLY, 4}, {"wronly", O_WRONLY, 2}, {"rdwr", O_RDWR, 6}};
  for (const Class& c : classes) {
    for (mode_t m : modes) {
      for (const Access& a : accesses) {
        int bits = (m >> c.shift) & 7;
        std::string want = (bits & a.need) == a.need ? "ok" : "EACCES";
        int flags = a.flags;
        Add(std::string("open.class.") + c.name + "." + Oct(m) + "." + a.name, c.who,
            [m] { MkFile("f", 1000, 2000, m); }, [flags] { return Open("f", flags); }, nullptr, want);
      }
    }
  }
  // access(X_OK) on the same classes.
  const mode_t xmodes[] = {0100, 0010, 0001, 0111, 0000, 0766, 0676, 0667};
  for (const Class& c : classes) {
    for (mode_t m : xmodes) {
      int bits = (m >> c.shift) & 7;
      Add(std::string("access.class.") + c.name + "." + Oct(m) + ".x", c.who, [m] { MkFile("f", 1000, 2000, m); },
          [] { return Result(access("f", X_OK)); }, nullptr, (bits & 1) ? "ok" : "EACCES");
    }
  }
}

void AddOpenMisc() {
  auto file = [](uid_t u, gid_t g, mode_t m) { return [=] { MkFile("f", u, g, m, "hello"); }; };
  auto size = [] { return Size("f"); };
  // Capabilities.
  Add("open.root.0000.rdwr", Root(), file(1000, 1000, 0), [] { return Open("f", O_RDWR); }, nullptr, "ok");
  Add("open.root-nocaps.other-owner.0000.rdonly", RootNoCaps(), file(1000, 1000, 0),
      [] { return Open("f", O_RDONLY); }, nullptr, "EACCES");
  Add("open.root-nocaps.other-owner.0604.rdonly", RootNoCaps(), file(1000, 1000, 0604),
      [] { return Open("f", O_RDONLY); }, nullptr, "ok");
  Add("open.root-nocaps.own.0600.rdwr", RootNoCaps(), file(0, 0, 0600), [] { return Open("f", O_RDWR); }, nullptr,
      "ok");
  Add("open.root-nocaps.own.0066.rdonly", RootNoCaps(), file(0, 0, 0066), [] { return Open("f", O_RDONLY); },
      nullptr, "EACCES");
  Add("open.cap-dac-read-search.0000.rdonly", U1002().With({CAP_DAC_READ_SEARCH}), file(1000, 1000, 0),
      [] { return Open("f", O_RDONLY); }, nullptr, "ok");
  Add("open.cap-dac-read-search.0000.wronly", U1002().With({CAP_DAC_READ_SEARCH}), file(1000, 1000, 0),
      [] { return Open("f", O_WRONLY); }, nullptr, "EACCES");
  Add("open.cap-dac-override.0000.rdwr", U1002().With({CAP_DAC_OVERRIDE}), file(1000, 1000, 0),
      [] { return Open("f", O_RDWR); }, nullptr, "ok");
  Add("open.cap-fowner.0000.rdonly", U1002().With({CAP_FOWNER}), file(1000, 1000, 0),
      [] { return Open("f", O_RDONLY); }, nullptr, "EACCES");
  // O_TRUNC needs write permission, even with O_RDONLY.
  Add("open.trunc.rdonly-readable-only", U1001(), file(1000, 1000, 0644),
      [] { return Open("f", O_RDONLY | O_TRUNC); }, size, "EACCES f.size=5");
  Add("open.trunc.rdonly-owner-writable", U1000(), file(1000, 1000, 0644),
      [] { return Open("f", O_RDONLY | O_TRUNC); }, size, "ok f.size=0");
  Add("open.trunc.wronly-other-writable", U1001(), file(1000, 1000, 0666),
      [] { return Open("f", O_WRONLY | O_TRUNC); }, size, "ok f.size=0");
  Add("open.trunc.wronly-owner-0444", U1000(), file(1000, 1000, 0444), [] { return Open("f", O_WRONLY | O_TRUNC); },
      size, "EACCES f.size=5");
  Add("open.trunc.root-0000", Root(), file(1000, 1000, 0), [] { return Open("f", O_RDONLY | O_TRUNC); }, size,
      "ok f.size=0");
  // O_CREAT and O_EXCL.
  auto dir = [](mode_t m) { return [=] { MkDir("d", 1000, 1000, m); }; };
  auto dir_with_file = [](mode_t m) {
    return [=] {
      MkDir("d", 1000, 1000, 0755);
      MkFile("d/f", 1000, 1000, 0644);
      SetMode("d", m);
    };
  };
  Add("open.creat.dir-no-write", U1000(), dir(0555), [] { return Open("d/new", O_WRONLY | O_CREAT, 0644); },
      [] { return Stat("d/new"); }, "EACCES d/new=absent");
  Add("open.creat.dir-no-search", U1000(), dir(0666), [] { return Open("d/new", O_WRONLY | O_CREAT, 0644); },
      [] { return Stat("d/new"); }, "EACCES d/new=absent");
  Add("open.creat.dir-write-search-only", U1000(), dir(0300), [] { return Open("d/new", O_WRONLY | O_CREAT, 0644); },
      [] { return Stat("d/new"); }, "ok d/new=f0644,1000:1000");
  Add("open.creat.existing-in-readonly-dir", U1000(), dir_with_file(0555),
      [] { return Open("d/f", O_WRONLY | O_CREAT, 0644); }, nullptr, "ok");
  Add("open.creat.existing-unwritable-file", U1001(), dir_with_file(0777),
      [] { return Open("d/f", O_WRONLY | O_CREAT, 0644); }, nullptr, "EACCES");
  Add("open.creat.excl-existing", U1000(), dir_with_file(0777),
      [] { return Open("d/f", O_WRONLY | O_CREAT | O_EXCL, 0644); }, nullptr, "EEXIST");
  Add("open.creat.excl-existing-readonly-dir", U1000(), dir_with_file(0555),
      [] { return Open("d/f", O_WRONLY | O_CREAT | O_EXCL, 0644); }, nullptr, "EEXIST");
  Add("open.creat.excl-missing-readonly-dir", U1000(), dir(0555),
      [] { return Open("d/new", O_WRONLY | O_CREAT | O_EXCL, 0644); }, nullptr, "EACCES");
  Add("open.creat.excl-dangling-symlink", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0755);
        MkSymlink("target", "d/l", 1000, 1000);
      },
      [] { return Open("d/l", O_WRONLY | O_CREAT | O_EXCL, 0644); }, [] { return Stat("d/target"); },
      "EEXIST d/target=absent");
  Add("open.creat.through-dangling-symlink", U1000(),
      [] {
        MkDir("d", 1000, 1000, 0755);
        MkSymlink("target", "d/l", 1000, 1000);
      },
      [] { return Open("d/l", O_WRONLY | O_CREAT, 0640); }, [] { return Stat("d/target"); },
      "ok d/target=f0640,1000:1000");
  Add("open.creat.existing-directory", U1000(), dir(0755), [] { return Open("d", O_RDONLY | O_CREAT, 0644); },
      nullptr, "EISDIR");
  // Directories: EISDIR comes before permission.
  Add("open.dir.rdonly", U1002(), dir(0755), [] { return Open("d", O_RDONLY); }, nullptr, "ok");
  Add("open.dir.rdonly-no-read", U1002(), dir(0711), [] { return Open("d", O_RDONLY); }, nullptr, "EACCES");
  Add("open.dir.rdonly-read-no-search", U1002(), dir(0744), [] { return Open("d", O_RDONLY); }, nullptr, "ok");
  Add("open.dir.wronly-owner", U1000(), dir(0755), [] { return Open("d", O_WRONLY); }, nullptr, "EISDIR");
  Add("open.dir.rdwr-owner", U1000(), dir(0755), [] { return Open("d", O_RDWR); }, nullptr, "EISDIR");
  Add("open.dir.wronly-root", Root(), dir(0755), [] { return Open("d", O_WRONLY); }, nullptr, "EISDIR");
  Add("open.dir.wronly-no-permission", U1002(), dir(0700), [] { return Open("d", O_WRONLY); }, nullptr, "EISDIR");
  Add("open.directory-flag.on-file", U1000(), file(1000, 1000, 0644),
      [] { return Open("f", O_RDONLY | O_DIRECTORY); }, nullptr, "ENOTDIR");
  Add("open.directory-flag.on-dir", U1000(), dir(0755), [] { return Open("d", O_RDONLY | O_DIRECTORY); }, nullptr,
      "ok");
  // O_NOATIME: the owner or CAP_FOWNER.
  Add("open.noatime.owner", U1000(), file(1000, 1000, 0644), [] { return Open("f", O_RDONLY | O_NOATIME); },
      nullptr, "ok");
  Add("open.noatime.nonowner", U1001(), file(1000, 1000, 0644), [] { return Open("f", O_RDONLY | O_NOATIME); },
      nullptr, "EPERM");
  Add("open.noatime.nonowner-unreadable", U1001(), file(1000, 1000, 0600),
      [] { return Open("f", O_RDONLY | O_NOATIME); }, nullptr, "EACCES");
  Add("open.noatime.cap-fowner", U1001().With({CAP_FOWNER}), file(1000, 1000, 0644),
      [] { return Open("f", O_RDONLY | O_NOATIME); }, nullptr, "ok");
  // FIFOs.
  auto fifo = [](mode_t m) { return [=] { MkFifo("p", 1000, 1000, m); }; };
  Add("open.fifo.other-no-read", U1001(), fifo(0600), [] { return Open("p", O_RDONLY | O_NONBLOCK); }, nullptr,
      "EACCES");
  Add("open.fifo.other-read", U1001(), fifo(0644), [] { return Open("p", O_RDONLY | O_NONBLOCK); }, nullptr, "ok");
  Add("open.fifo.owner-rdwr", U1000(), fifo(0600), [] { return Open("p", O_RDWR | O_NONBLOCK); }, nullptr, "ok");
  Add("open.fifo.other-rdwr-read-only", U1001(), fifo(0644), [] { return Open("p", O_RDWR | O_NONBLOCK); }, nullptr,
      "EACCES");
}

// Search permission on every component: a/b/c/f with b's mode varied.
void AddSearch() {
  auto tree = [](mode_t b, gid_t bgid) {
    return [=] {
      MkDir("a", 0, 0, 0755);
      MkDir("a/b", 0, bgid, 0755);
      MkDir("a/b/c", 0, 0, 0755);
      MkFile("a/b/c/f", 1000, 1000, 0644, "x");
      MkSymlink("a/b/c/f", "l", 0, 0);
      MkSymlink("a/b", "lb", 0, 0);
      SetMode("a/b", b);
    };
  };
  struct Row {
    const char* name;
    mode_t b;
    gid_t bgid;
    const Identity& who;
    std::string open_want, missing_want, stat_want, access_want, list_b_want;
  };
  const Row rows[] = {
      {"other-rw-no-x", 0776, 0, U1000(), "EACCES", "EACCES", "EACCES", "EACCES", "ok"},
      {"other-x-only", 0771, 0, U1000(), "ok", "ENOENT", "ok", "ok", "EACCES"},
      {"group-x-member", 0710, 100, U1000(), "ok", "ENOENT", "ok", "ok", "EACCES"},
      {"group-x-nonmember", 0710, 100, U1002(), "EACCES", "EACCES", "EACCES", "EACCES", "EACCES"},
      {"group-no-x-member-other-x", 0761, 100, U1000(), "EACCES", "EACCES", "EACCES", "EACCES", "ok"},
      {"none", 0700, 0, U1001(), "EACCES", "EACCES", "EACCES", "EACCES", "EACCES"},
      // access() drops the effective capabilities of a caller whose real
      // uid is not 0 (fs/open.c access_override_creds()).
      {"none-cap-dac-read-search", 0700, 0, U1001().With({CAP_DAC_READ_SEARCH}), "ok", "ENOENT", "ok", "EACCES",
       "ok"},
      {"none-cap-dac-override", 0700, 0, U1001().With({CAP_DAC_OVERRIDE}), "ok", "ENOENT", "ok", "EACCES", "ok"},
      {"none-root", 0000, 0, Root(), "ok", "ENOENT", "ok", "ok", "ok"},
      {"none-root-nocaps", 0000, 0, RootNoCaps(), "EACCES", "EACCES", "EACCES", "EACCES", "EACCES"},
      {"owner-x-only-root-nocaps", 0100, 0, RootNoCaps(), "ok", "ENOENT", "ok", "ok", "EACCES"},
  };
  for (const Row& r : rows) {
    std::string base = std::string("search.") + r.name + ".";
    Add(base + "open", r.who, tree(r.b, r.bgid), [] { return Open("a/b/c/f", O_RDONLY); }, nullptr, r.open_want);
    Add(base + "open-missing", r.who, tree(r.b, r.bgid), [] { return Open("a/b/c/missing", O_RDONLY); }, nullptr,
        r.missing_want);
    Add(base + "stat", r.who, tree(r.b, r.bgid),
        [] {
          struct stat st;
          return Result(stat("a/b/c/f", &st));
        },
        nullptr, r.stat_want);
    Add(base + "access", r.who, tree(r.b, r.bgid), [] { return Result(access("a/b/c/f", F_OK)); }, nullptr,
        r.access_want);
    Add(base + "via-symlink", r.who, tree(r.b, r.bgid), [] { return Open("l", O_RDONLY); }, nullptr, r.open_want);
    Add(base + "via-dir-symlink", r.who, tree(r.b, r.bgid), [] { return Open("lb/c/f", O_RDONLY); }, nullptr,
        r.open_want);
    Add(base + "list-b", r.who, tree(r.b, r.bgid), [] { return Open("a/b", O_RDONLY | O_DIRECTORY); }, nullptr,
        r.list_b_want);
  }
  Add("search.file-as-dir", U1000(), [] { MkFile("f", 1000, 1000, 0644); },
      [] { return Open("f/x", O_RDONLY); }, nullptr, "ENOTDIR");
  Add("search.dotdot-through-unsearchable", U1000(),
      [] {
        MkDir("a", 0, 0, 0755);
        MkDir("a/b", 0, 0, 0700);
        MkFile("a/f", 0, 0, 0644);
      },
      [] { return Open("a/b/../f", O_RDONLY); }, nullptr, "EACCES");
}

// access() and faccessat(): real ids, AT_EACCESS, a real root.
void AddAccess() {
  Identity real1000{"r1000-e1002", 1002, 1002, {1002, 2001}, Identity::Caps::kNone, {}, 1000, 1000};
  auto file = [](uid_t u, gid_t g, mode_t m) { return [=] { MkFile("f", u, g, m); }; };
  Add("access.real-uid.r", real1000, file(1000, 1000, 0600), [] { return Result(access("f", R_OK)); }, nullptr,
      "ok");
  Add("access.real-uid.eaccess-r", real1000, file(1000, 1000, 0600),
      [] { return Result(faccessat(AT_FDCWD, "f", R_OK, AT_EACCESS)); }, nullptr, "EACCES");
  Add("access.real-uid.open", real1000, file(1000, 1000, 0600), [] { return Open("f", O_RDONLY); }, nullptr,
      "EACCES");
  Add("access.real-uid.effective-owner", real1000, file(1002, 1002, 0600), [] { return Result(access("f", R_OK)); },
      nullptr, "EACCES");
  Add("access.real-gid.group", real1000, file(0, 1000, 0040), [] { return Result(access("f", R_OK)); }, nullptr,
      "ok");
  Add("access.real-gid.eaccess-group", real1000, file(0, 1000, 0040),
      [] { return Result(faccessat(AT_FDCWD, "f", R_OK, AT_EACCESS)); }, nullptr, "EACCES");
  Identity real_root{"r0-e1000", 1000, 1000, {1000, 100}, Identity::Caps::kAsKernel, {}, 0, 0};
  Add("access.real-root.w-readonly", real_root, file(1002, 1002, 0444), [] { return Result(access("f", W_OK)); },
      nullptr, "ok");
  Add("access.real-root.eaccess-w-readonly", real_root, file(1002, 1002, 0444),
      [] { return Result(faccessat(AT_FDCWD, "f", W_OK, AT_EACCESS)); }, nullptr, "EACCES");
  Add("access.real-root.open-w", real_root, file(1002, 1002, 0444), [] { return Open("f", O_WRONLY); }, nullptr,
      "EACCES");
  Add("access.root.x-no-exec-bit", Root(), file(1000, 1000, 0644), [] { return Result(access("f", X_OK)); },
      nullptr, "EACCES");
  Add("access.root.x-other-exec-bit", Root(), file(1000, 1000, 0601), [] { return Result(access("f", X_OK)); },
      nullptr, "ok");
  Add("access.root.w-readonly", Root(), file(1000, 1000, 0444), [] { return Result(access("f", W_OK)); }, nullptr,
      "ok");
  Add("access.root.x-dir-no-exec-bit", Root(), [] { MkDir("f", 1000, 1000, 0600); },
      [] { return Result(access("f", X_OK)); }, nullptr, "ok");
  Add("access.owner.rw-0600", U1000(), file(1000, 1000, 0600), [] { return Result(access("f", R_OK | W_OK)); },
      nullptr, "ok");
  Add("access.owner.rwx-0600", U1000(), file(1000, 1000, 0600),
      [] { return Result(access("f", R_OK | W_OK | X_OK)); }, nullptr, "EACCES");
  Add("access.cap-dac-read-search.x-file", U1002().With({CAP_DAC_READ_SEARCH}), file(1000, 1000, 0700),
      [] { return Result(faccessat(AT_FDCWD, "f", X_OK, AT_EACCESS)); }, nullptr, "EACCES");
  Add("access.missing", U1000(), nullptr, [] { return Result(access("missing", F_OK)); }, nullptr, "ENOENT");
  Add("access.symlink-nofollow-dangling", U1000(), [] { MkSymlink("missing", "l", 1000, 1000); },
      [] { return Result(faccessat(AT_FDCWD, "l", F_OK, AT_SYMLINK_NOFOLLOW)); }, nullptr, "ok");
  Add("access.symlink-follow-dangling", U1000(), [] { MkSymlink("missing", "l", 1000, 1000); },
      [] { return Result(access("l", F_OK)); }, nullptr, "ENOENT");
}

// A copy of /bin/true (an ELF: no interpreter reads it), as `path`.
void MkTrue(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  static const std::string bytes = [] {
    std::ifstream in("/bin/true", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  if (bytes.empty()) FixtureError("cannot read /bin/true");
  MkFile(path, uid, gid, mode, bytes);
}

// execve(path) in a grandchild: "ok" when it ran and exited 0, the errno
// name when execve() failed.
std::string Exec(const char* path) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "pipe " + ErrnoName(errno);
  pid_t pid = fork();
  if (pid < 0) return "fork " + ErrnoName(errno);
  if (pid == 0) {
    close(fds[0]);
    char* const argv[] = {const_cast<char*>(path), nullptr};
    char* const envp[] = {nullptr};
    execve(path, argv, envp);
    int err = errno;
    if (write(fds[1], &err, sizeof err) != sizeof err) _exit(126);
    _exit(127);
  }
  close(fds[1]);
  int err = 0;
  ssize_t n = read(fds[0], &err, sizeof err);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n == sizeof err) return ErrnoName(err);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "exit " + std::to_string(status);
  return "ok";
}

// execve(): MAY_EXEC on a regular file (a root needs one x bit), search on
// the path; chdir(): search on the directory.
void AddExecChdir() {
  struct Class {
    const char* name;
    const Identity& who;
    int shift;
  };
  const Class classes[] = {{"owner", U1000(), 6}, {"group", U1001(), 3}, {"other", U1002(), 0}};
  const mode_t modes[] = {0755, 0644, 0700, 0070, 0007, 0111, 0611};
  for (const Class& c : classes) {
    for (mode_t m : modes) {
      int bits = (m >> c.shift) & 7;
      Add(std::string("exec.class.") + c.name + "." + Oct(m), c.who, [m] { MkTrue("t", 1000, 2000, m); },
          [] { return Exec("./t"); }, nullptr, (bits & 1) ? "ok" : "EACCES");
    }
  }
  Add("exec.root.no-exec-bit", Root(), [] { MkTrue("t", 1000, 1000, 0644); }, [] { return Exec("./t"); }, nullptr,
      "EACCES");
  Add("exec.root.other-exec-bit", Root(), [] { MkTrue("t", 1000, 1000, 0601); }, [] { return Exec("./t"); },
      nullptr, "ok");
  Add("exec.cap-dac-override.no-exec-bit", U1002().With({CAP_DAC_OVERRIDE}), [] { MkTrue("t", 1000, 1000, 0600); },
      [] { return Exec("./t"); }, nullptr, "EACCES");
  Add("exec.cap-dac-override.owner-exec-bit", U1002().With({CAP_DAC_OVERRIDE}),
      [] { MkTrue("t", 1000, 1000, 0700); }, [] { return Exec("./t"); }, nullptr, "ok");
  Add("exec.directory", Root(), [] { MkDir("t", 0, 0, 0755); }, [] { return Exec("./t"); }, nullptr, "EACCES");
  Add("exec.search-denied", U1000(),
      [] {
        MkDir("a", 0, 0, 0700);
        MkTrue("a/t", 1000, 1000, 0755);
      },
      [] { return Exec("a/t"); }, nullptr, "EACCES");
  Add("exec.fifo", U1000(), [] { MkFifo("t", 1000, 1000, 0777); }, [] { return Exec("./t"); }, nullptr, "EACCES");
  auto dir = [](uid_t u, gid_t g, mode_t m) { return [=] { MkDir("d", u, g, m); }; };
  auto cd = [] { return Result(chdir("d")); };
  Add("chdir.other-search", U1002(), dir(1000, 1000, 0751), cd, nullptr, "ok");
  Add("chdir.other-no-search", U1002(), dir(1000, 1000, 0776), cd, nullptr, "EACCES");
  Add("chdir.owner-no-search", U1000(), dir(1000, 1000, 0677), cd, nullptr, "EACCES");
  Add("chdir.group-search", U1001(), dir(1000, 2000, 0710), cd, nullptr, "ok");
  Add("chdir.cap-dac-read-search", U1002().With({CAP_DAC_READ_SEARCH}), dir(1000, 1000, 0700), cd, nullptr, "ok");
  Add("chdir.root", Root(), dir(1000, 1000, 0), cd, nullptr, "ok");
  Add("chdir.root-nocaps", RootNoCaps(), dir(1000, 1000, 0770), cd, nullptr, "EACCES");
  Add("chdir.file", U1000(), [] { MkFile("d", 1000, 1000, 0755); }, cd, nullptr, "ENOTDIR");
  Add("chdir.fchdir-no-search", U1002(), dir(1000, 1000, 0774),
      [] {
        int fd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) return "open " + ErrnoName(errno);
        std::string r = Result(fchdir(fd));
        close(fd);
        return r;
      },
      nullptr, "EACCES");
}

// The protected_* sysctls as the host has them (read, never changed).
void AddProtected() {
  const Sysctls& s = HostSysctls();
  auto sticky = [](auto&& inside) {
    return [=] {
      MkDir("t", 0, 0, 01777);
      inside();
    };
  };
  Add("protected.regular.creat-others-file-world-writable-sticky", U1000(),
      sticky([] { MkFile("t/f", 1001, 1001, 0666); }),
      [] { return Open("t/f", O_WRONLY | O_CREAT, 0644); }, nullptr, s.regular >= 1 ? "EACCES" : "ok");
  Add("protected.regular.open-others-file-without-creat", U1000(), sticky([] { MkFile("t/f", 1001, 1001, 0666); }),
      [] { return Open("t/f", O_WRONLY); }, nullptr, "ok");
  Add("protected.regular.creat-own-file", U1000(), sticky([] { MkFile("t/f", 1000, 1000, 0666); }),
      [] { return Open("t/f", O_WRONLY | O_CREAT, 0644); }, nullptr, "ok");
  Add("protected.regular.creat-dir-owners-file", U1000(), sticky([] { MkFile("t/f", 0, 0, 0666); }),
      [] { return Open("t/f", O_WRONLY | O_CREAT, 0644); }, nullptr, "ok");
  Add("protected.regular.creat-group-writable-sticky", U1000(),
      [] {
        MkDir("t", 0, 100, 01770);
        MkFile("t/f", 1001, 1001, 0666);
      },
      [] { return Open("t/f", O_WRONLY | O_CREAT, 0644); }, nullptr, s.regular >= 2 ? "EACCES" : "ok");
  Add("protected.fifos.creat-others-fifo", U1000(), sticky([] { MkFifo("t/p", 1001, 1001, 0666); }),
      [] { return Open("t/p", O_RDONLY | O_CREAT | O_NONBLOCK, 0644); }, nullptr, s.fifos >= 1 ? "EACCES" : "ok");
  Add("protected.symlinks.follow-others-link-in-sticky", U1000(),
      sticky([] {
        MkFile("f", 0, 0, 0644);
        MkSymlink("../f", "t/l", 1001, 1001);
      }),
      [] { return Open("t/l", O_RDONLY); }, nullptr, s.symlinks >= 1 ? "EACCES" : "ok");
  Add("protected.symlinks.follow-own-link-in-sticky", U1000(),
      sticky([] {
        MkFile("f", 0, 0, 0644);
        MkSymlink("../f", "t/l", 1000, 1000);
      }),
      [] { return Open("t/l", O_RDONLY); }, nullptr, "ok");
  Add("protected.symlinks.follow-dir-owners-link", U1000(),
      sticky([] {
        MkFile("f", 0, 0, 0644);
        MkSymlink("../f", "t/l", 0, 0);
      }),
      [] { return Open("t/l", O_RDONLY); }, nullptr, "ok");
  Add("protected.symlinks.lstat-others-link", U1000(),
      sticky([] { MkSymlink("../f", "t/l", 1001, 1001); }),
      [] {
        struct stat st;
        return Result(lstat("t/l", &st));
      },
      nullptr, "ok");
}

// What new objects get.
void AddCreate() {
  auto dir = [](uid_t u, gid_t g, mode_t m) { return [=] { MkDir("d", u, g, m); }; };
  auto st = [] { return Stat("d/n"); };
  auto creat = [](mode_t m) { return [=] { return Open("d/n", O_WRONLY | O_CREAT | O_EXCL, m); }; };
  auto mkd = [](mode_t m) { return [=] { return Result(mkdir("d/n", m)); }; };
  Add("create.owner-and-group", U1000(), dir(0, 0, 0777), creat(0666), st, "ok d/n=f0644,1000:1000");
  Add("create.primary-group", U1003(), dir(0, 0, 0777), creat(0666), st, "ok d/n=f0644,1003:2000");
  Add("create.umask-077", U1000(), dir(0, 0, 0777), creat(0666), st, "ok d/n=f0600,1000:1000", 077);
  Add("create.umask-000", U1000(), dir(0, 0, 0777), creat(0666), st, "ok d/n=f0666,1000:1000", 0);
  Add("create.umask-027-mode-0777", U1000(), dir(0, 0, 0777), creat(0777), st, "ok d/n=f0750,1000:1000", 027);
  Add("create.mode-setuid", U1000(), dir(0, 0, 0777), creat(04755), st, "ok d/n=f4755,1000:1000");
  Add("create.mode-setgid-own-group", U1000(), dir(0, 0, 0777), creat(02755), st, "ok d/n=f2755,1000:1000");
  Add("create.mode-sticky", U1000(), dir(0, 0, 0777), creat(01644), st, "ok d/n=f1644,1000:1000");
  Add("create.root", Root(), dir(1000, 1000, 0755), creat(0666), st, "ok d/n=f0644,0:0");
  Add("create.setgid-dir.nonmember", U1002(), dir(0, 2000, 02777), creat(0666), st, "ok d/n=f0644,1002:2000");
  Add("create.setgid-dir.nonmember-setgid-mode", U1002(), dir(0, 2000, 02777), creat(02755), st,
      "ok d/n=f0755,1002:2000");
  Add("create.setgid-dir.nonmember-setgid-no-group-exec", U1002(), dir(0, 2000, 02777), creat(02745), st,
      "ok d/n=f2745,1002:2000");
  Add("create.setgid-dir.member-setgid-mode", U1001(), dir(0, 2000, 02777), creat(02755), st,
      "ok d/n=f2755,1001:2000");
  Add("create.setgid-dir.cap-fsetid-setgid-mode", U1002().With({CAP_FSETID}), dir(0, 2000, 02777), creat(02755),
      st, "ok d/n=f2755,1002:2000");
  Add("create.setgid-dir.root-setgid-mode", Root(), dir(0, 2000, 02777), creat(02755), st, "ok d/n=f2755,0:2000");
  Add("mkdir.mode-umask", U1000(), dir(0, 0, 0777), mkd(0777), st, "ok d/n=d0755,1000:1000");
  Add("mkdir.sticky", U1000(), dir(0, 0, 0777), mkd(01777), st, "ok d/n=d1777,1000:1000", 0);
  Add("mkdir.setgid-mode-ignored", U1000(), dir(0, 0, 0777), mkd(02777), st, "ok d/n=d0777,1000:1000", 0);
  Add("mkdir.setuid-mode-ignored", U1000(), dir(0, 0, 0777), mkd(04777), st, "ok d/n=d0777,1000:1000", 0);
  Add("mkdir.setgid-dir.inherits", U1002(), dir(0, 2000, 02777), mkd(0777), st, "ok d/n=d2755,1002:2000");
  Add("mkdir.setgid-dir.inherits-nested", U1002(), dir(0, 2000, 02777),
      [] {
        if (mkdir("d/n", 0777) != 0) return "mkdir d/n " + ErrnoName(errno);
        return Result(mkdir("d/n/m", 0700));
      },
      [] { return Stat("d/n") + " " + Stat("d/n/m"); }, "ok d/n=d2755,1002:2000 d/n/m=d2700,1002:2000");
  Add("mkdir.setgid-dir.file-in-subdir", U1002(), dir(0, 2000, 02777),
      [] {
        if (mkdir("d/n", 0777) != 0) return "mkdir d/n " + ErrnoName(errno);
        return Open("d/n/f", O_WRONLY | O_CREAT, 0644);
      },
      [] { return Stat("d/n/f"); }, "ok d/n/f=f0644,1002:2000");
  Add("mkdir.setgid-dir.umask-077", U1001(), dir(0, 2000, 02777), mkd(0777), st, "ok d/n=d2700,1001:2000", 077);
  // Default ACLs: inherited, masked by the mode asked for, umask ignored.
  auto dacl_dir = [](const char* dacl) {
    return [=] {
      MkDir("d", 0, 0, 0777);
      SetAcl("d", dacl, true);
    };
  };
  const char* kDacl = "u::rwx,u:1001:rwx,g::r-x,m::rwx,o::---";
  auto st_acl = [] { return Stat("d/n") + " " + Acl("d/n"); };
  Add("create.default-acl.file", U1000(), dacl_dir(kDacl), creat(0666), st_acl,
      "ok d/n=f0660,1000:1000 d/n.acl=u::rw-,u:1001:rwx,g::r-x,m::rw-,o::---");
  Add("create.default-acl.file-umask-ignored", U1000(), dacl_dir(kDacl), creat(0666), st_acl,
      "ok d/n=f0660,1000:1000 d/n.acl=u::rw-,u:1001:rwx,g::r-x,m::rw-,o::---", 077);
  Add("create.default-acl.file-mode-0640", U1000(), dacl_dir(kDacl), creat(0640), st_acl,
      "ok d/n=f0640,1000:1000 d/n.acl=u::rw-,u:1001:rwx,g::r-x,m::r--,o::---");
  Add("create.default-acl.file-no-default", U1000(), dacl_dir(kDacl), creat(0666),
      [] { return Xattrs("d/n"); }, "ok d/n.xattrs=system.posix_acl_access");
  Add("create.default-acl.mkdir", U1000(), dacl_dir(kDacl), mkd(0777),
      [] { return Stat("d/n") + " " + Acl("d/n") + " " + Acl("d/n", true); },
      "ok d/n=d0770,1000:1000 d/n.acl=u::rwx,u:1001:rwx,g::r-x,m::rwx,o::--- "
      "d/n.dacl=u::rwx,u:1001:rwx,g::r-x,m::rwx,o::---");
  Add("create.default-acl.mkdir-mode-0750", U1000(), dacl_dir(kDacl), mkd(0750),
      [] { return Stat("d/n") + " " + Acl("d/n"); },
      "ok d/n=d0750,1000:1000 d/n.acl=u::rwx,u:1001:rwx,g::r-x,m::r-x,o::---");
  Add("create.default-acl.minimal", U1000(), dacl_dir("u::rwx,g::r-x,o::r-x"), creat(0666), st_acl,
      "ok d/n=f0644,1000:1000 d/n.acl=u::rw-,g::r--,o::r--", 077);
  Add("create.default-acl.named-group", U1000(), dacl_dir("u::rwx,g::---,g:2000:rw-,m::rw-,o::---"), creat(0666),
      st_acl, "ok d/n=f0660,1000:1000 d/n.acl=u::rw-,g::---,g:2000:rw-,m::rw-,o::---");
  Add("create.default-acl.fifo", U1000(), dacl_dir(kDacl), [] { return Result(mkfifo("d/n", 0666)); }, st_acl,
      "ok d/n=p0660,1000:1000 d/n.acl=u::rw-,u:1001:rwx,g::r-x,m::rw-,o::---");
  Add("create.default-acl.symlink-unaffected", U1000(), dacl_dir(kDacl),
      [] { return Result(symlink("x", "d/n")); }, st, "ok d/n=l0777,1000:1000");
  Add("create.acl-grants-write-on-dir", U1000(),
      [] {
        MkDir("d", 0, 0, 0755);
        SetAcl("d", "u::rwx,u:1000:rwx,g::r-x,m::rwx,o::r-x");
      },
      creat(0644), st, "ok d/n=f0644,1000:1000");
  Add("create.acl-mask-denies-write-on-dir", U1000(),
      [] {
        MkDir("d", 0, 0, 0755);
        SetAcl("d", "u::rwx,u:1000:rwx,g::r-x,m::r-x,o::r-x");
      },
      creat(0644), st, "EACCES d/n=absent");
}

}  // namespace

void AddOpenAccessChecks() {
  AddOpenMatrix();
  AddOpenMisc();
  AddSearch();
  AddAccess();
  AddProtected();
  AddExecChdir();
}

void AddCreateChecks() { AddCreate(); }

}  // namespace pathwarden::conformance
