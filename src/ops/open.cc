// open(2), execveat(AT_EXECVE_CHECK), ftruncate(2), close(2).
// Linux: fs/open.c @6.18 build_open_flags(), do_dentry_open(),
// do_ftruncate(); fs/namei.c path_openat(), open_last_lookups(),
// lookup_open(), may_o_create(), do_open(), may_open(),
// may_create_in_sticky(), handle_truncate(); fs/exec.c do_open_execat();
// fs/pipe.c fifo_open(); fs/char_dev.c chrdev_open()

#include <fcntl.h>
#include <sys/sysmacros.h>

#include <fmt/format.h>

#include "pathwarden/uapi.h"
#include "src/base/check.h"
#include "src/ops/common.h"
#include "src/vfs/backend.h"
#include "src/ops/ops.h"
#include "src/security/hooks.h"

namespace pathwarden::ops {
namespace {

using vfs::DentryId;
using vfs::InodeId;
using vfs::PathPos;

constexpr uint32_t kFmodeCreated = 0x100000;  // FMODE_CREATED

// OPEN_FMODE(): FMODE_READ/FMODE_WRITE from the access mode; 3 gives
// neither.
uint32_t OpenFmode(uint32_t open_flag) {
  switch (open_flag & O_ACCMODE) {
    case O_RDONLY: return kFmodeRead;
    case O_WRONLY: return kFmodeWrite;
    case O_RDWR: return kFmodeRead | kFmodeWrite;
    default: return 0;
  }
}

struct OpenHow {
  uint32_t open_flag = 0;   // op->open_flag
  uint32_t acc_mode = 0;    // MAY_* to check
  uint32_t lookup = 0;      // kLookup*
  uint32_t mode = 0;        // creation mode with S_IFREG
  bool exec = false;        // an execveat open
};

// The result of the last-component lookup of an open.
struct OpenState {
  uint32_t f_mode = 0;  // FMODE_CREATED when this call created the file
};

// Which char devices have a driver behind them in the model: mem's null,
// zero and full (the scenario format's promise); any other major:minor
// has none.
bool HasDriver(uint32_t mode, uint32_t rdev) {
  if (!S_ISCHR(mode)) return false;
  // The memory devices whose open always succeeds: null, zero, full,
  // random, urandom (drivers/char/mem.c).
  return major(rdev) == 1 && (minor(rdev) == 3 || minor(rdev) == 5 || minor(rdev) == 7 ||
                              minor(rdev) == 8 || minor(rdev) == 9);
}

// may_create_in_sticky(): protected_regular and protected_fifos for an
// O_CREAT open of an existing file in a sticky directory. The sysctl
// shortcuts exist only for regular files and FIFOs.
int MayCreateInSticky(const OpCtx& ctx, const walk::Nameidata& nd, InodeId ino) {
  const uint32_t dir_mode = nd.dir_mode();
  if (!(dir_mode & S_ISVTX)) return 0;
  const vfs::Inode& i = ctx.w.inode(ino);
  if ((S_ISREG(i.mode) || S_ISFIFO(i.mode)) && i.uid != nd.dir_uid() && i.uid != ctx.cred().fsuid)
    walk::tls_sysctl_decided = true;
  const int regular = ctx.t.sysctl().protected_regular;
  const int fifos = ctx.t.sysctl().protected_fifos;
  if (S_ISREG(i.mode) && !regular) return 0;
  if (S_ISFIFO(i.mode) && !fifos) return 0;
  // Read from inside a user namespace, the overflow uid may stand for
  // several owners (perm::OverflowUidAmbiguous()).
  if ((i.uid == nd.dir_uid() || i.uid == ctx.cred().fsuid) && (dir_mode & 0022) &&
      perm::OverflowUidAmbiguous(ctx.cred(), i.uid))
    return vfs::Unknown(fmt::format(
        "{}: {} is owned by {}, the overflow uid of the user namespace this is read from, as "
        "is {}: whether they are one owner is not known",
        S_ISFIFO(i.mode) ? "protected_fifos" : "protected_regular", ctx.PathOf(nd.path), i.uid.get(),
        i.uid == nd.dir_uid() ? "its sticky directory" : "the asker"));
  if (i.uid == nd.dir_uid()) return 0;
  if (i.uid == ctx.cred().fsuid) return 0;
  auto deny = [&](std::string_view why) {
    ctx.Fail(Stage::kProtected, [&] {
      return fmt::format(
          "{}: {} (owner {}) is in a sticky {} directory owned by "
          "{}, and uid {} owns neither",
          S_ISFIFO(i.mode) ? "protected_fifos" : "protected_regular", ctx.PathOf(nd.path),
          i.uid.get(), why, nd.dir_uid(), ctx.cred().fsuid);
    });
    return EACCES;
  };
  if (dir_mode & 0002) return deny("world-writable");
  if (dir_mode & 0020) {
    if (fifos >= 2 && S_ISFIFO(i.mode)) return deny("group-writable");
    if (regular >= 2 && S_ISREG(i.mode)) return deny("group-writable");
  }
  return 0;
}

// may_open(): the type rules, nodev and noexec, then inode_permission(),
// then append-only and O_NOATIME.
int MayOpen(const OpCtx& ctx, PathPos path, uint32_t acc_mode, uint32_t flag) {
  const InodeId ino = ctx.w.inode_of(path.dentry);
  const vfs::Inode& i = ctx.w.inode(ino);
  const uint32_t mode = i.mode;
  const vfs::Mount& mnt = ctx.w.mount(path.mnt);
  switch (mode & S_IFMT) {
    case S_IFLNK:
      FailAt(ctx, Stage::kVfs, "{} is a symlink that is not followed", path);
      return ELOOP;
    case S_IFDIR:
      if (acc_mode & perm::kMayWrite) {
        FailAt(ctx, Stage::kVfs, "{} is a directory: no writing or truncating", path);
        return EISDIR;
      }
      if (acc_mode & perm::kMayExec) {
        FailAt(ctx, Stage::kVfs, "{} is a directory: it cannot be executed", path);
        return EACCES;
      }
      break;
    case S_IFBLK:
    case S_IFCHR:
      if (mnt.flags & vfs::kMntNodev) {
        FailAt(ctx, Stage::kMount, "{} is a device on a nodev mount", path);
        return EACCES;
      }
      [[fallthrough]];
    case S_IFIFO:
    case S_IFSOCK:
      if (acc_mode & perm::kMayExec) {
        FailAt(ctx, Stage::kVfs, "{} is not a regular file: it cannot be executed", path);
        return EACCES;
      }
      flag &= ~O_TRUNC;
      break;
    case S_IFREG:
      if ((acc_mode & perm::kMayExec) && (mnt.flags & vfs::kMntNoexec)) {
        FailAt(ctx, Stage::kMount, "{} is on a noexec mount", path);
        return EACCES;
      }
      break;
    default:
      return internal::FailClosed("open: unknown file type");
  }
  if (int err = DacCheck(ctx, path, perm::kMayOpen | acc_mode)) return err;
  if (i.flags & vfs::kInodeAppend) {
    if ((flag & O_ACCMODE) != O_RDONLY && !(flag & O_APPEND)) {
      FailAt(ctx, Stage::kVfs, "{} is append-only: write only with O_APPEND", path);
      return EPERM;
    }
    if (flag & O_TRUNC) {
      FailAt(ctx, Stage::kVfs, "{} is append-only: no O_TRUNC", path);
      return EPERM;
    }
  }
  if ((flag & O_NOATIME) && !perm::OwnerOrCapable(ctx.w, ctx.cred(), ino)) {
    FailAt(ctx, Stage::kDac, "O_NOATIME needs the owner of {} or CAP_FOWNER", path);
    return EPERM;
  }
  return 0;
}

// lookup_open() for a name that is not cached (or, with O_CREAT, any
// name): the dead-directory check, may_o_create() with its hook before
// DAC, the filesystem's lookup (NAME_MAX), then the creation.
int LookupOpen(OpCtx& ctx, walk::Nameidata& nd, const OpenHow& how,
               bool got_write, OpenState* st, DentryId* found) {
  const PathPos dir = nd.path;
  if (ctx.w.inode_at(dir.dentry).flags & vfs::kInodeDead) {
    FailAt(ctx, Stage::kVfs, "{} was removed", dir);
    return ENOENT;
  }
  DentryId d = ctx.w.Lookup(dir.dentry, nd.last, nd.last_hash, nd.last_head);
  if (d != vfs::kNone) {
    *found = d;
    return 0;
  }
  // Not cached: a backend that fills on demand is asked first.
  if (nd.last.size() <= walk::kNameMax) {
    if (int err = vfs::Absent(ctx.w, dir, nd.last)) return err;
  }
  // procfs's ->lookup fails a missing name, which outranks may_o_create().
  if (int err = ProcLookupMissing(ctx, dir, nd.last)) return err;
  uint32_t open_flag = how.open_flag;
  int create_error = 0;
  if (open_flag & O_CREAT) {
    if (got_write) {
      // may_o_create(): the LSM hook, then write and search on the parent.
      create_error = security::PathMknod(ctx, dir, how.mode);
      if (!create_error) create_error = FsIdsMap(ctx, dir);
      if (!create_error)
        create_error = DacCheck(ctx, dir, perm::kMayWrite | perm::kMayExec,
                                "write and search permission on");
    } else {
      create_error = MntWantWrite(ctx, dir);
    }
    if (create_error) open_flag &= ~O_CREAT;
  }
  if (nd.last.size() > walk::kNameMax) {
    ctx.Fail(Stage::kWalk, [&] {
      return fmt::format("a component of {} bytes exceeds NAME_MAX (255)", nd.last.size());
    });
    return ENAMETOOLONG;
  }
  if (open_flag & O_CREAT) {
    st->f_mode |= kFmodeCreated;
    *found = CreateObject(ctx, dir, nd.last, how.mode, 0);
    return 0;
  }
  if (create_error) return create_error;
  ctx.Fail(Stage::kWalk, [&] {
    return fmt::format("{}/{} does not exist", ctx.PathOf(dir) == "/" ? "" : ctx.PathOf(dir),
                       nd.last);
  });
  return ENOENT;
}

// open_last_lookups(): dots, the trailing-slash rules, the lookup or
// creation, then stepping into the result (following a trailing symlink).
int OpenLastLookups(OpCtx& ctx, walk::Nameidata& nd, const OpenHow& how,
                    OpenState* st, walk::Link* link) {
  if (nd.last_type != walk::LastType::kNorm) return walk::HandleDots(nd, nd.last_type);
  const uint32_t open_flag = how.open_flag;
  if (!(open_flag & O_CREAT)) {
    if (nd.last_slash) nd.flags |= walk::kLookupFollow | walk::kLookupDirectory;
  } else if (nd.last_slash) {
    ctx.Fail(Stage::kVfs, "O_CREAT with a trailing slash: only directories end in '/'");
    return EISDIR;
  }
  bool got_write = false;
  if (open_flag & (O_CREAT | O_TRUNC | O_WRONLY | O_RDWR)) {
    Explainer* saved = ctx.ex;
    ctx.ex = nullptr;  // not an error yet: lookup_open() decides
    got_write = MntWantWrite(ctx, nd.path) == 0;
    ctx.ex = saved;
  }
  DentryId d = vfs::kNone;
  if (int err = LookupOpen(ctx, nd, how, got_write, st, &d)) return err;
  if (st->f_mode & kFmodeCreated) {
    if (d != vfs::kNone) nd.path.dentry = d;
    return 0;
  }
  return walk::StepInto(nd, walk::kWalkTrailing, d, link);
}

// The model of a fifo_open() with O_NONBLOCK.
int FifoOpen(const OpCtx& ctx, PathPos path, uint32_t f_mode) {
  const vfs::Inode& i = ctx.w.inode_at(path.dentry);
  if ((f_mode & (kFmodeRead | kFmodeWrite)) == 0) {
    FailAt(ctx, Stage::kVfs,
           "{} is a FIFO: access mode 3 opens it neither for "
           "reading nor for writing",
           path);
    return EINVAL;
  }
  if ((f_mode & (kFmodeRead | kFmodeWrite)) == kFmodeWrite && i.readers() == 0) {
    FailAt(ctx, Stage::kVfs,
           "{} is a FIFO with no reader: a non-blocking "
           "write-only open fails",
           path);
    return ENXIO;
  }
  return 0;
}

// A dry run's open file, in `storage` on the caller's stack rather than on
// the heap (two allocations and their frees an open otherwise): only
// Apply() installs a file, so nothing holds it past the evaluation. The
// fields are those TaskTable::NewFile() sets for a file it does not
// attach; the pointer owns nothing.
std::shared_ptr<OpenFile> DryFile(const OpCtx& ctx, PathPos path, uint32_t f_mode,
                                  uint32_t f_flags, OpenFile* storage) {
  *storage = OpenFile{};
  storage->path = path;
  storage->inode = ctx.w.inode_of(path.dentry);
  storage->f_mode = f_mode;
  storage->f_flags = f_flags;
  storage->opener = ctx.p.index;
  storage->cred_epoch = ctx.p.cred_epoch;
  return std::shared_ptr<OpenFile>(std::shared_ptr<OpenFile>(), storage);
}

// do_dentry_open() and the driver's open: write access to the mount (not
// for special files), the LSM hook, then the file type's own open. `dry`:
// where a dry run's file lives.
int DentryOpen(OpCtx& ctx, PathPos path, uint32_t f_mode, uint32_t f_flags, OpenFile* dry,
               std::shared_ptr<OpenFile>* out) {
  const vfs::Inode& i = ctx.w.inode_at(path.dentry);
  const uint32_t mode = i.mode;
  if ((f_mode & kFmodeWrite) && !vfs::IsSpecialFile(mode)) {
    // file_get_write_access(): the inode's write count before the
    // mount's (a running program is ETXTBSY on a read-only mount too).
    if (int err = GetWriteAccess(ctx, path)) return err;
    if (int err = MntWantWrite(ctx, path)) return err;
  }
  auto file = ctx.apply ? ctx.t.NewFile(ctx.p, path, f_mode, f_flags, true)
                        : DryFile(ctx, path, f_mode, f_flags, dry);
  if (!file) {
    ctx.Fail(Stage::kFd, "too many open files for this inode in the model");
    return ENFILE;
  }
  if (int err = security::FileOpen(ctx, *file)) return err;
  // The filesystem's ->open(): fsverity_file_open().
  if ((f_mode & kFmodeWrite) && (i.flags & vfs::kInodeVerity))
    return VerityWriteUnknown(ctx, path, "opening it for writing");
  switch (mode & S_IFMT) {
    case S_IFIFO:
      if (int err = FifoOpen(ctx, path, f_mode)) return err;
      break;
    case S_IFSOCK:
      FailAt(ctx, Stage::kVfs, "{} is a socket: open() gives no file for it", path);
      return ENXIO;
    case S_IFCHR:
    case S_IFBLK:
      // /dev/tty: the opener's controlling terminal, which it must have.
      // Linux: drivers/tty/tty_io.c tty_open_current_tty()
      if (S_ISCHR(mode) && i.rdev == makedev(5, 0) && ctx.p.ctty == Task::Ctty::kNone) {
        FailAt(ctx, Stage::kVfs,
               "{} is device 5:0, which opens the process's controlling terminal, and it has none",
               path);
        return ENXIO;
      }
      if (!HasDriver(mode, i.rdev)) {
        // The host's devices have their drivers, whose open the model does
        // not know (a tty without a controlling terminal, a pty master):
        // every check passed, and the driver's answer is unknown.
        if (ctx.w.backend() != nullptr && S_ISCHR(mode) && i.rdev == makedev(5, 0))
          return vfs::Unknown(fmt::format(
              "{} is device 5:0, which opens the process's controlling terminal{}: its driver "
              "answers (every permission check passed)",
              ctx.PathOf(path),
              ctx.p.ctty == Task::Ctty::kSome
                  ? ""
                  : " if it has one (whether it does is not known here; ENXIO if not)"));
        if (ctx.w.backend() != nullptr)
          return vfs::Unknown(fmt::format(
              "{} is device {}:{}, whose driver's open is not modelled (every permission "
              "check passed)",
              ctx.PathOf(path), major(i.rdev), minor(i.rdev)));
        ctx.Fail(Stage::kVfs, [&] {
          return fmt::format("no driver for device {}:{} of {}", major(i.rdev), minor(i.rdev),
                             ctx.PathOf(path));
        });
        return ENXIO;
      }
      break;
    default:
      break;
  }
  *out = std::move(file);
  return 0;
}

// do_open(): the O_CREAT checks, O_DIRECTORY, O_TRUNC's mount write,
// may_open(), the open itself, then the truncation.
int DoOpenLast(OpCtx& ctx, walk::Nameidata& nd, const OpenHow& how,
               const OpenState& st, OpenFile* dry, std::shared_ptr<OpenFile>* out) {
  const uint32_t open_flag = how.open_flag;
  const bool created = st.f_mode & kFmodeCreated;
  if (created && !ctx.apply) {
    // A dry run created nothing: what follows would act on a fresh, empty
    // file the caller owns, in nd.path (the parent). Every check of
    // do_open() passes for it but the LSM's open hook.
    return security::FileOpenNew(ctx, nd.path, OpenFmode(open_flag));
  }
  const PathPos path = nd.path;
  const InodeId ino = ctx.w.inode_of(path.dentry);
  const uint32_t mode = ctx.w.inode(ino).mode;
  if (open_flag & O_CREAT) {
    if ((open_flag & O_EXCL) && !created) {
      FailAt(ctx, Stage::kVfs, "{} exists and O_EXCL was given", path);
      return EEXIST;
    }
    if (S_ISDIR(mode)) {
      FailAt(ctx, Stage::kVfs, "{} is a directory: O_CREAT opens files", path);
      return EISDIR;
    }
    if (int err = MayCreateInSticky(ctx, nd, ino)) return err;
  }
  if ((nd.flags & walk::kLookupDirectory) && !S_ISDIR(mode)) {
    FailAt(ctx, Stage::kWalk, "{} is not a directory", path);
    return ENOTDIR;
  }
  uint32_t acc_mode = how.acc_mode;
  uint32_t flag = open_flag;
  bool do_truncate = false;
  if (created) {
    flag &= ~O_TRUNC;
    acc_mode = 0;
  } else if (S_ISREG(mode) && (open_flag & O_TRUNC)) {
    if (int err = MntWantWrite(ctx, path)) return err;
    do_truncate = true;
  }
  if (int err = MayOpen(ctx, path, acc_mode, flag)) return err;
  uint32_t f_mode = OpenFmode(open_flag);
  if (how.exec) f_mode |= kFmodeExec;
  std::shared_ptr<OpenFile> file;
  if (int err = DentryOpen(ctx, path, f_mode, open_flag, dry, &file)) return err;
  if (created && ctx.explain() && ctx.ex->stage() != Stage::kLandlock)
    ctx.Ok(Stage::kDac, [&] {
      return fmt::format("created {} ({})", ctx.PathOf(path), DescribeInode(ctx.w, ino));
    });
  if (do_truncate) {
    // handle_truncate(): the LSM's frozen truncate right, then the size.
    if (int err = security::FileTruncate(ctx, *file)) return err;
    if (int err = DoTruncate(ctx, path, ino, "O_TRUNC")) return err;
  }
  *out = std::move(file);
  return 0;
}

// path_openat() for everything but O_PATH.
int PathOpenat(OpCtx& ctx, std::string_view name, const walk::Start& start,
               const OpenHow& how, OpenFile* dry, std::shared_ptr<OpenFile>* out) {
  walk::Nameidata nd(ctx.env, how.lookup);
  OpenState st;
  // Without O_CREAT, open_last_lookups() is lookup_fast() and step_into()
  // for a cached name: the register loop may take the last component as
  // path_lookupat() does (no trailing slash, nothing to follow or cross),
  // first with no walk state set up at all.
  const bool may_resolve = !(how.open_flag & O_CREAT);
  if (may_resolve && walk::LookupFast(ctx.env, start, name, how.lookup, &nd.path))
    return DoOpenLast(ctx, nd, how, st, dry, out);
  if (int err = walk::PathInit(nd, start, name)) return err;
  std::string_view s = name;
  for (;;) {
    bool resolved = false;
    if (int err = walk::LinkPathWalk(nd, s, may_resolve ? &resolved : nullptr)) return err;
    if (resolved) break;
    walk::Link link;
    if (int err = OpenLastLookups(ctx, nd, how, &st, &link)) return err;
    if (!link.follow) break;
    s = link.body;
  }
  return DoOpenLast(ctx, nd, how, st, dry, out);
}

}  // namespace

template <>
int Do<pathwarden::Open>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  // build_open_how(): O_PATH drops every flag but a few.
  uint32_t flags = static_cast<uint32_t>(st.flags);
  if (flags & O_PATH) flags &= O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_PATH;
  // build_open_flags()
  if ((flags & (O_DIRECTORY | O_CREAT)) == (O_DIRECTORY | O_CREAT)) {
    ctx.Fail(Stage::kArgs, "O_CREAT|O_DIRECTORY is refused (Linux 6.4+)");
    return EINVAL;
  }
  OpenHow how;
  static constexpr uint32_t kAccMode[4] = {perm::kMayRead, perm::kMayWrite,
                                           perm::kMayRead | perm::kMayWrite,
                                           perm::kMayRead | perm::kMayWrite};
  how.acc_mode = (flags & O_PATH) ? 0 : kAccMode[flags & O_ACCMODE];
  flags &= ~O_CLOEXEC;
  how.open_flag = flags;
  if (flags & O_TRUNC) how.acc_mode |= perm::kMayWrite;
  if (flags & O_APPEND) how.acc_mode |= perm::kMayAppend;
  how.mode = (st.mode & 07777) | S_IFREG;
  uint32_t lflags = flags;
  if ((flags & O_CREAT) && (flags & O_EXCL)) lflags |= O_NOFOLLOW;
  if (lflags & O_DIRECTORY) how.lookup |= walk::kLookupDirectory;
  if (!(lflags & O_NOFOLLOW)) how.lookup |= walk::kLookupFollow;

