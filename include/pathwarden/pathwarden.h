/* File: pathwarden/pathwarden.h
 *
 * The C API of libpathwarden: what Linux 6.18 answers when a process
 * touches a path (the same errno, from the same check) and why, for
 * programs in any language. C99; the C++ API (pathwarden/model.h) is the
 * same library.
 *
 * Handles (opaque, each freed by its own *_free(), which takes NULL):
 *   pathwarden_model     a filesystem tree and its processes: one built
 *                        from nothing (pathwarden_model_new()) or the
 *                        machine this runs on (pathwarden_model_from_host())
 *   pathwarden_process   one process of a model: explicit credentials or
 *                        those of a running pid; its Landlock layers
 *   pathwarden_ruleset   one Landlock layer: a landlockconfig policy file
 *                        (TOML or JSON) or rules added one by one
 *   pathwarden_decision  one answer: verdict, errno, stage, reason (text,
 *                        JSON, and its parts: the walk's components and
 *                        the Landlock layers)
 * A process and a decision keep what they need of their model alive:
 * the handles may be freed in any order.
 *
 * Conventions (those of landlockconfig's C API and of the kernel's
 * syscalls): every call takes a `flags` argument, which must be 0 (it is
 * there for extensions; anything else is -EINVAL). Calls returning int
 * return 0 (or a count) on success and -errno on failure of the API
 * itself: -EINVAL for a NULL argument, a bad value or flags != 0, -EBADF
 * for a pointer that is not a live handle of the right kind, -ESRCH for a
 * process of another model, -ENOMEM, -ERANGE for an index out of range,
 * -ENOENT for something absent; the tree builder returns the errno Linux
 * would give the equivalent call (-EEXIST, -ENOENT, -ENOTDIR, ...).
 * pathwarden_last_error() then says why in words, per thread; it is ""
 * after a call that succeeded. A denial is not an API error: asking
 * returns 0 and a decision that says "denied" and why.
 *
 * Thread safety: as pathwarden::Model. Many readers, one writer: any
 * number of threads may call pathwarden_ask() and the accessors of a
 * model's processes and decisions at once, while at most one thread calls
 * everything else that takes that model (building the tree, making or
 * restricting processes, pathwarden_apply()); a writer does not race the
 * readers' answers (an evaluation that races a change retries), provided
 * it does not change a process being asked (its cwd, fds or layers:
 * pathwarden_process_chdir(), _restrict(), an apply by it). Decisions are
 * immutable: their accessors may be called from any thread. Strings a
 * handle returns live as long as that handle. pathwarden_last_error() is
 * the calling thread's own.
 *
 * Example (error checks left out; tests/capi/consumer/consumer.c has them):
 *   pathwarden_model *m;
 *   pathwarden_model_new(&m, 0, 0);
 *   pathwarden_model_mkdir(m, "/home", 0755, 0, 0, 0);
 *   pathwarden_model_mkdir(m, "/home/alice", 0700, 1000, 1000, 0);
 *   pathwarden_model_create(m, "/home/alice/key", PATHWARDEN_FILE_REGULAR,
 *                           NULL, 0600, 1000, 1000, 0);
 *   struct pathwarden_cred c = {.uid = 34, .gid = 34};
 *   pathwarden_process *backup;
 *   pathwarden_process_new(m, "backup", &c, &backup, 0);
 *   struct pathwarden_request r;
 *   pathwarden_request_init(&r, PATHWARDEN_OP_ACCESS);
 *   r.path = "/home/alice/key";
 *   r.mode = 4;  // R_OK
 *   pathwarden_decision *d;
 *   pathwarden_ask(m, backup, &r, &d, 0);
 *   // pathwarden_decision_verdict(d) == PATHWARDEN_DENIED,
 *   // pathwarden_decision_errno(d) == EACCES,
 *   // pathwarden_decision_stage(d) is "walk", and
 *   // pathwarden_decision_reason(d) is "walk: no search permission on
 *   // /home/alice (drwx------ 1000:1000; uid 34 falls in \"other\": ---
 *   // lacks x)"
 *   pathwarden_decision_free(d);
 *   pathwarden_process_free(backup);
 *   pathwarden_model_free(m);
 */

