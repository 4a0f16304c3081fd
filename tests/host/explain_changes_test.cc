// `explain --verify --scratch` on changing queries, with the kernel as the
// judge: every query that changes a tree (unlink, rmdir, rename with
// RENAME_NOREPLACE and RENAME_EXCHANGE across directories, link, symlink,
// mkdir, mknod, open with O_CREAT and O_TRUNC, truncate, chmod, chown,
// lchown, setxattr, removexattr) in sticky, setgid, ACL'd, group-only and
// read-only directories and on files protected_hardlinks guards, asked as
// root, root without capabilities, users with supplementary groups and a
// user with CAP_CHOWN and CAP_FOWNER, under several Landlock policies
// (refer, remove_* and make_* rights given and withheld, two layers), is
// run on the kernel inside the scratch directory (Session::Ask(q, true,
// DIR)) and must give the model's errno; when both allow it, what the
// kernel made of the query's paths (type, mode with the setuid, setgid
// and sticky bits, owner, group, ACLs, symlink body) must be what the
// model's Apply() makes of them (setgid inheritance, umask and default
// ACLs, the bits chmod, chown and truncate clear); after each, the tree
// must be exactly as it was. In a private mount namespace, on a tmpfs;
// root and Landlock only, skipped elsewhere.

#include <dirent.h>
#include <fcntl.h>
#include <sys/acl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/capability.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "pathwarden/executor.h"
#include "pathwarden/tree.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/scratch_host.h"
#include "src/kernel/sysctl_guard.h"
#include "src/kernel/tree_capture.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/listing_test_util.h"
#include "src/query/query.h"
#include "src/query/scratch.h"

namespace pathwarden {
namespace {

using query::Query;
using query::Session;

// The tree (S is the tmpfs's root, 0755 root):
//
//   pub/ 0777            f_root 0644, f_alice 0644 1000, f_bob 0600 1001,
//                        suid_w 04777 1001, sgid_w 02777 1001:2000,
//                        sgid_nox_w 02666 1001:2000,
//                        l_alice -> f_alice (1000's), d_alice/ 0755 1000,
//                        d_full/ 0777 (x)
//   sticky/ 01777        f_root 0666, f_alice 0644 1000, f_bob 0666 1001,
//                        l_bob -> f_alice (1001's), d_bob/ 0777 1001,
//                        d_alice/ 0755 1000
//   sticky_alice/ 01777 1000     f_bob 0644 1001
//   setgid/ 02775 0:2000         f 0664 0:2000, sub/ 02775 0:2000
//   team/ 0770 0:2000            f 0660 0:2000, d/ 0770 0:2000
//   alice/ 0755 1000     f 0644, x 0755, suid 04755, sgid 02755 1000:2000,
//                        ro/ 0555 (f 0644), priv/ 0700 (f 0600)
//   bob/ 0750 1001               f 0640 1001
//   acl/ 0755 (user:1001:rwx, mask rwx; default user:1001:rwx
//        group:2000:rwx)         f 0644 (user:1000:rw-), d/ (inherited)
//   acl_deny/ 0777 (user:1000:---)   f 0666
//   ro/ 0555             f 0644, d/ 0755
//   hl/ 0777             bob_0600, bob_0644, bob_0666, bob_suid 04755,
//                        bob_sgid 02775, bob_sgid_nox 02664 (all 1001:1001)
//   empty/ 0755, full/ 0755 (x 0644), fifo 0666, lnk -> pub
//
// Users: 1000 (alice, groups 1000 2000), 1001 (bob, group 1001), 1002
// (groups 1002 2000, CAP_CHOWN and CAP_FOWNER).
class Tree {
 public:
  explicit Tree(std::string root) : root_(std::move(root)) {}

