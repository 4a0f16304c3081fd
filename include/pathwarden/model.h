// File: pathwarden/model.h
//
// A Model: a filesystem tree (tmpfs and bind mounts), the processes acting
// on it, and their Landlock domains, which answers what Linux 6.18 answers
// to a request (pathwarden/request.h) and why (pathwarden/decision.h).
//
// Build the tree with typed handles, make processes with explicit
// credentials, confine them with Landlock rulesets, then ask: Evaluate()
// answers without changing the model; Apply() changes it as the call
// would. Thread safety: any number of threads may call Evaluate() (and the
// const accessors) while one thread calls everything else, provided no
// thread changes the cwd, root, fds or domain of a process being
// evaluated; an Evaluate() that races a change retries, so no answer
// mixes two states.
//
// Errors: the builder's calls return the errno Linux would give the
// equivalent call (EEXIST, ENOTDIR, ENOENT, ENAMETOOLONG, EINVAL for a
// name with '/' or "."/".."), and ESTALE for a handle whose object was
// removed or unmounted. They act as root with umask 0 and check no
// permission.
//
// Example:
//   Model m;
//   Node home = *m.Mkdir(m.Root(), "home");
//   Node alice_home = *m.Mkdir(home, "alice", {.mode = 0700, .uid = 1000, .gid = 1000});
//   Node key = *m.Create(alice_home, "id_ed25519", {.type = FileType::kRegular},
//                        {.mode = 0600, .uid = 1000, .gid = 1000});
//   Process backup = m.Spawn("backup", Cred::ForUser(34, 34));
//   Decision d = m.Evaluate(backup, Access{.path = "/home/alice/id_ed25519",
//                                          .mode = R_OK});
//   // d.err() == EACCES, d.stage() == Stage::kWalk,
//   // d.ToText() == "walk: no search permission on /home/alice (drwx------ "
//   //               "1000:1000; uid 34 falls in \"other\": --- lacks x)"

#ifndef PATHWARDEN_MODEL_H_
#define PATHWARDEN_MODEL_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/acl.h"
#include "pathwarden/cred.h"
#include "pathwarden/decision.h"
#include "pathwarden/handles.h"
#include "pathwarden/kernel_rules.h"
#include "pathwarden/request.h"
#include "pathwarden/result.h"
#include "pathwarden/ruleset.h"
#include "pathwarden/security_modules.h"
#include "pathwarden/sysctls.h"
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

struct TreeEntry;
struct EngineOptions;

// Mount flags (model values, not MS_*).
inline constexpr uint32_t kMountRdonly = 1u << 0;
inline constexpr uint32_t kMountNoexec = 1u << 1;
inline constexpr uint32_t kMountNosuid = 1u << 2;
inline constexpr uint32_t kMountNodev = 1u << 3;
inline constexpr uint32_t kMountNosymfollow = 1u << 4;

// Inode attributes (chattr; model values).
inline constexpr uint32_t kAttrImmutable = 1u << 0;
inline constexpr uint32_t kAttrAppend = 1u << 1;

enum class FileType : uint8_t { kRegular, kDirectory, kSymlink, kFifo, kSocket, kChar, kBlock };

// NodeAttrs
//
// What chown, chmod and setfacl -m give a node, in that order: the owner,
// the permission bits (with setuid, setgid, sticky; by default 0755 for a
// directory, 0644 for others; symlinks ignore them), and ACL entries
// modified onto the minimal ACL of the mode (an access ACL equivalent to a
// mode becomes that mode, as setfacl does); a directory's default ACL.
// A named entry of kAclNoId ((uid_t)-1) is EINVAL, as Linux answers it.
struct NodeAttrs {
  std::optional<uint32_t> mode = std::nullopt;
  uint32_t uid = 0, gid = 0;
  std::optional<std::vector<AclEntry>> acl = std::nullopt;
  std::optional<std::vector<AclEntry>> default_acl = std::nullopt;
};