#ifndef PATHWARDEN_PATHWARDEN_H_
#define PATHWARDEN_PATHWARDEN_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pathwarden/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pathwarden_model pathwarden_model;
typedef struct pathwarden_process pathwarden_process;
typedef struct pathwarden_ruleset pathwarden_ruleset;
typedef struct pathwarden_decision pathwarden_decision;
typedef struct pathwarden_learner pathwarden_learner;

/* The library's version ("0.1.0"), and the message of the calling thread's
 * last failed call ("" when the last call succeeded). Never NULL. */
PATHWARDEN_EXPORT const char *pathwarden_version(void);
PATHWARDEN_EXPORT const char *pathwarden_last_error(void);

/* ---- Models ---- */

/* A tmpfs root "/" (0755 root:root) in a model of Landlock ABI `abi` (1 to
 * 7; 0: the latest, 7). */
PATHWARDEN_EXPORT int pathwarden_model_new(pathwarden_model **out, int abi, uint32_t flags);

/* How a host model keeps up with the host. */
enum pathwarden_consistency {
  /* What was read once stays (one-shot questions). */
  PATHWARDEN_SNAPSHOT = 0,
  /* Every entry a request walks through is checked against the host
   * again before each ask and apply (long-running uses). */
  PATHWARDEN_REVALIDATE = 1,
};

/* pathwarden_model_from_host()'s flags. */
enum pathwarden_host_flags {
  /* Take the processes whose program cannot be read (/proc/PID/exe:
   * another user's when not root, those a security module hides) to run
   * none of the files asked about, so that writing a file with an
   * execute bit is answered rather than unknown (the CLI's
   * --assume-unseen-run-nothing): for trees only the caller uses. */
  PATHWARDEN_HOST_ASSUME_UNSEEN_RUN_NOTHING = 1u << 0,
};

/* The machine this runs on, read on demand, never changed (building on it
 * changes only the model): the mount table `mountinfo` (NULL:
 * "/proc/self/mountinfo"; "/proc/PID/mountinfo" models that process's
 * mount namespace). What the model cannot see or does not model is
 * answered PATHWARDEN_UNKNOWN. `flags`: 0 or PATHWARDEN_HOST_*. Errors:
 * -EINVAL for a bad consistency or flag, -EIO for an unreadable or
 * malformed mount table. */
PATHWARDEN_EXPORT int pathwarden_model_from_host(pathwarden_model **out, const char *mountinfo,
                                                 int consistency, uint32_t flags);
PATHWARDEN_EXPORT void pathwarden_model_free(pathwarden_model *m);

/* ---- Building the tree ----
 *
 * As root with umask 0, no permission checked: the builder of
 * pathwarden::Model. Paths are absolute, as the model's first process
 * (root, cwd and root "/") resolves them; the last component is created.
 * Errors are those Linux gives (-EEXIST, -ENOENT, -ENOTDIR, -ENAMETOOLONG,
 * -EINVAL for a relative path or a last component "." or ".."). */

enum pathwarden_file_type {
  PATHWARDEN_FILE_REGULAR = 0,
  PATHWARDEN_FILE_DIRECTORY = 1,
  PATHWARDEN_FILE_SYMLINK = 2,
  PATHWARDEN_FILE_FIFO = 3,
  PATHWARDEN_FILE_SOCKET = 4,
  PATHWARDEN_FILE_CHAR = 5,
  PATHWARDEN_FILE_BLOCK = 6,
};

/* A directory with exactly `mode` (07777 bits), owned by uid:gid. */
PATHWARDEN_EXPORT int pathwarden_model_mkdir(pathwarden_model *m, const char *path, uint32_t mode,
                                             uint32_t uid, uint32_t gid, uint32_t flags);
/* A node of `type`; `target` is a symlink's target (required for one,
 * NULL for the others); a device is 1:3. */
PATHWARDEN_EXPORT int pathwarden_model_create(pathwarden_model *m, const char *path, int type,
                                              const char *target, uint32_t mode, uint32_t uid,
                                              uint32_t gid, uint32_t flags);
/* chmod, chown (-1 keeps an id), as root would call them: Linux's rules
 * on setuid/setgid bits apply. The path's last component is followed. */