  if (int err = walk::CheckName(ctx.env, st.path, false)) return err;
  const walk::Start start = ctx.StartFor(st.path);
  OpenFile dry;  // a dry run's file (DryFile()), outliving `file`
  std::shared_ptr<OpenFile> file;
  if (flags & O_PATH) {
    // do_o_path(): a lookup, then an open that checks nothing.
    PathPos pos;
    if (int err = walk::FilenameLookup(ctx.env, start, st.path, how.lookup, &pos))
      return err;
    file = ctx.t.NewFile(ctx.p, pos, kFmodePath, flags, ctx.apply);
    if (!file) return ENFILE;
    OkAt(ctx, Stage::kWalk, "O_PATH: only search permission on the way to {}", pos);
  } else {
    if (int err = PathOpenat(ctx, st.path, start, how, &dry, &file)) return err;
    if (!file) return 0;  // dry-run creation
  }
  if (ctx.apply) ctx.new_fd = ctx.t.InstallFd(ctx.p, std::move(file));
  return 0;
}

template <>
int Do<pathwarden::Close>(OpCtx& ctx) {
  if (!ctx.File(ctx.a.fd)) {
    ctx.Fail(Stage::kFd, [&] { return fmt::format("no open file named {}", ctx.FdText(ctx.a.fd)); });
    return EBADF;
  }
  if (ctx.apply) ctx.t.CloseFd(ctx.p, ctx.a.fd.num);
  ctx.Ok(Stage::kFd, [&] { return fmt::format("closed {}", ctx.FdText(ctx.a.fd)); });
  return 0;
}

