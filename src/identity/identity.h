// Who asks: the identity shared by the commands that answer for the live
// machine (--uid, --gid, --groups, --caps, --umask, --cwd, --pid), made
// into credentials as the kernel would hold them.

#ifndef PATHWARDEN_SRC_IDENTITY_IDENTITY_H_
#define PATHWARDEN_SRC_IDENTITY_IDENTITY_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/cred.h"
#include "pathwarden/model.h"
#include "pathwarden/result.h"

namespace pathwarden::identity {

// IdentityOptions
//
// What the command line said; nullopt: not given.
struct IdentityOptions {
  std::optional<uint32_t> uid, gid;
  std::optional<std::vector<uint32_t>> groups;
  std::optional<uint64_t> caps;  // effective (and permitted) set
  std::optional<uint32_t> umask;
  std::optional<std::string> cwd;
  std::optional<pid_t> pid;
  // --userns, --userns-gids: a new user namespace with these maps (the
  // gid map defaults to the uid map); the ids above are then its own.
  std::optional<std::vector<IdRange>> userns_uids, userns_gids;
};

// Identity
//
// The credentials, where relative paths start, the root, and the mount
// table to read; `notes` say what could not be taken (a process's
// Landlock domain).
struct Identity {
  Cred cred;
  std::string cwd = "/";
  std::string root = "/";
  std::string mountinfo = "/proc/self/mountinfo";
  // HostOptions::root_dir: "/proc/PID/root" for a process in another
  // mount namespace or under another root (then `root` is "/": the
  // mount table and the paths are its own).
  std::string host_root;
  // How the host is read for it: HostOptions::assume_unseen_run_nothing
  // (--assume-unseen-run-nothing).
  bool assume_unseen_run_nothing = false;
  // Whose security labels the host's modules are read for
  // (SecurityModuleSources::pid: 0 for this process's), and the modules
  // taken to refuse nothing (--trust-lsm).
  pid_t pid = 0;
  std::vector<std::string> trusted_lsms;
  // Whether the process asked about is in this reader's network, IPC and
  // user namespaces, whose sysctls procfs shows it
  // (HostOptions::askers_share_sysctl_namespaces): --pid's compared, a
  // --uid identity is the caller's context.
  bool shares_sysctl_namespaces = true;
  // A stand-in root to read the modules under (tests:
  // SecurityModuleSources::root); "" for the host's.
  std::string lsm_root;
  // Whether it has a controlling terminal (--pid's process's, else this
  // one's: an identity asked about is started from here);
  // Model::SetControllingTty(). nullopt: not read.
  std::optional<bool> ctty;
  std::vector<std::string> notes;
  // "uid 33 (www-data), gid 33, groups 33, no capabilities"
  std::string Describe() const;
};

// ResolveIdentity()
//
// With nothing given, the caller's own (/proc/self/status: real,
// effective, saved and fs ids, groups, capabilities, umask; the current
// directory). With --uid, a missing --gid is that user's from the user
// database and missing --groups that user's (getgrouplist() with the gid
// in force), as sudo -u does; capabilities default to all for uid 0 and
// none otherwise; the working directory and umask stay the caller's (as
// sudo -u keeps them). --pid takes that process's credentials, capabilities,
// cwd, root and mount table (its Landlock domain cannot be read from
// userspace: a note says so). Options given override what --pid or the
// caller's own give. With --userns, a process that entered a new user
// namespace with that map (unshare -r, bwrap --unshare-user): --uid
// (default 0, the namespace's root), --gid and --groups are the
// namespace's ids, and must map; without --groups it keeps the caller's
// supplementary groups, as unshare(CLONE_NEWUSER) keeps them (unmapped
// ones included); capabilities default to all in the namespace for its
// root, none otherwise. Errors: an unknown uid without --gid, an
// unreadable /proc/PID, a --cwd that is not absolute, --userns with
// --pid, an id the namespace does not map.
Result<Identity, std::string> ResolveIdentity(const IdentityOptions& o);

// ReadCred()
//
// The credentials in a /proc/PID/status (or /proc/PID/task/TID/status)
// file: the four uids and gids, the groups, the effective and permitted
// capabilities, the umask; and, from the same directory, the user
// namespace (ReadUserNamespace()). Errors: unreadable, or a line missing.
Result<Cred, std::string> ReadCred(const std::string& status);

// ReadControllingTty()
//
// Whether the process of `stat` (a /proc/PID/stat or .../task/TID/stat
// file) has a controlling terminal: its tty_nr (field 7) is not 0;
// nullopt when it cannot be read. Its name, field 2, may hold blanks
// and parentheses: the fields are counted from the last ')'.
std::optional<bool> ReadControllingTty(const std::string& stat);

// HostOverflowFor()
//
// HostOptions::overflow for a model that answers as `cred`: set when this
// process is in a user namespace other than the initial one (its own
// /proc/self maps), and so reads unmapped owners as the overflow ids.
// `many`: for a model of several askers (both identity flags set).
std::optional<HostOptions::Overflow> HostOverflowFor(const Cred& cred, bool many = false);

// ParseCaps()
//
// "CAP_DAC_OVERRIDE,chown" (Linux names, with or without CAP_, any
// case), "none", "all". Errors: an unknown name.
Result<uint64_t, std::string> ParseCaps(std::string_view text);

// ParseGroups()
//
// "1000,27" or "none". Errors: not a gid (0 to 2^32-2).
Result<std::vector<uint32_t>, std::string> ParseGroups(std::string_view text);

// ParseId() / ParseUmask()
//
// A uid or gid (0 to 2^32-2; -1 is "no change" in chown, never an id);
// an octal umask (0 to 0777).
Result<uint32_t, std::string> ParseId(std::string_view text, std::string_view what);
Result<uint32_t, std::string> ParseUmask(std::string_view text);

// CapNames()
//
// "CAP_CHOWN,CAP_DAC_OVERRIDE" for a set ("none" when empty, "all" when
// every capability the model knows).
std::string CapNames(uint64_t caps);

}  // namespace pathwarden::identity

#endif  // PATHWARDEN_SRC_IDENTITY_IDENTITY_H_