PATHWARDEN_EXPORT int pathwarden_model_chmod(pathwarden_model *m, const char *path, uint32_t mode,
                                             uint32_t flags);
PATHWARDEN_EXPORT int pathwarden_model_chown(pathwarden_model *m, const char *path, int64_t uid,
                                             int64_t gid, uint32_t flags);
/* setfacl -m `acl` (short text form: "u:1001:r-x,g:50:rwx"; NULL: none)
 * and, on a directory, -d -m `default_acl` (NULL: none). -EINVAL for
 * text that is not an ACL. */
PATHWARDEN_EXPORT int pathwarden_model_setfacl(pathwarden_model *m, const char *path,
                                               const char *acl, const char *default_acl,
                                               uint32_t flags);
/* A new tmpfs on directory `path`, its root `mode` uid:gid; mount flags
 * PATHWARDEN_MOUNT_* (read-only is set after, so it can be filled: use
 * pathwarden_model_remount()). */
enum pathwarden_mount_flags {
  PATHWARDEN_MOUNT_RDONLY = 1 << 0,
  PATHWARDEN_MOUNT_NOEXEC = 1 << 1,
  PATHWARDEN_MOUNT_NOSUID = 1 << 2,
  PATHWARDEN_MOUNT_NODEV = 1 << 3,
  PATHWARDEN_MOUNT_NOSYMFOLLOW = 1 << 4,
};
PATHWARDEN_EXPORT int pathwarden_model_mount_tmpfs(pathwarden_model *m, const char *path,
                                                   uint32_t mode, uint32_t uid, uint32_t gid,
                                                   uint32_t mount_flags, uint32_t flags);
/* The mount whose root is at `path` gets exactly `mount_flags`, its
 * superblock too (MS_REMOUNT of a tmpfs). */
PATHWARDEN_EXPORT int pathwarden_model_remount(pathwarden_model *m, const char *path,
                                               uint32_t mount_flags, uint32_t flags);
/* One fs.protected_* sysctl by name ("protected_symlinks", ...); -EINVAL
 * for an unknown name or a value the kernel refuses. */
PATHWARDEN_EXPORT int pathwarden_model_set_sysctl(pathwarden_model *m, const char *name, int value,
                                                  uint32_t flags);

/* ---- Processes ---- */

/* Credentials: every uid (real, effective, saved, fs) `uid`, every gid
 * `gid`, supplementary groups (`ngroups` of them at `groups`; NULL when
 * none), the effective and permitted capabilities (bit N is capability N
 * of <linux/capability.h>; PATHWARDEN_CAPS_ALL: all), the umask. */
struct pathwarden_cred {
  uint32_t uid;
  uint32_t gid;
  const uint32_t *groups;
  size_t ngroups;
  uint64_t caps;
  uint32_t umask;
};
#define PATHWARDEN_CAPS_ALL ((uint64_t)0x1ffffffffffULL) /* CAP_CHOWN .. CAP_CHECKPOINT_RESTORE */

/* A process with credentials `cred`, cwd and root "/", no Landlock
 * domain; `name` is what reasons call it (NULL: "process"). */
PATHWARDEN_EXPORT int pathwarden_process_new(pathwarden_model *m, const char *name,
                                             const struct pathwarden_cred *cred,
                                             pathwarden_process **out, uint32_t flags);
/* The running process `pid` as `pathwarden --pid` takes it
 * (/proc/PID/status, cwd, root, stat): its ids, groups, capabilities,
 * umask, working directory, root, and whether it has a controlling
 * terminal (an open of /dev/tty is ENXIO without one). Its Landlock domain cannot be read from
 * userspace: apply its policies with pathwarden_process_restrict(). Its
 * mount namespace is the model's (pathwarden_model_from_host() with
 * "/proc/PID/mountinfo" for its own). Errors: -ESRCH for no such
 * process, -EACCES for one whose /proc entry cannot be read, -ENOENT
 * when its cwd or root does not resolve in the model. */
PATHWARDEN_EXPORT int pathwarden_process_from_pid(pathwarden_model *m, pid_t pid,
                                                  pathwarden_process **out, uint32_t flags);