template <>
int Do<pathwarden::ExecCheck>(OpCtx& ctx) {
  const OpArgs& st = ctx.a;
  const uint32_t flags = static_cast<uint32_t>(st.flags) | kAtExecveCheck;
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | kAtExecveCheck)) return EINVAL;
  OpenHow how;
  how.open_flag = O_RDONLY;
  how.acc_mode = perm::kMayExec;
  how.lookup = (flags & AT_SYMLINK_NOFOLLOW) ? 0 : walk::kLookupFollow;
  how.exec = true;
  const bool empty_ok = flags & AT_EMPTY_PATH;
  if (int err = walk::CheckName(ctx.env, st.path, empty_ok)) return err;
  const walk::Start start = ctx.StartFor(st.path);
  OpenFile dry;  // a dry run's file (DryFile()), outliving `file`
  std::shared_ptr<OpenFile> file;
  if (st.path.empty()) {
    // AT_EMPTY_PATH: the dirfd itself (or the cwd) is opened for exec.
    walk::Nameidata nd(ctx.env, how.lookup);
    if (int err = walk::PathInit(nd, start, st.path)) return err;
    OpenState os;
    if (int err = DoOpenLast(ctx, nd, how, os, &dry, &file)) return err;
  } else {
    if (int err = PathOpenat(ctx, st.path, start, how, &dry, &file)) return err;
  }
  // do_open_execat(): ETXTBSY while the file is open for writing.
  const vfs::Inode& i = ctx.w.inode(file->inode);
  if (i.writers() != 0) {
    FailAt(ctx, Stage::kVfs, "{} is open for writing", file->path);
    return ETXTBSY;
  }
  ctx.Ok(Stage::kDac, [&] {
    return fmt::format("may execute {} ({})", ctx.PathOf(file->path),
                       DescribeInode(ctx.w, file->inode));
  });
  return 0;
}

template <>
int Do<pathwarden::Ftruncate>(OpCtx& ctx) {
  OpenFile* f = FdGet(ctx, ctx.a.fd);
  if (!f) return EBADF;
  const vfs::Inode& i = ctx.w.inode(f->inode);
  if (!S_ISREG(i.mode) || !(f->f_mode & kFmodeWrite)) {
    ctx.Fail(Stage::kFd, [&] {
      return fmt::format("{} is {}", ctx.FdText(ctx.a.fd),
                         S_ISREG(i.mode) ? "not open for writing" : "not a regular file");
    });
    return EINVAL;
  }
  if (i.flags & vfs::kInodeAppend) {
    FailAt(ctx, Stage::kVfs, "{} is append-only", f->path);
    return EPERM;
  }
  if (int err = security::FileTruncate(ctx, *f)) return err;
  if (int err = DoTruncate(ctx, f->path, f->inode, "ftruncate")) return err;
  ctx.Ok(Stage::kFd, [&] { return fmt::format("{} is open for writing", ctx.FdText(ctx.a.fd)); });
  return 0;
}

}  // namespace pathwarden::ops