  std::string Build() {
    Dir("pub", 0777, 0, 0);
    File("pub/f_root", 0644, 0, 0);
    File("pub/f_alice", 0644, 1000, 1000);
    File("pub/f_bob", 0600, 1001, 1001);
    File("pub/suid_w", 04777, 1001, 1001);
    File("pub/sgid_w", 02777, 1001, 2000);
    File("pub/sgid_nox_w", 02666, 1001, 2000);
    Link("pub/l_alice", "f_alice", 1000, 1000);
    Dir("pub/d_alice", 0755, 1000, 1000);
    Dir("pub/d_full", 0777, 0, 0);
    File("pub/d_full/x", 0644, 0, 0);
    Dir("sticky", 01777, 0, 0);
    File("sticky/f_root", 0666, 0, 0);
    File("sticky/f_alice", 0644, 1000, 1000);
    File("sticky/f_bob", 0666, 1001, 1001);
    Link("sticky/l_bob", "f_alice", 1001, 1001);
    Dir("sticky/d_bob", 0777, 1001, 1001);
    Dir("sticky/d_alice", 0755, 1000, 1000);
    Dir("sticky_alice", 01777, 1000, 1000);
    File("sticky_alice/f_bob", 0644, 1001, 1001);
    Dir("setgid", 02775, 0, 2000);
    File("setgid/f", 0664, 0, 2000);
    Dir("setgid/sub", 02775, 0, 2000);
    Dir("team", 0770, 0, 2000);
    File("team/f", 0660, 0, 2000);
    Dir("team/d", 0770, 0, 2000);
    Dir("alice", 0755, 1000, 1000);
    File("alice/f", 0644, 1000, 1000);
    File("alice/x", 0755, 1000, 1000);
    File("alice/suid", 04755, 1000, 1000);
    File("alice/sgid", 02755, 1000, 2000);
    Dir("alice/ro", 0555, 1000, 1000);
    File("alice/ro/f", 0644, 1000, 1000);
    Dir("alice/priv", 0700, 1000, 1000);
    File("alice/priv/f", 0600, 1000, 1000);
    Dir("bob", 0750, 1001, 1001);
    File("bob/f", 0640, 1001, 1001);
    Dir("acl", 0755, 0, 0);
    Acl("acl", ACL_TYPE_ACCESS, "u::rwx,u:1001:rwx,g::r-x,m::rwx,o::r-x");
    Acl("acl", ACL_TYPE_DEFAULT, "u::rwx,u:1001:rwx,g::r-x,g:2000:rwx,m::rwx,o::r-x");
    File("acl/f", 0644, 0, 0);
    Acl("acl/f", ACL_TYPE_ACCESS, "u::rw-,u:1000:rw-,g::r--,m::rw-,o::r--");
    if (mkdir(Abs("acl/d").c_str(), 0777) != 0) Fail("mkdir acl/d");  // the default ACL's
    Dir("acl_deny", 0777, 0, 0);
    Acl("acl_deny", ACL_TYPE_ACCESS, "u::rwx,u:1000:---,g::rwx,m::rwx,o::rwx");
    File("acl_deny/f", 0666, 0, 0);
    Dir("ro", 0755, 0, 0);
    File("ro/f", 0644, 0, 0);
    Dir("ro/d", 0755, 0, 0);
    if (chmod(Abs("ro").c_str(), 0555) != 0) Fail("chmod ro");
    Dir("hl", 0777, 0, 0);
    File("hl/bob_0600", 0600, 1001, 1001);
    File("hl/bob_0644", 0644, 1001, 1001);
    File("hl/bob_0666", 0666, 1001, 1001);
    File("hl/bob_suid", 04755, 1001, 1001);
    File("hl/bob_sgid", 02775, 1001, 1001);
    File("hl/bob_sgid_nox", 02664, 1001, 1001);
    Dir("empty", 0755, 0, 0);
    Dir("full", 0755, 0, 0);
    File("full/x", 0644, 0, 0);
    if (mkfifo(Abs("fifo").c_str(), 0666) != 0) Fail("mkfifo fifo");
    Link("lnk", "pub", 0, 0);
    (void)setxattr(Abs("pub/f_alice").c_str(), "user.t", "v", 1, 0);
    return errors_;
  }