PATHWARDEN_EXPORT void pathwarden_process_free(pathwarden_process *p);
/* The process's Landlock layers (0 to 16). */
PATHWARDEN_EXPORT int pathwarden_process_layers(const pathwarden_process *p, uint32_t flags);
/* The process is now in a user namespace of its own whose uid_map is
 * `uid_map` and gid_map `gid_map` (NULL: the same), each written
 * "INSIDE:OUTSIDE:COUNT[,...]" as `pathwarden explain --userns` takes it,
 * with OUTSIDE ids in the model's terms: as after unshare(CLONE_NEWUSER)
 * and a parent writing the maps. Its ids stay the model's and must map;
 * its groups may not (unshare() keeps them); its capabilities are then
 * the namespace's, counted over an inode only when the inode's owner and
 * group map (docs/architecture.md, "User namespaces"). Errors: -EINVAL
 * for a map the kernel would refuse or an id that does not map, with the
 * reason in pathwarden_last_error(). */
PATHWARDEN_EXPORT int pathwarden_process_set_userns(pathwarden_process *p, const char *uid_map,
                                                    const char *gid_map, uint32_t flags);
/* The working directory is now `path` (chdir() as the process: its
 * permissions are checked; -errno of the refusal). */
PATHWARDEN_EXPORT int pathwarden_process_chdir(pathwarden_process *p, const char *path,
                                               uint32_t flags);

/* ---- Landlock rulesets ---- */

/* A landlockconfig policy (a ".toml" or ".json" file, or a directory of
 * them composed), one layer; relative rule paths resolve against the
 * caller's working directory. It is built on the model when a process is
 * restricted with it (missing rule paths skipped, as landlockconfig
 * does). Errors: -EINVAL with "FILE:LINE:COL: message". */
PATHWARDEN_EXPORT int pathwarden_ruleset_load(pathwarden_ruleset **out, const char *file_or_dir,
                                              uint32_t flags);
/* landlock_create_ruleset(): the handled filesystem and network rights
 * and scopes (LANDLOCK_ACCESS_FS_*, LANDLOCK_ACCESS_NET_*,
 * LANDLOCK_SCOPE_* values); rules follow. */
PATHWARDEN_EXPORT int pathwarden_ruleset_new(pathwarden_ruleset **out, uint64_t handled_fs,
                                             uint64_t handled_net, uint64_t scoped,
                                             uint32_t flags);
/* landlock_add_rule(): a path-beneath rule (the path opened as the
 * restricted process opens it, O_PATH) or a net-port rule. -EINVAL on a
 * ruleset loaded from a policy file. */
PATHWARDEN_EXPORT int pathwarden_ruleset_allow_path(pathwarden_ruleset *rs, const char *path,
                                                    uint64_t access, uint32_t flags);
PATHWARDEN_EXPORT int pathwarden_ruleset_allow_port(pathwarden_ruleset *rs, uint64_t port,
                                                    uint64_t access, uint32_t flags);
PATHWARDEN_EXPORT void pathwarden_ruleset_free(pathwarden_ruleset *rs);
/* One more Landlock layer for `p` (landlock_restrict_self()); the
 * kernel's refusal as -errno (-E2BIG: a 17th layer, -EINVAL, -ENOMSG)
 * with its reason. A process of a writer: see thread safety. */
PATHWARDEN_EXPORT int pathwarden_process_restrict(pathwarden_process *p,
                                                  const pathwarden_ruleset *rs, uint32_t flags);

/* ---- Requests ---- */

/* The operations, one per request of pathwarden/request.h (same order
 * as pathwarden::Op). */