// NodeKind
//
// What to create: the type, a symlink's target, a regular file's content,
// a device's numbers.
struct NodeKind {
  FileType type = FileType::kRegular;
  std::string target = {};
  std::string content = {};
  uint32_t rdev_major = 1, rdev_minor = 3;
};

// HostOptions
//
// How Model::FromHost() reads the machine it runs on.
struct HostOptions {
  // The mount table (/proc/PID/mountinfo of the namespace to model; paths
  // in it are taken as host paths) and the directory of the protected_*
  // sysctls.
  std::string mountinfo = "/proc/self/mountinfo";
  std::string sysctl_dir = "/proc/sys/fs";
  // Where the mount table's paths are read on the host: "" for this
  // process's own root and mount namespace; "/proc/PID/root" for those of
  // process PID (another mount namespace, a container's pivoted root, a
  // chroot), whose mountinfo names its mounts relative to its root.
  std::string root_dir;
  // kSnapshot: what was read once stays: every answer comes from the host
  // as it was when first read (one-shot questions). kRevalidate: before
  // each Evaluate() and Apply(), every entry the request's paths walk
  // through, and the sysctls, are checked against the host again
  // (d_revalidate(); long-running uses such as tracing).
  enum class Consistency : uint8_t { kSnapshot, kRevalidate };
  Consistency consistency = Consistency::kSnapshot;
  // Overflow
  //
  // Set when this process reads the host from inside a user namespace
  // other than the initial one (UserNamespace::reader_inside): the host
  // then shows every owner and group that does not map into it as the
  // overflow ids, so an inode shown with them may belong to anyone
  // unmapped. Such an inode is left unknown where who it belongs to could
  // change an answer: its owner is the overflow uid and the asker's fsuid
  // is too (`identity_uid`); or its group is the overflow gid, the asker
  // is in that group (`identity_gid`), and its group's permissions differ
  // from others' (or it has an ACL). (The checks that compare two owners,
  // protected_symlinks, _regular and _fifos, answer unknown themselves:
  // UserNamespace::overflow_shown.) A model of many askers (trace) sets
  // both.
  struct Overflow {
    uint32_t uid = 65534, gid = 65534;
    bool identity_uid = true, identity_gid = true;
  };
  std::optional<Overflow> overflow = std::nullopt;
  // Whether the model asks which programs the host's processes run
  // (/proc/PID/exe): a running program cannot be opened for writing or
  // truncated (ETXTBSY), and where some process's executable cannot be
  // read, that is unknown for every file with an execute bit. A file
  // server deciding for the files it serves turns it off: the kernel
  // checks its own inodes (a FUSE file a process runs) before the server
  // is asked, and the server's own open of the backing file meets the
  // host's.
  bool running_programs = true;
  // A process whose program cannot be read (/proc/PID/exe: another
  // user's when this process is not root, one a security module hides,
  // every process outside this PID namespace) could run any file with an
  // execute bit, so writing such a file is unknown while one exists. A
  // caller that knows no such process runs the files it asks about (a
  // test's own scratch tree, a tree only it can reach) sets this: they
  // are then taken to run nothing.
  bool assume_unseen_run_nothing = false;
  // procfs shows each task the sysctls of its own network, IPC and user
  // namespaces (/proc/sys/net/, kernel/msg*, sem, shm*, fs/mqueue/,
  // user/), whose modes and owners differ from one namespace to another.
  // They are modelled only where every process asked about is known to
  // share those namespaces with this reader (explain --uid, --pid of such
  // a process): the caller says so here; unknown otherwise.
  bool askers_share_sysctl_namespaces = false;
  // How the security modules other than capabilities and Landlock are
  // read (pathwarden/security_modules.h): where one is active and could
  // refuse, Evaluate() answers unknown instead of allowed.
  SecurityModuleSources lsm;
};

