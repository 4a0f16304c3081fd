// Tasks, their files, and the flat arguments of a request.

#include "src/task/task.h"

#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "src/task/request_fields.h"

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
    task.ctty = parent->ctty;
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

// The flat arguments of a request (the op is its kOp).
struct ArgsVisitor {
  OpArgs& a;
  template <typename R>
  void operator()(const R& r) {
    a.op = R::kOp;
    CopyRequestFields(r, a);
  }
};

}  // namespace

void ArgsOf(const Request& r, OpArgs* out) { std::visit(ArgsVisitor{*out}, r); }

OpArgs ArgsOf(const Request& r) {
  OpArgs a;
  ArgsOf(r, &a);
  return a;
}

Op OpOf(const Request& r) {
  return std::visit([](const auto& q) { return std::decay_t<decltype(q)>::kOp; }, r);
}

}  // namespace pathwarden