enum pathwarden_op {
  PATHWARDEN_OP_OPEN = 0,      /* openat(dirfd, path, flags, mode) */
  PATHWARDEN_OP_CLOSE,         /* close(fd) */
  PATHWARDEN_OP_STAT,          /* newfstatat(dirfd, path, flags) */
  PATHWARDEN_OP_LSTAT,         /* the same with AT_SYMLINK_NOFOLLOW */
  PATHWARDEN_OP_ACCESS,        /* faccessat2(dirfd, path, mode, flags) */
  PATHWARDEN_OP_MKDIR,         /* mkdirat(dirfd, path, mode) */
  PATHWARDEN_OP_MKNOD,         /* mknodat(dirfd, path, type|mode, rdev) */
  PATHWARDEN_OP_SYMLINK,       /* symlinkat(path2, dirfd, path) */
  PATHWARDEN_OP_LINK,          /* linkat(dirfd, path, AT_FDCWD, path2, flags) */
  PATHWARDEN_OP_UNLINK,        /* unlinkat(dirfd, path, flags) */
  PATHWARDEN_OP_RMDIR,         /* unlinkat(dirfd, path, AT_REMOVEDIR) */
  PATHWARDEN_OP_RENAME,        /* renameat2(dirfd, path, AT_FDCWD, path2, flags) */
  PATHWARDEN_OP_TRUNCATE,      /* truncate(path, 0) */
  PATHWARDEN_OP_FTRUNCATE,     /* ftruncate(fd, 0) */
  PATHWARDEN_OP_CHMOD,         /* fchmodat2(dirfd, path, mode, flags) */
  PATHWARDEN_OP_CHOWN,         /* fchownat(dirfd, path, uid, gid, flags) */
  PATHWARDEN_OP_LCHOWN,        /* the same with AT_SYMLINK_NOFOLLOW */
  PATHWARDEN_OP_READLINK,      /* readlinkat(dirfd, path) */
  PATHWARDEN_OP_CHDIR,         /* chdir(path) */
  PATHWARDEN_OP_EXEC_CHECK,    /* execveat(dirfd, path, flags|AT_EXECVE_CHECK) */
  PATHWARDEN_OP_IOCTL,         /* ioctl(fd, cmd): the permission checks */
  PATHWARDEN_OP_BIND_TCP,      /* bind() a loopback TCP socket to port */
  PATHWARDEN_OP_CONNECT_TCP,   /* connect() one to port */
  PATHWARDEN_OP_SIGNAL,        /* kill(target, 0) */
  PATHWARDEN_OP_CONNECT_ABSTRACT, /* connect() to target's abstract socket */
  PATHWARDEN_OP_SEND_FD,       /* fd passed to target over a UNIX socket */
  PATHWARDEN_OP_MOUNT_TMPFS,   /* mount("tmpfs", path, "tmpfs", flags) */
  PATHWARDEN_OP_BIND_MOUNT,    /* mount(path2, path, MS_BIND|flags) */
  PATHWARDEN_OP_UMOUNT,        /* umount2(path, flags) */
  PATHWARDEN_OP_RESTRICT,      /* landlock_restrict_self(ruleset) */
  PATHWARDEN_OP_UTIMENSAT,     /* utimensat(dirfd, path, times, flags) */
  PATHWARDEN_OP_CHROOT,        /* chroot(path) */
  PATHWARDEN_OP_FCHDIR,        /* fchdir(fd) */
  PATHWARDEN_OP_GETXATTR,      /* getxattrat(dirfd, path, flags, name) */
  PATHWARDEN_OP_SETXATTR,      /* setxattrat(dirfd, path, flags, name, value, xattr_flags) */
  PATHWARDEN_OP_LISTXATTR,     /* listxattrat(dirfd, path, flags) */
  PATHWARDEN_OP_REMOVEXATTR,   /* removexattrat(dirfd, path, flags, name) */
  PATHWARDEN_OP_FALLOCATE,     /* fallocate(fd, mode, offset, len) */
  PATHWARDEN_OP_FCHMOD,        /* fchmod(fd, mode) */
  PATHWARDEN_OP_FCHOWN,        /* fchown(fd, uid, gid) */
  PATHWARDEN_OP_FUTIMENS,      /* futimens(fd, times) */
  PATHWARDEN_OP_MOUNT_SETATTR, /* mount_setattr(dirfd, path, flags, {attr_set, attr_clr}) */
};

/* An operation's name ("open", "exec_check": the scenario format's and
 * `pathwarden explain`'s), or NULL for a value that is no operation. The
 * names of 0, 1, 2, ... up to the first NULL are every operation, in the
 * enum's order (the Python module builds its Op from them). */
PATHWARDEN_EXPORT const char *pathwarden_op_name(int op);