 private:
  std::string Abs(const std::string& rel) const { return root_ + "/" + rel; }
  void Fail(const std::string& what) { errors_ += what + ": " + std::strerror(errno) + "; "; }
  void Dir(const std::string& rel, mode_t mode, uid_t uid, gid_t gid) {
    if (mkdir(Abs(rel).c_str(), 0700) != 0 || chown(Abs(rel).c_str(), uid, gid) != 0 ||
        chmod(Abs(rel).c_str(), mode) != 0)
      Fail("mkdir " + rel);
  }
  void File(const std::string& rel, mode_t mode, uid_t uid, gid_t gid) {
    const int fd = open(Abs(rel).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    const bool ok = fd >= 0 && write(fd, rel.data(), rel.size()) == ssize_t(rel.size());
    if (fd >= 0) close(fd);
    if (!ok || chown(Abs(rel).c_str(), uid, gid) != 0 || chmod(Abs(rel).c_str(), mode) != 0)
      Fail("create " + rel);
  }
  void Link(const std::string& rel, const char* target, uid_t uid, gid_t gid) {
    if (symlink(target, Abs(rel).c_str()) != 0 || lchown(Abs(rel).c_str(), uid, gid) != 0)
      Fail("symlink " + rel);
  }
  void Acl(const std::string& rel, acl_type_t type, const char* text) {
    acl_t acl = acl_from_text(text);
    if (acl == nullptr || acl_set_file(Abs(rel).c_str(), type, acl) != 0) Fail("acl " + rel);
    if (acl != nullptr) acl_free(acl);
  }

  std::string root_;
  std::string errors_;
};

// The queries, as a user types them (S: the scratch directory).
std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> t = {
      // unlink: sticky directories (owner of the file, of the directory,
      // neither), group-only, read-only, ACL'd, a symlink and a FIFO.
      "unlink S/pub/f_root", "unlink S/pub/f_alice", "unlink S/pub/f_bob",
      "unlink S/pub/d_alice", "unlink S/pub/missing", "unlink S/pub/l_alice",
      "unlink S/sticky/f_root", "unlink S/sticky/f_alice", "unlink S/sticky/f_bob",
      "unlink S/sticky/l_bob", "unlink S/sticky_alice/f_bob", "unlink S/setgid/f",
      "unlink S/team/f", "unlink S/alice/f", "unlink S/alice/ro/f", "unlink S/alice/priv/f",
      "unlink S/bob/f", "unlink S/acl/f", "unlink S/acl_deny/f", "unlink S/ro/f",
      "unlink S/hl/bob_0600", "unlink S/fifo", "unlink S/lnk", "unlink S/pub/f_root/x",
      // rmdir
      "rmdir S/pub/d_alice", "rmdir S/pub/d_full", "rmdir S/sticky/d_bob",
      "rmdir S/sticky/d_alice", "rmdir S/setgid/sub", "rmdir S/team/d", "rmdir S/acl/d",
      "rmdir S/ro/d", "rmdir S/empty", "rmdir S/full", "rmdir S/lnk", "rmdir S/empty/.",
      "rmdir S/pub/f_root",
      // rename: within and across directories, over files and
      // directories, sticky and setgid ones, no-replace and exchange.
      "rename S/pub/f_root S/pub/new", "rename S/pub/f_alice S/sticky/new",
      "rename S/sticky/f_bob S/sticky/new", "rename S/sticky/f_bob S/pub/f_root",
      "rename S/sticky/f_alice S/sticky/f_root", "rename S/sticky/d_bob S/pub/d_bob",
      "rename S/sticky/d_alice S/sticky/d2", "rename S/sticky_alice/f_bob S/pub/new",
      "rename S/setgid/f S/team/f2", "rename S/alice/f S/bob/f", "rename S/alice/f S/alice/g",
      "rename S/alice/ro/f S/alice/f2", "rename S/acl/f S/pub/acl_f",
      "rename S/acl_deny/f S/pub/new", "rename S/empty S/pub/empty2",
      "rename S/pub/d_full S/empty", "rename S/empty S/full", "rename S/pub/f_root S/pub/d_alice",
      "rename S/pub/d_alice S/pub/f_root", "rename S/pub/d_alice S/pub/d_alice/in",
      "rename S/team/d S/pub/team_d", "rename S/pub/l_alice S/team/l",
      "rename S/pub/f_root S/pub/f_alice RENAME_NOREPLACE",
      "rename S/pub/f_root S/setgid/new RENAME_NOREPLACE",
      "rename S/pub/f_root S/sticky/f_bob RENAME_EXCHANGE",
      "rename S/pub/d_full S/setgid/sub RENAME_EXCHANGE",
      "rename S/alice/f S/team/f RENAME_EXCHANGE",
      "rename S/pub/f_alice S/pub/missing RENAME_EXCHANGE",
      "rename S/empty S/pub/f_root RENAME_EXCHANGE",
      "rename S/sticky/f_alice S/sticky/f_bob RENAME_EXCHANGE",
      "rename S/acl/f S/ro/f RENAME_EXCHANGE",
      // link: protected_hardlinks (this host's value), directories,
      // symlinks, into group-only and read-only directories.
      "link S/pub/f_alice S/pub/link1", "link S/hl/bob_0600 S/hl/l", "link S/hl/bob_0644 S/hl/l",
      "link S/hl/bob_0666 S/hl/l", "link S/hl/bob_suid S/hl/l", "link S/hl/bob_sgid S/hl/l",
      "link S/hl/bob_sgid_nox S/hl/l", "link S/alice/f S/team/l", "link S/pub/d_alice S/pub/l",
      "link S/pub/l_alice S/pub/l", "link S/pub/f_alice S/pub/f_root",
      "link S/alice/f S/ro/l", "link S/pub/f_bob S/sticky/l",
      // creating: symlink, mkdir, mknod, open O_CREAT.
      "symlink S/pub/s f_root", "symlink S/sticky/s /etc", "symlink S/ro/s x",
      "symlink S/team/s x", "symlink S/acl/s x", "symlink S/pub/f_root x",
      "mkdir S/pub/n", "mkdir S/sticky/n 0777", "mkdir S/setgid/n", "mkdir S/team/n",
      "mkdir S/alice/n", "mkdir S/ro/n", "mkdir S/acl/n", "mkdir S/acl_deny/n",
      "mkdir S/pub/f_root", "mkdir S/setgid/sub/n 02755",
      "mknod S/pub/p fifo", "mknod S/setgid/p fifo 0660", "mknod S/ro/p fifo",
      "mknod S/team/p fifo", "mknod S/pub/m file 0600", "mknod S/pub/sock socket",
      "mknod S/acl/m file",
      "open S/pub/new O_WRONLY|O_CREAT|O_EXCL 0600", "open S/setgid/new O_WRONLY|O_CREAT 02775",
      "open S/alice/ro/new O_WRONLY|O_CREAT", "open S/acl/new O_RDWR|O_CREAT",
      "open S/acl_deny/new O_WRONLY|O_CREAT", "open S/team/new O_WRONLY|O_CREAT",
      "open S/pub/f_root O_WRONLY|O_CREAT|O_EXCL", "open S/pub/f_alice O_WRONLY|O_TRUNC",
      "open S/pub/f_root O_RDONLY|O_TRUNC", "open S/sticky/f_bob O_WRONLY|O_CREAT",
      "open S/sticky/f_root O_RDWR|O_CREAT|O_TRUNC", "open S/team/f O_RDWR|O_TRUNC",
      "open S/acl/f O_WRONLY|O_TRUNC", "open S/acl_deny/f O_WRONLY|O_TRUNC",
      "open S/pub/d_alice O_WRONLY|O_CREAT", "open S/ro/f O_WRONLY|O_TRUNC",
      // truncate
      "truncate S/pub/f_root", "truncate S/pub/f_alice", "truncate S/alice/ro/f",
      "truncate S/team/f", "truncate S/acl/f", "truncate S/acl_deny/f", "truncate S/pub/d_alice",
      "truncate S/pub/missing", "truncate S/hl/bob_0666",
      // what writing clears: setuid, and setgid with group execute.
      "truncate S/pub/suid_w", "truncate S/pub/sgid_w", "truncate S/pub/sgid_nox_w",
      "open S/pub/sgid_w O_WRONLY|O_TRUNC", "open S/pub/suid_w O_RDWR|O_CREAT|O_TRUNC",
      // chmod: setuid and setgid bits by owners in and out of the group.
      "chmod S/pub/f_root 0600", "chmod S/pub/f_alice 0777", "chmod S/alice/f 04755",
      "chmod S/alice/sgid 02700", "chmod S/pub/f_alice 02755", "chmod S/team/f 02770",
      "chmod S/pub/d_alice 01777", "chmod S/acl/f 0600", "chmod S/sticky/f_bob 0644",
      "chmod S/pub/sgid_w 02777", "chmod S/setgid/f 02664", "chmod S/setgid/sub 0775",
      // chown and lchown: giving away, to a group one is in or not.
      "chown S/pub/f_alice 1001:-1", "chown S/pub/f_alice -1:2000", "chown S/pub/f_alice -1:1001",
      "chown S/pub/f_alice 1000:1000", "chown S/alice/f 0:0", "chown S/team/f -1:1000",
      "chown S/pub/f_root -1:-1", "chown S/alice/suid -1:2000", "chown S/hl/bob_0666 1002:2000",
      "chown S/pub/suid_w 1001:1001", "chown S/pub/sgid_w -1:2000", "chown S/pub/sgid_nox_w 1002:-1",
      "lchown S/pub/l_alice 1001:1001", "lchown S/pub/l_alice -1:2000", "lchown S/sticky/l_bob -1:-1",
      // xattrs: user.* on files and on a sticky directory.
      "setxattr S/pub/f_alice user.t w", "setxattr S/pub/f_bob user.t w",
      "setxattr S/sticky user.t w", "setxattr S/pub/l_alice user.t w AT_SYMLINK_NOFOLLOW",
      "removexattr S/pub/f_alice user.t", "removexattr S/pub/f_root user.t",
  };
  for (std::string& l : t)
    for (size_t at = 0; (at = l.find("S/", at)) != std::string::npos; at += s.size())
      l.replace(at, 1, s);
  return t;
}

identity::Identity Who(uint32_t uid, uint32_t gid, std::vector<uint32_t> groups, uint64_t caps) {
  identity::Identity id;
  id.cred = Cred::ForUser(uid, gid);
  id.cred.SetGroups(std::move(groups));
  id.cred.cap_effective = id.cred.cap_permitted = caps & kernel_internal::AvailableCaps();
  // The scratch tree is this test's own, in its private mount namespace:
  // no process pathwarden cannot see runs a program from it.
  id.assume_unseen_run_nothing = true;
  return id;
}

std::vector<std::pair<std::string, identity::Identity>> Identities() {
  const uint64_t all = kernel_internal::AvailableCaps();
  return {{"root", Who(0, 0, {0}, all)},
          {"root without capabilities", Who(0, 0, {0}, 0)},
          {"uid 1000 in 1000,2000", Who(1000, 1000, {1000, 2000}, 0)},
          {"uid 1001", Who(1001, 1001, {1001}, 0)},
          {"uid 1002 in 1002,2000 with CAP_CHOWN,CAP_FOWNER",
           Who(1002, 1002, {1002, 2000}, (uint64_t{1} << CAP_CHOWN) | (uint64_t{1} << CAP_FOWNER))}};
}

policy::PathRule Rule(std::string path, landlock::AccessMask access) {
  return {std::move(path), access, {{"test", 1, 1}}};
}

policy::Policy Layer(std::string name, landlock::AccessMask handled,
                     std::vector<policy::PathRule> rules) {
  policy::Policy p;
  p.source = std::move(name);
  p.handled_fs = handled;
  p.paths = std::move(rules);
  std::sort(p.paths.begin(), p.paths.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return p;
}

// The policies: none; writes only beneath pub and sticky (sticky without
// refer); everything but refer; make_* and remove_* split between
// directories, refer on some; and two layers, the second without
// truncate and remove_file.
std::vector<std::pair<std::string, std::vector<policy::Policy>>> Policies(const std::string& s) {
  using namespace landlock;
  const AccessMask rx = kFsExecute | kFsReadFile | kFsReadDir;
  const AccessMask all = kFsAll & ~kFsIoctlDev;
  policy::Policy pub = Layer("writes beneath pub and sticky", all,
                             {Rule("/", rx), Rule(s + "/pub", all),
                              Rule(s + "/sticky", all & ~kFsRefer)});
  policy::Policy no_refer =
      Layer("no refer", all, {Rule("/", rx), Rule(s, all & ~kFsRefer)});
  policy::Policy split = Layer(
      "make and remove split", all,
      {Rule("/", rx), Rule(s, kFsMakeDir | kFsRemoveDir | kFsRefer | kFsWriteFile),
       Rule(s + "/pub", kFsMakeReg | kFsMakeFifo | kFsMakeSym | kFsRemoveFile | kFsTruncate),
       Rule(s + "/setgid", kFsMakeReg | kFsMakeSock | kFsRemoveFile),
       Rule(s + "/sticky", kFsRemoveFile | kFsMakeReg | kFsTruncate),
       Rule(s + "/team", kFsMakeSym | kFsMakeFifo)});
  policy::Policy second = Layer(
      "no truncate, no remove_file", kFsTruncate | kFsRemoveFile | kFsMakeReg | kFsRefer,
      {Rule(s, kFsMakeReg | kFsRefer)});
  return {{"no policy", {}},
          {"writes beneath pub and sticky", {pub}},
          {"no refer", {no_refer}},
          {"make and remove split", {split}},
          {"two layers", {pub, second}}};
}

// Everything a query may change, one line per name (ctimes and inode
// numbers aside: a name removed is made again), read without moving an
// access time. A symlink's access time is left out: the models of this
// test read symlinks on the host (readlink(), which moves it; the
// scratch tests check that the restore puts it back).
std::string Listing(const std::string& root) {
  return query_testing::Listing(root, {.remade = nullptr, .symlink_atime = false});
}

// One object as the comparison of results sees it: "none", or its type,
// mode (with the setuid, setgid and sticky bits), owner and group, symlink
// body and ACLs.
std::string Describe(const std::string& type, uint32_t mode, uint32_t uid, uint32_t gid,
                     const std::string& target, const std::string& acl,
                     const std::string& default_acl) {
  return fmt::format("{} {:04o} {}:{}{}{}{}", type, mode & 07777, uid, gid,
                     target.empty() ? "" : " -> " + target, acl.empty() ? "" : " acl " + acl,
                     default_acl.empty() ? "" : " default " + default_acl);
}

// What the kernel left at `path`.
std::string KernelSees(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return errno == ENOENT ? "none" : std::strerror(errno);
  std::string type = S_ISREG(st.st_mode)    ? "file"
                     : S_ISDIR(st.st_mode)  ? "dir"
                     : S_ISLNK(st.st_mode)  ? "symlink"
                     : S_ISFIFO(st.st_mode) ? "fifo"
                     : S_ISSOCK(st.st_mode) ? "socket"
                                            : "other";
  std::string target;
  if (S_ISLNK(st.st_mode)) {
    char buf[4096];
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    target.assign(buf, n > 0 ? size_t(n) : 0);
  }
  auto acl = kernel_internal::AclText(path, "system.posix_acl_access");
  auto def = kernel_internal::AclText(path, "system.posix_acl_default");
  return Describe(type, st.st_mode, st.st_uid, st.st_gid, target, acl.value_or("?"),
                  def.value_or("?"));
}

// What the model's tree holds at `path`.
std::string ModelSees(const std::vector<TreeEntry>& tree, const std::string& path) {
  for (size_t i = 0; i < tree.size(); ++i) {
    if (TreePath(tree, i) != path) continue;
    const TreeEntry& e = tree[i];
    return Describe(e.type, e.mode, e.uid, e.gid, e.target, e.acl, e.default_acl);
  }
  return "none";
}

class ExplainChangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = KernelUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
    if (std::string err = kernel_internal::EnterPrivateMountNamespace(); !err.empty())
      GTEST_SKIP() << "no private mount namespace: " << err;
    // The host's protected_* values are what the model reads once and the
    // kernel applies each time: no pathwarden run on this machine may
    // change them meanwhile (they take this lock to).
    auto sysctls = kernel_internal::SysctlGuard::Acquire();
    ASSERT_TRUE(sysctls) << sysctls.error();
    sysctls_ = std::move(*sysctls);
    char dir[] = "/tmp/pathwarden-changes.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
    ASSERT_EQ(mount("tmpfs", root_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"), 0)
        << std::strerror(errno);
    mounted_ = true;
    const mode_t old = umask(0);
    const std::string errors = Tree(root_).Build();
    umask(old);
    ASSERT_EQ(errors, "");
  }
  void TearDown() override {
    if (mounted_) {
      EXPECT_EQ(umount2(root_.c_str(), MNT_DETACH), 0) << std::strerror(errno);
    }
    if (!root_.empty()) rmdir(root_.c_str());
  }
  std::unique_ptr<kernel_internal::SysctlGuard> sysctls_;
  std::string root_;
  bool mounted_ = false;
};

TEST_F(ExplainChangesTest, TheKernelAgreesAndTheTreeIsPutBack) {
  const std::string before = Listing(root_);
  const std::vector<std::string> lines = Lines(root_);
  std::vector<Query> queries;
  for (const std::string& line : lines) {
    auto q = query::ParseQueryLine(line);
    ASSERT_TRUE(q) << line << ": " << q.error();
    ASSERT_FALSE(q->read_only) << line;
    queries.push_back(std::move(*q));
  }
  // What the kernel made of the query's paths, read while its change is
  // in place (before the guardian puts the tree back).
  std::vector<std::string> watch, kernel_made;
  query::SetAfterChangeHookForTesting([&](pid_t) {
    kernel_made.clear();
    for (const std::string& p : watch) kernel_made.push_back(KernelSees(p));
  });
  struct Unhook {
    ~Unhook() { query::SetAfterChangeHookForTesting({}); }
  } unhook;
  const auto start = std::chrono::steady_clock::now();
  int asked = 0, agreed = 0, allowed = 0, results = 0, unknown = 0;
  const auto policies = Policies(root_);
  const auto identities = Identities();
  for (const auto& [pname, layers] : policies) {
    for (const auto& [wname, who] : identities) {
      auto session = Session::Open(who, layers);
      ASSERT_TRUE(session) << session.error();
      for (size_t k = 0; k < queries.size(); ++k) {
        const Query& q = queries[k];
        watch = {q.path};
        if (std::holds_alternative<Rename>(q.request) || std::holds_alternative<Link>(q.request))
          watch.push_back(q.path2);
        kernel_made.assign(watch.size(), "not changed");
        const query::Answer a = (*session)->Ask(q, true, root_);
        ++asked;
        const std::string what = fmt::format("{} under {}: {}", wname, pname, lines[k]);
        if (!a.kernel_err) {
          ADD_FAILURE() << what << ": not verified: " << a.unverified;
          continue;
        }
        if (a.decision.unknown()) {
          // Whether an xattr is there to remove: the model does not hold
          // the host's (never allowed; nothing else may be unknown).
          EXPECT_EQ(q.op, "removexattr") << what << ": " << a.decision.ToText();
          ++unknown;
        } else if (a.decision.err() == *a.kernel_err) {
          ++agreed;
          allowed += a.decision.err() == 0;
          if (a.decision.err() == 0) {
            // The model's change, on a model of the tree as it was.
            auto fresh = Session::Open(who, layers);
            ASSERT_TRUE(fresh) << fresh.error();
            const Decision d = (*fresh)->model().Apply((*fresh)->asker(), q.request);
            ASSERT_TRUE(d.allowed()) << what << ": Apply(): " << d.ToText();
            const std::vector<TreeEntry> tree = (*fresh)->model().Snapshot();
            for (size_t w = 0; w < watch.size(); ++w)
              EXPECT_EQ(ModelSees(tree, watch[w]), kernel_made[w])
                  << what << ": the model made " << watch[w] << " otherwise than the kernel";
            ++results;
          }
        } else {
          ADD_FAILURE() << what << ": the kernel says "
                        << (*a.kernel_err == 0 ? "ok" : ErrnoName(*a.kernel_err))
                        << "\n  explain: " << query::RenderText(**session, a, false);
        }
        ASSERT_EQ(Listing(root_), before) << what << ": the tree was not put back";
      }
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d changing queries (%zu lines, %zu identities, %zu policies): %d agreed, %d "
              "unknown (removexattr), %d allowed (their results compared), in %.1f s\n",
              asked, queries.size(), identities.size(), policies.size(), agreed, unknown, allowed,
              secs);
  RecordProperty("asked", asked);
  RecordProperty("agreed", agreed);
  RecordProperty("unknown", unknown);
  RecordProperty("results", results);
  EXPECT_EQ(agreed + unknown, asked);
  EXPECT_LT(unknown, asked / 20);
  EXPECT_GT(asked, 1000);
}

}  // namespace
}  // namespace pathwarden
