// Tasks, their files, and the flat arguments of a request.

#include "src/task/task.h"

#include <fmt/format.h>

namespace pathwarden {

using vfs::PathPos;

TaskTable::~TaskTable() {
  // Files first: releasing them touches the world, and the tasks'
  // domains release Landlock objects.
  const int n = count();
  for (int i = 0; i < n; ++i) Slot(i)->fds.clear();
  for (int i = 0; i < n; ++i) tasks_[static_cast<uint32_t>(i) + 1].reset();
}

Task& TaskTable::NewTask(std::string name, const Task* parent) {
  const int index = count();
  auto t = std::make_unique<Task>();
  t->name = std::move(name);
  t->index = index;
  Task& task = *t;
  // The arena's ids follow the tasks' (no task is ever freed); it throws
  // std::bad_alloc past its 2^26 ids.
  tasks_[tasks_.Alloc()] = std::move(t);
  if (parent) {
    task.parent = parent->index;
    task.cred = parent->cred;
    task.domain = parent->domain;
    task.listen_domain = parent->listen_domain;
    task.fds = parent->fds;
    task.fd_names = parent->fd_names;
    SetRoot(task, parent->root);
    SetCwd(task, parent->cwd);
  } else {
    task.cred = Cred::ForUser(0, 0);
    SetRoot(task, w_.root());
    SetCwd(task, w_.root());
  }
  // Whole: readers may see it now.
  count_.store(index + 1, std::memory_order_release);
  return task;
}

std::shared_ptr<OpenFile> TaskTable::NewFile(const Task& p, PathPos path, uint32_t f_mode,
                                             uint32_t f_flags, bool attach) {
  auto* f = new OpenFile;
  f->path = path;
  f->inode = w_.inode_of(path.dentry);
  f->f_mode = f_mode;
  f->f_flags = f_flags;
  f->opener = p.index;
  f->cred_epoch = p.cred_epoch;
  if (!attach) return std::shared_ptr<OpenFile>(f);
  vfs::World::WriteGuard g(w_);
  if (!w_.AddOpenCounts(f->inode, (f_mode & kFmodeRead) ? 1 : 0, (f_mode & kFmodeWrite) ? 1 : 0)) {
    delete f;
    return nullptr;
  }
  w_.GetPath(path);
  return std::shared_ptr<OpenFile>(f, [this](OpenFile* of) {
    vfs::World::WriteGuard guard(w_);
    w_.AddOpenCounts(of->inode, (of->f_mode & kFmodeRead) ? -1 : 0,
                     (of->f_mode & kFmodeWrite) ? -1 : 0);
    w_.PutPath(of->path);
    delete of;
  });
}

int TaskTable::InstallFd(Task& p, std::shared_ptr<OpenFile> f) {
  int fd = kFirstFd;
  for (const auto& [n, file] : p.fds) {
    if (n < fd) continue;
    if (n != fd) break;
    ++fd;
  }
  p.fds[fd] = std::move(f);
  return fd;
}

bool TaskTable::CloseFd(Task& p, int fd) { return p.fds.erase(fd) != 0; }

void TaskTable::SetCwd(Task& p, PathPos pos) {
  vfs::World::WriteGuard g(w_);
  w_.GetPath(pos);
  if (p.cwd.dentry != vfs::kNone) w_.PutPath(p.cwd);
  p.cwd = pos;
}

void TaskTable::SetRoot(Task& p, PathPos pos) {
  vfs::World::WriteGuard g(w_);
  w_.GetPath(pos);
  if (p.root.dentry != vfs::kNone) w_.PutPath(p.root);
  p.root = pos;
}

walk::Start OpCtx::StartForDirfd() const {
  walk::Start s;
  s.has_dirfd = true;
  const OpenFile* f = File(a.dirfd);
  if (f == nullptr) {
    s.bad_fd = true;
  } else {
    s.pos = f->path;
  }
  return s;
}

std::string OpCtx::FdText(Fd fd) const {
  auto it = p.fd_names.find(fd.num);
  if (it != p.fd_names.end()) return fmt::format("\"{}\"", it->second);
  return fmt::format("fd {}", fd.num);
}

namespace {

// The flat arguments of each request type.
struct ArgsVisitor {
  OpArgs& a;
  void operator()(const Open& r) {
    a.op = Op::kOpen;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.flags = r.flags;
    a.mode = r.mode;
  }
  void operator()(const Close& r) {
    a.op = Op::kClose;
    a.fd = r.fd;
  }
  void operator()(const Stat& r) {
    a.op = Op::kStat;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.flags = r.flags;
  }
  void operator()(const Lstat& r) {
    a.op = Op::kLstat;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.flags = r.flags;
  }
  void operator()(const Access& r) {
    a.op = Op::kAccess;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.access_mode = r.mode;
    a.flags = r.flags;
  }
  void operator()(const ExecCheck& r) {
    a.op = Op::kExecCheck;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.flags = r.flags;
  }
  void operator()(const Mkdir& r) {
    a.op = Op::kMkdir;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.mode = r.mode;
  }
  void operator()(const Mknod& r) {
    a.op = Op::kMknod;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.mknod_type = r.type;
    a.mode = r.mode;
    a.rdev_major = r.rdev_major;
    a.rdev_minor = r.rdev_minor;
  }
  void operator()(const Symlink& r) {
    a.op = Op::kSymlink;
    a.target = r.target;
    a.dirfd = r.dirfd;
    a.path = r.path;
  }
  void operator()(const Link& r) {
    a.op = Op::kLink;
    a.dirfd = r.dirfd;
    a.path = r.oldpath;
    a.path2 = r.newpath;
    a.flags = r.flags;
  }
  void operator()(const Unlink& r) {
    a.op = Op::kUnlink;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.flags = r.flags;
  }
  void operator()(const Rmdir& r) {
    a.op = Op::kRmdir;
    a.dirfd = r.dirfd;
    a.path = r.path;
  }
  void operator()(const Rename& r) {
    a.op = Op::kRename;
    a.dirfd = r.dirfd;
    a.path = r.oldpath;
    a.path2 = r.newpath;
    a.flags = r.flags;
  }
  void operator()(const Truncate& r) {
    a.op = Op::kTruncate;
    a.path = r.path;
  }
  void operator()(const Ftruncate& r) {
    a.op = Op::kFtruncate;
    a.fd = r.fd;
  }
  void operator()(const Chmod& r) {
    a.op = Op::kChmod;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.mode = r.mode;
    a.flags = r.flags;
  }
  void operator()(const Chown& r) {
    a.op = Op::kChown;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.uid = r.uid;
    a.gid = r.gid;
    a.flags = r.flags;
  }
  void operator()(const Lchown& r) {
    a.op = Op::kLchown;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.uid = r.uid;
    a.gid = r.gid;
    a.flags = r.flags;
  }
  void operator()(const Utimensat& r) {
    a.op = Op::kUtimensat;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.times = &r.times;
    a.flags = r.flags;
  }
  void operator()(const Readlink& r) {
    a.op = Op::kReadlink;
    a.dirfd = r.dirfd;
    a.path = r.path;
  }
  void operator()(const Chdir& r) {
    a.op = Op::kChdir;
    a.path = r.path;
  }
  void operator()(const Fchdir& r) {
    a.op = Op::kFchdir;
    a.fd = r.fd;
  }
  void operator()(const Chroot& r) {
    a.op = Op::kChroot;
    a.path = r.path;
  }
  void operator()(const MountTmpfs& r) {
    a.op = Op::kMountTmpfs;
    a.path = r.path;
    a.flags = r.flags;
  }
  void operator()(const BindMount& r) {
    a.op = Op::kBindMount;
    a.path = r.source;
    a.path2 = r.target;
    a.flags = r.flags;
  }
  void operator()(const Umount& r) {
    a.op = Op::kUmount;
    a.path = r.path;
    a.flags = r.flags;
  }
  void operator()(const Ioctl& r) {
    a.op = Op::kIoctl;
    a.fd = r.fd;
    a.cmd = r.cmd;
  }
  void operator()(const BindTcp& r) {
    a.op = Op::kBindTcp;
    a.port = r.port;
  }
  void operator()(const ConnectTcp& r) {
    a.op = Op::kConnectTcp;
    a.port = r.port;
  }
  void operator()(const Signal& r) {
    a.op = Op::kSignal;
    a.peer = r.target.index;
  }
  void operator()(const ConnectAbstract& r) {
    a.op = Op::kConnectAbstract;
    a.peer = r.target.index;
  }
  void operator()(const SendFd& r) {
    a.op = Op::kSendFd;
    a.fd = r.fd;
    a.peer = r.target.index;
  }
  void operator()(const Restrict& r) {
    a.op = Op::kRestrict;
    a.ruleset = &r.ruleset;
  }
  void operator()(const Getxattr& r) {
    a.op = Op::kGetxattr;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.xattr_name = r.name;
    a.flags = r.flags;
  }
  void operator()(const Setxattr& r) {
    a.op = Op::kSetxattr;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.xattr_name = r.name;
    a.xattr_value = r.value;
    a.xattr_flags = r.xattr_flags;
    a.flags = r.flags;
  }
  void operator()(const Listxattr& r) {
    a.op = Op::kListxattr;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.flags = r.flags;
  }
  void operator()(const Removexattr& r) {
    a.op = Op::kRemovexattr;
    a.dirfd = r.dirfd;
    a.path = r.path;
    a.xattr_name = r.name;
    a.flags = r.flags;
  }
  void operator()(const Fallocate& r) {
    a.op = Op::kFallocate;
    a.fd = r.fd;
    a.mode = r.mode;
    a.offset = r.offset;
    a.len = r.len;
  }
  void operator()(const Fchmod& r) {
    a.op = Op::kFchmod;
    a.fd = r.fd;
    a.mode = r.mode;
  }
  void operator()(const Fchown& r) {
    a.op = Op::kFchown;
    a.fd = r.fd;
    a.uid = r.uid;
    a.gid = r.gid;
  }
  void operator()(const Futimens& r) {
    a.op = Op::kFutimens;
    a.fd = r.fd;
    a.times = &r.times;
  }
};

}  // namespace

void ArgsOf(const Request& r, OpArgs* out) { std::visit(ArgsVisitor{*out}, r); }

OpArgs ArgsOf(const Request& r) {
  OpArgs a;
  ArgsOf(r, &a);
  return a;
}

Op OpOf(const Request& r) { return ArgsOf(r).op; }

}  // namespace pathwarden