/* utimensat's times[i].tv_nsec. */
enum pathwarden_time { PATHWARDEN_TIME_NOW = 0, PATHWARDEN_TIME_OMIT = 1, PATHWARDEN_TIME_SET = 2 };

#define PATHWARDEN_AT_FDCWD (-100)

/* One request: `op`, and the arguments that op's call takes (the others
 * are ignored). Linux values throughout (O_*, AT_*, RENAME_*, MS_*,
 * MNT_*, S_IF*). Fill it with pathwarden_request_init(), which gives
 * each field the default of the C++ request: dirfd PATHWARDEN_AT_FDCWD,
 * mode 0644 (open, mknod) or 0755 (mkdir) or 0 (access: F_OK; chmod),
 * mknod type S_IFREG and rdev 1:3, uid and gid -1 (chown keeps),
 * times NULL, fallocate's len 1. */
struct pathwarden_request {
  int op;
  int dirfd;          /* the *at() calls' dirfd: an fd of the process, or AT_FDCWD */
  const char *path;   /* the path (link, rename: the old path; bind: target) */
  const char *path2;  /* link, rename: the new path; symlink: the target; bind: the source */
  uint64_t flags;     /* the call's flags */
  uint32_t mode;      /* open, mkdir, mknod, chmod: mode; access: R_OK|W_OK|X_OK */
  uint32_t type;      /* mknod: S_IFREG (or 0), S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK */
  uint32_t rdev_major, rdev_minor; /* mknod of a device */
  int64_t uid, gid;   /* chown, lchown */
  int fd;             /* close, ftruncate, fchdir, ioctl, send_fd */
  uint32_t cmd;       /* ioctl */
  uint32_t port;      /* bind_tcp, connect_tcp */
  int has_times;      /* utimensat: 0 for times NULL, else times[] */
  int times[2];       /* utimensat: PATHWARDEN_TIME_* for atime, mtime */
  const pathwarden_process *target; /* signal, connect_abstract, send_fd */
  const pathwarden_ruleset *ruleset; /* restrict */
  const char *name;   /* the xattr calls: the attribute's name ("user.k") */
  const void *value;  /* setxattr: the value (system.posix_acl_*: the binary xattr form) */
  size_t value_len;
  uint32_t xattr_flags; /* setxattr: XATTR_CREATE | XATTR_REPLACE */
  uint64_t offset, len; /* fallocate (its mode in `mode`) */
  uint64_t attr_set, attr_clr; /* mount_setattr: MOUNT_ATTR_* to set, to clear */
};

/* The defaults above for `op`; -EINVAL for an unknown op. */
PATHWARDEN_EXPORT int pathwarden_request_init(struct pathwarden_request *r, int op);

/* Detail of a decision: with the walk's components (the default, 0), or
 * the verdict and errno only (nothing formatted: for callers asking
 * millions of questions; the reason is then ""). */
enum pathwarden_detail { PATHWARDEN_DETAIL_TRACE = 0, PATHWARDEN_DETAIL_VERDICT_ONLY = 1 };

/* What `r` by `p` gives, changing nothing (a reader). A denial is a
 * decision, not an error: errors are -EINVAL (a bad request: unknown op,
 * a NULL path the op needs, a target of another model), -EBADF, -ESRCH. */
PATHWARDEN_EXPORT int pathwarden_ask(const pathwarden_process *p,
                                     const struct pathwarden_request *r, int detail,
                                     pathwarden_decision **out, uint32_t flags);
/* The same, then the change the call makes when it succeeds (a writer):
 * a new file, an fd (pathwarden_decision_fd()), a layer, ... */
PATHWARDEN_EXPORT int pathwarden_apply(pathwarden_process *p, const struct pathwarden_request *r,
                                       int detail, pathwarden_decision **out, uint32_t flags);
/* A request as a line of `pathwarden explain --batch` ("open /etc/shadow
 * O_RDONLY", "rename a b RENAME_NOREPLACE"; the grammar of
 * src/query/query.h), asked as pathwarden_ask() does. -EINVAL with
 * "COL: message" for a line that does not parse. */
PATHWARDEN_EXPORT int pathwarden_ask_line(const pathwarden_process *p, const char *line,
                                          pathwarden_decision **out, uint32_t flags);