// HostCounts
//
// What a host model asked the machine so far.
struct HostCounts {
  uint64_t lookups = 0;     // names read on a miss or by a listing
  uint64_t negatives = 0;   // of which absent
  uint64_t hard_links = 0;  // of which joined an inode already read
  uint64_t listings = 0;    // directories listed
  uint64_t syscalls = 0;    // statx, lgetxattr and readlink calls
  uint64_t revalidated = 0; // entries checked again
  uint64_t refreshed = 0;   // of which changed
};

class Model {
 public:
  // A tmpfs root "/" (0755 root:root) and one process, Init(): root, every
  // capability, umask 022, cwd and root "/". `abi` is the Landlock ABI
  // the model's kernel implements (1 to 7).
  explicit Model(int abi = landlock::kAbiLatest);
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  // FromHost()
  //
  // The machine this process runs on, read on demand and never changed:
  // a name is read from the host (statx, the ACL xattrs, readlink) the
  // first time a walk needs it, as the dcache fills; the mount tree and
  // its flags come from `options.mountinfo`, the protected_* sysctls from
  // `options.sysctl_dir`. Init() is root with every capability; Spawn()
  // processes with the credentials to ask for. What the model cannot see
  // (a directory this process may not search) or does not model (procfs,
  // sysfs, FUSE, NFS, overlayfs, ...: docs/architecture.md) is answered
  // with Verdict::kUnknown and why. Apply() changes the model only.
  // Errors: an unreadable or malformed mount table (FILE:LINE:COL).
  //
  // Example:
  //   auto host = Model::FromHost();
  //   if (!host) return Fail(host.error());
  //   Process www = host->Spawn("www", Cred::ForUser(33, 33));
  //   Decision d = host->Evaluate(www, Open{.path = "/etc/shadow", .flags = O_RDONLY});
  //   // d.err() == EACCES on a usual Debian (0640 root:shadow)
  static Result<Model, std::string> FromHost(const HostOptions& options = {},
                                             int abi = landlock::kAbiLatest);
  // Whether this model reads the host (FromHost()).
  bool is_host() const;
  // The host's security modules as FromHost() read them (HostOptions::lsm);
  // null for a model not read from the host, or with lsm.read off.
  const SecurityModules* security_modules() const;
  // The same as they apply to `p` (ReadSecurityModulesOf() of it or of a
  // process it was forked from, else the model's).
  const SecurityModules* security_modules(Process p) const;
  // ReadSecurityModulesOf()
  //
  // The modules read again as they apply to host process `pid` (its
  // AppArmor profile; HostOptions::lsm otherwise), for `p` and the
  // processes forked from it after (a model of another process than the
  // one that reads it: the C API's pathwarden_process_from_pid()).
  // Errors: ESRCH; EINVAL for a model not read from the host, or read
  // with lsm.read off.
  Result<void, int> ReadSecurityModulesOf(Process p, int pid);

  // Preload()
  //
  // The eager fill: everything below directory `path` (as Init()
  // resolves it) read now, listings, ACLs and mounts below included.
  // `progress`, when set, is told the count of entries read so far.
  // Returns that count. Errors: not a host model; `path` does not
  // resolve to a directory; a directory the host refuses to list.
  Result<uint64_t, std::string> Preload(std::string_view path,
                                        const std::function<void(uint64_t)>& progress = {});

  // Revalidate()
  //
  // Checks every entry that `path` walks through as `p` resolves it
  // (symlinks followed, mounts crossed) against the host again, and
  // re-reads the sysctls; returns how many entries changed. kRevalidate
  // does this before every request. Errors: not a host model.
  Result<int, std::string> Revalidate(Process p, std::string_view path);

  HostCounts host_counts() const;

  // The tree.

