// pathwarden-conformance: the project's own POSIX permissions and
// ownership conformance suite. Named checks, each one operation (or a
// short sequence) run as a given identity in a forked child, compared with
// what Linux answers. The harness knows nothing of pathwarden's engine:
// it only needs a directory on the filesystem under test.
//
// A check has four parts, run in this order, all with the working
// directory in the check's own directory DIR/<name>:
//   - setup, as root with every capability and umask 0, in the runner:
//     builds the check's fixtures (Fixture helpers below);
//   - op, in a forked child that took the check's identity (groups, gids,
//     uids, capabilities, umask): the operation, returning what it got
//     ("ok", an errno name, or "ok" and a value it read);
//   - observe, as root in the runner again: the resulting attributes
//     (Stat(), Acl(), Xattrs(), ...), appended to what op returned;
//   - want: the expected text, written from what Linux does.
// Every text is canonical (octal modes, uid:gid, short-form ACLs, sorted
// xattr names, paths relative to the check directory), so that the logs
// of two filesystems can be diffed line by line.

#ifndef PATHWARDEN_TESTS_CONFORMANCE_CONFORMANCE_H_
#define PATHWARDEN_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pathwarden::conformance {

// Identity
//
// Who runs a check's op. Real ids default to the effective ones. `caps`
// says what becomes of the capabilities after the id change: kAll keeps
// every one (root), kNone drops every one, kOnly keeps exactly `keep` (in
// the effective and permitted sets), kAsKernel leaves what setresuid()
// left (a real uid of 0 keeps the permitted set: access() uses it).
struct Identity {
  enum class Caps { kAll, kNone, kOnly, kAsKernel };
  std::string name;  // for messages only
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary
  Caps caps = Caps::kNone;
  std::vector<int> keep;                // CAP_* for kOnly
  uid_t ruid = static_cast<uid_t>(-1);  // -1: the effective one
  gid_t rgid = static_cast<gid_t>(-1);

  // The identity with exactly these capabilities kept.
  Identity With(std::vector<int> caps_kept) const;
};

// The identities of the suite. uid 1000 (groups 1000, 100), 1001 (1001,
// 100 and 2000), 1002 (1002 and 2001), 1003 (2000 as its primary group,
// no supplementary one), root with every capability, and uid 0 without
// capabilities.
const Identity& Root();
const Identity& RootNoCaps();
const Identity& U1000();
const Identity& U1001();
const Identity& U1002();
const Identity& U1003();

// Check
//
// One named check (see the file comment). `umask` is the child's.
struct Check {
  std::string name;
  std::function<void()> setup;
  Identity who;
  mode_t umask = 022;
  std::function<std::string()> op;
  std::function<std::string()> observe;  // may be empty
  std::string want;
};

// Registers a check; names must be unique (checked at start).
void Add(Check check);
// The same, as one call: Add(name, who, setup, op, observe, want[, umask]).
void Add(std::string name, const Identity& who, std::function<void()> setup,
         std::function<std::string()> op, std::function<std::string()> observe, std::string want,
         mode_t umask = 022);

// The host's protected_* sysctls (read once, never changed): protected
// hardlinks, symlinks, fifos and regular files.
struct Sysctls {
  int hardlinks = 0, symlinks = 0, fifos = 0, regular = 0;
};
const Sysctls& HostSysctls();

// The registration functions of the check files, in the suite's order.
void AddChmodChownChecks();
void AddOpenAccessChecks();
void AddCreateChecks();
void AddNamespaceChecks();  // link, unlink, rmdir, rename, mkdir, mknod, symlink
void AddAttributeChecks();  // truncate, write, utimensat, xattrs, then ACLs:
void AddAclChecks();

// Fixture helpers for setup (as root, relative to the check directory).
// A fixture that cannot be built fails its check, which then reports
// "got setup: WHAT PATH: ERRNO" instead of running its op (a file server
// that refuses root's setup is a finding too).
void MkFile(const std::string& path, uid_t uid, gid_t gid, mode_t mode,
            std::string_view content = "");
void MkDir(const std::string& path, uid_t uid, gid_t gid, mode_t mode);
void MkSymlink(const std::string& target, const std::string& path, uid_t uid, gid_t gid);
void MkFifo(const std::string& path, uid_t uid, gid_t gid, mode_t mode);
// Fails the check's setup with `message` (the check reports it).
[[noreturn]] void FixtureError(const std::string& message);
// Sets both times of a fixture to `seconds` since the epoch.
void SetTimes(const std::string& path, long seconds);
// chmod() of a fixture (a directory made unwritable after filling it).
void SetMode(const std::string& path, mode_t mode);
// Sets the access (or, with `default_acl`, the default) ACL from its
// short text form ("u::rw-,u:1001:r--,g::r--,m::r--,o::---").
void SetAcl(const std::string& path, const std::string& text, bool default_acl = false);
void SetXattr(const std::string& path, const std::string& name, const std::string& value);

// Op helpers (in the child): the errno name of a failed call, "ok" for
// success. Result(rc) reads errno when rc < 0.
std::string Result(long rc);
std::string ErrnoName(int err);
// open(path, flags, mode), closing what it opened: "ok" or the errno name.
std::string Open(const std::string& path, int flags, mode_t mode = 0);
// truncate(path, size); lsetxattr(path, name, "v", 1, flags): the same.
std::string TruncateOp(const char* path, off_t size);
std::string SetXattrOp(const char* path, const char* name, int flags = 0);

// Observers (as root): "f 0644 1000:100" (type letter f d l p c b s, the
// mode's 07777 bits, owner), "absent" when the path does not exist.
std::string Stat(const std::string& path);
// "size=N".
std::string Size(const std::string& path);
// The access (or default) ACL in short text form with numeric ids,
// "acl=u::rw-,g::r--,o::r--" (the minimal ACL of the mode when there is
// no extended one), "dacl=..." or "dacl=none" for the default ACL.
std::string Acl(const std::string& path, bool default_acl = false);
// "xattrs=name1,name2" sorted, every namespace root sees; "xattrs=" when
// none.
std::string Xattrs(const std::string& path);
// "PATH=<value>" of one xattr, or "PATH=ENODATA".
std::string XattrValue(const std::string& path, const std::string& name);

}  // namespace pathwarden::conformance

#endif  // PATHWARDEN_TESTS_CONFORMANCE_CONFORMANCE_H_