/* ---- Decisions ---- */

enum pathwarden_verdict { PATHWARDEN_ALLOWED = 0, PATHWARDEN_DENIED = 1, PATHWARDEN_UNKNOWN = 2 };

PATHWARDEN_EXPORT void pathwarden_decision_free(pathwarden_decision *d);
/* PATHWARDEN_ALLOWED, _DENIED or _UNKNOWN (the library cannot see or does
 * not model what decides; never to be taken as allowed). */
PATHWARDEN_EXPORT int pathwarden_decision_verdict(const pathwarden_decision *d);
/* The errno Linux returns: 0 when allowed, > 0 when denied; -ENODATA
 * when unknown (there is none to give). */
PATHWARDEN_EXPORT int pathwarden_decision_errno(const pathwarden_decision *d);
/* The fd an applied open installed (or the target received, send_fd);
 * -1 otherwise. */
PATHWARDEN_EXPORT int pathwarden_decision_fd(const pathwarden_decision *d);
/* The stage whose check decided ("args", "walk", "dac", "mount",
 * "sticky", "protected", "vfs", "capability", "landlock", "fd", "unix";
 * "none"), the reason as one line ("walk: no search permission on ..."),
 * why the verdict is unknown ("" otherwise), the name of the result
 * ("ok", "EACCES", ..., "unknown"), and the decision as JSON: the object
 * `pathwarden explain --json` prints ({"op", "path", "result", "errno",
 * "reason", "stage", "walk", "dac", "layers", ...}). NULL for a bad
 * handle. */
PATHWARDEN_EXPORT const char *pathwarden_decision_stage(const pathwarden_decision *d);
PATHWARDEN_EXPORT const char *pathwarden_decision_reason(const pathwarden_decision *d);
PATHWARDEN_EXPORT const char *pathwarden_decision_unknown_why(const pathwarden_decision *d);
PATHWARDEN_EXPORT const char *pathwarden_decision_result(const pathwarden_decision *d);
PATHWARDEN_EXPORT const char *pathwarden_decision_json(const pathwarden_decision *d,
                                                       uint32_t flags);

/* One inode permission check: a directory the walk searched (a
 * component) or the object's own check (the DAC check): the path, what
 * was asked (MAY_*: 4 read, 2 write, 1 exec), whether granted (1, 0, or
 * -1 when the check is outside the model: PATHWARDEN_UNKNOWN), what
 * decided it in words ("owner 1000", "ACL entry user:33", "other",
 * "CAP_DAC_OVERRIDE", "anyone may search (fast path)"), the capability
 * that granted it (-1: none), the inode's mode (type and bits), owner,
 * whether it has an ACL, and on an overlay the layers that hold the
 * object ("upper", "lower 2", "upper + lower 1"; "" elsewhere or when
 * not known). */
struct pathwarden_check {
  const char *path;
  uint32_t want;
  int granted;
  int fast;
  const char *decided_by;
  int capability;
  uint32_t mode;
  uint32_t uid, gid;
  int has_acl;
  const char *layer;
};
/* The walk's components, in order. */
PATHWARDEN_EXPORT int pathwarden_decision_component_count(const pathwarden_decision *d);
PATHWARDEN_EXPORT int pathwarden_decision_component(const pathwarden_decision *d, size_t i,
                                                    struct pathwarden_check *out, uint32_t flags);
/* The deciding DAC check; -ENOENT when none was made. */
PATHWARDEN_EXPORT int pathwarden_decision_dac(const pathwarden_decision *d,
                                              struct pathwarden_check *out, uint32_t flags);

enum pathwarden_layer_kind { PATHWARDEN_LAYER_FS = 0, PATHWARDEN_LAYER_NET = 1, PATHWARDEN_LAYER_SCOPE = 2 };

/* One Landlock layer's verdict (layer 1-based, the youngest last): the
 * rights asked of it and those still missing (the blockers), as masks
 * and as the kernel's audit names ("fs.read_file,fs.refer"), where the
 * layer came from (the policy file; "" for rules added by hand), and
 * how many rules granted rights on the walk. */