  Node Root() const;
  // Lookup()
  //
  // The node at absolute `path` as Init() resolves it (every component
  // but the last followed; the last as `follow` says), or the walk's
  // errno (-1 when a host model cannot say).
  Result<Node, int> Lookup(std::string_view path, bool follow = true) const;
  // Mkdir(), Create()
  //
  // A new node `name` in directory `dir`.
  Result<Node, int> Mkdir(Node dir, std::string_view name, const NodeAttrs& attrs = {});
  Result<Node, int> Create(Node dir, std::string_view name, const NodeKind& kind,
                           const NodeAttrs& attrs = {});
  // SetAttrs()
  //
  // chown, chmod, setfacl -m (and a default ACL) on an existing node.
  Result<void, int> SetAttrs(Node n, const NodeAttrs& attrs);
  // SetInodeFlags()
  //
  // chattr: kAttrImmutable, kAttrAppend (the set given replaces the old).
  Result<void, int> SetInodeFlags(Node n, uint32_t attrs);
  // MountTmpfs(), BindMount()
  //
  // A new tmpfs (its root gets `root_attrs`), or `source` bound, on top
  // of whatever is mounted on directory `at`, with the mount flags (but
  // kMountRdonly, which Remount() sets: a read-only tmpfs could not be
  // filled); the new mount's root. A bind needs `at` and `source` both
  // directories or both not (ENOTDIR). ENOSPC when the namespace holds
  // fs.mount-max mounts already (the kernel's default, 100,000; a host
  // model reads the host's).
  Result<Node, int> MountTmpfs(Node at, const NodeAttrs& root_attrs = {}, uint32_t flags = 0);
  Result<Node, int> BindMount(Node source, Node at);
  // Remount()
  //
  // The mount whose root `mount_root` is gets exactly `flags`; with
  // `superblock` (MS_REMOUNT of a tmpfs), kMountRdonly makes its
  // filesystem read-only too; without (MS_BIND|MS_REMOUNT), only the
  // mount.
  Result<void, int> Remount(Node mount_root, uint32_t flags, bool superblock);
  // PathOf()
  //
  // The absolute path of a node (d_path(): " (deleted)" when removed).
  std::string PathOf(Node n) const;
  // TypeOf()
  //
  // The type of the object a node names (ESTALE for a stale handle).
  Result<FileType, int> TypeOf(Node n) const;

  void SetSysctls(const Sysctls& s);
  Sysctls sysctls() const;
  int abi() const;
  // SetKernelRules()
  //
  // Where kernel builds differ (pathwarden/kernel_rules.h). A new model
  // follows the running kernel's (RunningKernelRules()).
  void SetKernelRules(const KernelRules& k);
  KernelRules kernel_rules() const;

  // Processes. A Process handle of another model, or made up, is not
  // one of this model's (Has() says): the calls that change a process
  // answer ESRCH for it and change nothing, Evaluate() and Apply() answer
  // ESRCH, and the accessors -- cred(), name(), layers() -- require a
  // process of this model (they abort otherwise: a programming error, as
  // reading the value of an error Result is).

  Process Init() const;
  bool Has(Process p) const;
  // Spawn(), Fork()
  //
  // A new process: a fork of `parent` (its credentials, cwd, root, fds
  // and domain; Init() when `parent` is not this model's), then, for
  // Spawn(), with credentials `cred`. `name` is what reasons call it.
  Process Spawn(std::string name, const Cred& cred, Process parent = Process{0});
  Process Fork(Process parent, std::string name);
  // SetCred()
  //
  // Commits new credentials (as setresuid/setgroups/capset would have),
  // which also counts as new credentials for linkat(AT_EMPTY_PATH).
  Result<void, int> SetCred(Process p, const Cred& cred);
  // SetControllingTty()
  //
  // Whether `p` has a controlling terminal (field 7, tty_nr, of
  // /proc/PID/stat; a fork keeps its parent's). Without one, an open of
  // /dev/tty (char 5:0) is ENXIO once every permission check passed
  // (tty_open_current_tty()); with one, that terminal's driver answers
  // (unknown on a host model); nullopt (or never said), unknown. Errors:
  // ESRCH.
  Result<void, int> SetControllingTty(Process p, std::optional<bool> has);
  const Cred& cred(Process p) const;
  std::string_view name(Process p) const;
  int layers(Process p) const;  // Landlock layers of its domain
  // Listen()
  //
  // The abstract UNIX socket `p` listens on (ConnectAbstract's server) is
  // created now, under its domain now. A process listens from its Spawn().
  Result<void, int> Listen(Process p);
  // Resolve()
  //
  // The node `path` names for `p` (its cwd, root and credentials: search
  // permission is checked), as open(path, O_PATH[|O_NOFOLLOW]) would find
  // it; else the errno and why.
  Result<Node, Decision> Resolve(Process p, std::string_view path, bool follow = true) const;
  // NameFd()
  //
  // What reasons call fd `fd` of `p` ("\"name\"" instead of "fd 3").
  Result<void, int> NameFd(Process p, Fd fd, std::string name);