struct pathwarden_layer {
  int layer;
  int kind;
  uint64_t requested;
  uint64_t missing;
  const char *missing_names;
  const char *policy;
  size_t grant_count;
};
/* A rule that granted rights: where it is attached (its path; "" for the
 * port rule of a PATHWARDEN_LAYER_NET layer), the rights, and where it was
 * written ("policy.toml:4"; "" for rules added by hand). */
struct pathwarden_grant {
  const char *path;
  uint64_t granted;
  const char *origin;
};
PATHWARDEN_EXPORT int pathwarden_decision_layer_count(const pathwarden_decision *d);
PATHWARDEN_EXPORT int pathwarden_decision_layer(const pathwarden_decision *d, size_t i,
                                                struct pathwarden_layer *out, uint32_t flags);
PATHWARDEN_EXPORT int pathwarden_decision_grant(const pathwarden_decision *d, size_t layer,
                                                size_t i, struct pathwarden_grant *out,
                                                uint32_t flags);

/* ---- Learning a policy ----
 *
 * What a program needed of Landlock, one successful call at a time, made
 * into a landlockconfig TOML policy that allows it and as little more as
 * it can, as `pathwarden trace --learn` makes it: every right of the ABI
 * handled, /proc/<pid>/... mapped to /proc, a right needed beneath 4 or
 * more entries of one directory granted on the directory (never on /,
 * $HOME, ~/.ssh, ~/.gnupg, /etc/ssl/private, /dev, beneath or above
 * them), rights an ancestor's rule grants dropped. */

/* An empty learner. */
PATHWARDEN_EXPORT int pathwarden_learner_new(pathwarden_learner **out, uint32_t flags);
/* A call needed filesystem rights (LANDLOCK_ACCESS_FS_*) on `path`
 * (absolute, normalised; the object for the file rights and read_dir,
 * its parent directory for make_*, remove_* and refer); `directory`: 1
 * when `path` is a directory. -EINVAL, with the reason, for what the
 * learner refuses (a relative or unnormalised path, invalid UTF-8, no
 * right, rights beyond the filesystem's, directory rights on a file):
 * nothing is recorded. */
PATHWARDEN_EXPORT int pathwarden_learner_add_path(pathwarden_learner *l, const char *path,
                                                  uint64_t access, int directory,
                                                  uint32_t flags);
/* A call needed network rights (LANDLOCK_ACCESS_NET_*) on TCP `port`.
 * -EINVAL for a port above 65535 or rights beyond the network's. */
PATHWARDEN_EXPORT int pathwarden_learner_add_port(pathwarden_learner *l, uint64_t port,
                                                  uint64_t access, uint32_t flags);
/* The program signalled or reached an abstract unix socket outside itself
 * (LANDLOCK_SCOPE_*): the policy must not scope it. */
PATHWARDEN_EXPORT int pathwarden_learner_need_unscoped(pathwarden_learner *l, uint64_t scopes,
                                                       uint32_t flags);
/* The policy for this machine at Landlock ABI `abi` (0: the running
 * kernel's, the latest where Landlock is off), $HOME as the environment
 * says: *toml (owned by `l`, valid until its next call or free) is the
 * TOML text, which pathwarden_ruleset_load() reads back. Returns the
 * number of notes on what the policy grants beyond the needs (one per
 * directory a right was widened to; pathwarden_learner_beyond()), or
 * -EINVAL for an `abi` out of range. The needs stay: it may be called
 * again. */
PATHWARDEN_EXPORT int pathwarden_learner_policy(pathwarden_learner *l, int abi, const char **toml,
                                                uint32_t flags);
/* Note `i` of the last pathwarden_learner_policy() ("read_file on all 12
 * entries beneath /etc (the run used 4 of them)"), or NULL (-ERANGE past
 * the end, in pathwarden_last_error()). Like the TOML text, it is
 * replaced by the next pathwarden_learner_policy(). A learner is one
 * caller's at a time: its calls change it (none is a reader). */
PATHWARDEN_EXPORT const char *pathwarden_learner_beyond(const pathwarden_learner *l, size_t i);
PATHWARDEN_EXPORT void pathwarden_learner_free(pathwarden_learner *l);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* PATHWARDEN_PATHWARDEN_H_ */