  // SetCwd(), SetRoot()
  //
  // The working directory or root of `p` is now directory `dir`, as the
  // builder's calls do it: no permission checked (an observer that saw
  // chdir() or chroot() succeed). Errors: ESRCH, ESTALE, ENOTDIR.
  Result<void, int> SetCwd(Process p, Node dir);
  Result<void, int> SetRoot(Process p, Node dir);
  // Adopt()
  //
  // Fd `num` of `p` (any number, the standard streams' too; one already
  // there is replaced) now names the object at `n`, open with `flags`
  // (O_ACCMODE, O_PATH, ...), as if `p` had opened it now: no DAC check
  // is made, and the Landlock rights
  // its domain grants there now are frozen into the file (truncate and
  // ioctl_dev, as security_file_open() freezes them). With `opened_by`,
  // the rights are those that process's domain grants (a file opened
  // before `p` was confined further, or by another process). For a
  // descriptor the process got where the model did not see it (tracing).
  // Errors: ESRCH, ESTALE, EBADF (a negative num), EACCES when the domain
  // would not let the opener open it so (nothing changes then).
  Result<Fd, int> Adopt(Process p, int num, Node n, uint64_t flags,
                        Process opened_by = Process{});
  // CloseFd()
  //
  // Fd `fd` of `p` is closed, as the builder's calls do it (a host model
  // is not asked first, unlike Apply(Close)). Errors: ESRCH, EBADF.
  Result<void, int> CloseFd(Process p, Fd fd);

  // Asking.

  // Detail
  //
  // How much a decision says: the reason (the default: the sentence, the
  // DAC verdict, Landlock's layers, the refused component), the reason
  // with the trace of every directory the walk searched (Reason::
  // components: each check, and whether the fast search check took it),
  // or only the verdict and errno (nothing formatted or allocated: for
  // callers that ask millions of questions).
  enum class Detail : uint8_t { kReason, kTrace, kVerdictOnly };

  // Evaluate()
  //
  // What `request` by `p` gives, changing nothing.
  Decision Evaluate(Process p, const Request& request, Detail detail = Detail::kReason) const;
  // EvaluateAsIs()
  //
  // What Unix and Landlock say of the model as it is: Evaluate() without
  // checking a host model against the host first (kRevalidate's
  // Evaluate() calls it after), without the second evaluation that makes
  // a user namespace's doubtful answers unknown, and without the security
  // modules that could refuse (HostOptions::lsm): an allowed answer here
  // is not the kernel's where Evaluate() says unknown.
  Decision EvaluateAsIs(Process p, const Request& request, Detail detail = Detail::kReason) const;
  // Apply()
  //
  // The same, then the change the call makes when it succeeds (a new
  // file, an fd, a layer...). Decision::fd() is the fd an Open or SendFd
  // installed.
  Decision Apply(Process p, const Request& request, Detail detail = Detail::kReason);

  // Snapshot()
  //
  // Every object of the tree as Init() sees it, mounts included, in path
  // order, tree-shaped (pathwarden/tree.h: TreePath() gives a path).
  std::vector<TreeEntry> Snapshot() const;

  struct Impl;
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  friend Model NewModel(const EngineOptions& options, int abi);
  explicit Model(std::unique_ptr<Impl> impl);
  void Start(int abi);

  std::unique_ptr<Impl> impl_;
};

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_MODEL_H_
