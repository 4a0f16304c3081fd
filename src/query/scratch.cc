// A scratch directory changed by a verified query, and put back.

#include "src/query/scratch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "src/base/dir_names.h"
#include "src/base/lexical_path.h"
#include "src/kernel/guardian.h"
#include "src/scenario/op_codec.h"

namespace pathwarden::query {
namespace {

constexpr size_t kMaxEntries = 10000;
constexpr size_t kMaxBytes = size_t{64} << 20;

std::string Join(const std::string& root, const std::string& rel) {
  return rel.empty() ? root : root + "/" + rel;
}

std::string Err(std::string_view what, const std::string& path) {
  return fmt::format("{} {}: {}", what, path, std::strerror(errno));
}

Result<std::vector<std::pair<std::string, std::string>>, std::string> Xattrs(
    const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  ssize_t n = llistxattr(path.c_str(), nullptr, 0);
  if (n < 0) {
    if (errno == ENOTSUP) return out;
    return Unexpected(Err("llistxattr", path));
  }
  std::string names(static_cast<size_t>(n), '\0');
  n = llistxattr(path.c_str(), names.data(), names.size());
  if (n < 0) return Unexpected(Err("llistxattr", path));
  names.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < names.size();) {
    const std::string name(names.c_str() + i);
    i += name.size() + 1;
    ssize_t len = lgetxattr(path.c_str(), name.c_str(), nullptr, 0);
    if (len < 0) return Unexpected(Err("lgetxattr " + name, path));
    std::string value(static_cast<size_t>(len), '\0');
    len = lgetxattr(path.c_str(), name.c_str(), value.data(), value.size());
    if (len < 0) return Unexpected(Err("lgetxattr " + name, path));
    value.resize(static_cast<size_t>(len));
    out.emplace_back(name, std::move(value));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// open() without moving the access time (O_NOATIME: the owner's or
// CAP_FOWNER's), else as it may.
int OpenNoAtime(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_NOATIME | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0 || errno != EPERM) return fd;
  return open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
}

// The names in a directory, "." and ".." aside, read without moving its
// access time.
Result<std::vector<std::string>, std::string> ListDir(const std::string& path) {
  const int fd = OpenNoAtime(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Unexpected(Err("open", path));
  auto names = internal::ReadDirNames(fd);
  close(fd);
  if (!names) {
    errno = names.error();
    return Unexpected(Err("getdents64", path));
  }
  return std::move(*names);
}

// readlink() moves a symlink's access time, and no flag stops it (fs/
// stat.c: touch_atime()): the time `st` read before is set back.
Result<void, std::string> KeepAtime(const std::string& path, const struct stat& st) {
  struct stat now {};
  if (lstat(path.c_str(), &now) != 0) return Unexpected(Err("lstat", path));
  if (now.st_atim.tv_sec == st.st_atim.tv_sec && now.st_atim.tv_nsec == st.st_atim.tv_nsec)
    return {};
  const timespec times[2] = {st.st_atim, {0, UTIME_OMIT}};
  if (utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
    return Unexpected(Err("utimensat", path));
  return {};
}

Result<std::string, std::string> ReadAll(const std::string& path) {
  const int fd = OpenNoAtime(path, O_RDONLY);
  if (fd < 0) return Unexpected(Err("open", path));
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      close(fd);
      return Unexpected(Err("read", path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

Result<void, std::string> WriteAll(const std::string& path, const std::string& content) {
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Unexpected(Err("open", path));
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      close(fd);
      return Unexpected(Err("write", path));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  return {};
}

// Removes `path` and everything below it.
Result<void, std::string> RemoveAll(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return Unexpected(Err("lstat", path));
  }
  if (S_ISDIR(st.st_mode)) {
    auto names = ListDir(path);
    if (!names) return Unexpected(names.error());
    for (const std::string& n : *names)
      if (auto r = RemoveAll(path + "/" + n); !r) return r;
    if (rmdir(path.c_str()) != 0) return Unexpected(Err("rmdir", path));
    return {};
  }
  if (unlink(path.c_str()) != 0) return Unexpected(Err("unlink", path));
  return {};
}

bool StrictlyBelow(const std::string& path, const std::string& root) {
  return path.size() > root.size() + 1 && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

bool BelowOrAt(const std::string& path, const std::string& root) {
  return path == root || StrictlyBelow(path, root);
}

}  // namespace

namespace {

// Capture(), or with `full` false only names, types and inodes (no
// contents, xattrs or symlink bodies: for finding renames).
Result<TreeState, std::string> CaptureTree(const std::string& root, bool full) {
  TreeState t;
  t.root = root;
  size_t bytes = 0;
  std::vector<std::string> todo{""};
  std::map<ino_t, int> names;  // links of each regular file inside
  dev_t dev = 0;
  while (!todo.empty()) {
    std::string rel = std::move(todo.back());
    todo.pop_back();
    TreeState::Entry e;
    e.rel = rel;
    const std::string path = Join(root, rel);
    if (lstat(path.c_str(), &e.st) != 0) return Unexpected(Err("lstat", path));
    if (rel.empty()) {
      if (!S_ISDIR(e.st.st_mode)) return Unexpected(fmt::format("{}: not a directory", root));
      dev = e.st.st_dev;
    } else if (e.st.st_dev != dev) {
      return Unexpected(fmt::format("{} is on another filesystem (a mount point inside the "
                                    "scratch directory): not put back safely",
                                    path));
    }
    if (S_ISCHR(e.st.st_mode) || S_ISBLK(e.st.st_mode))
      return Unexpected(fmt::format("{} is a device node: not put back safely", path));
    if (full) {
      auto x = Xattrs(path);
      if (!x) return Unexpected(x.error());
      e.xattrs = std::move(*x);
    }
    if (!full && !S_ISDIR(e.st.st_mode)) {
      if (S_ISREG(e.st.st_mode)) ++names[e.st.st_ino];
    } else if (S_ISLNK(e.st.st_mode)) {
      std::string buf(PATH_MAX, '\0');
      const ssize_t n = readlink(path.c_str(), buf.data(), buf.size());
      if (n < 0) return Unexpected(Err("readlink", path));
      if (auto r = KeepAtime(path, e.st); !r) return Unexpected(r.error());
      buf.resize(static_cast<size_t>(n));
      e.link = std::move(buf);
    } else if (S_ISREG(e.st.st_mode)) {
      ++names[e.st.st_ino];
      bytes += static_cast<size_t>(e.st.st_size);
      if (bytes > kMaxBytes)
        return Unexpected(fmt::format("{}: over 64 MiB of contents to keep", root));
      auto c = ReadAll(path);
      if (!c) return Unexpected(c.error());
      e.content = std::move(*c);
    } else if (S_ISDIR(e.st.st_mode)) {
      auto listed = ListDir(path);
      if (!listed) return Unexpected(listed.error());
      std::vector<std::string> kids;
      for (std::string& n : *listed) kids.push_back(rel.empty() ? std::move(n) : rel + "/" + n);
      std::sort(kids.rbegin(), kids.rend());
      for (std::string& k : kids) todo.push_back(std::move(k));
    }
    t.entries.push_back(std::move(e));
    if (t.entries.size() > kMaxEntries)
      return Unexpected(fmt::format("{}: over 10,000 entries to keep", root));
  }
  for (const TreeState::Entry& e : t.entries)
    if (S_ISREG(e.st.st_mode) && e.st.st_nlink != static_cast<nlink_t>(names[e.st.st_ino]))
      return Unexpected(fmt::format("{} has hard links outside the scratch directory",
                                    Join(root, e.rel)));
  return t;
}

// Renames undone, by inode: every inode of `before` still in the tree
// under a name that is not one of its own goes back to its own, in
// parents-first order, one rename at a time (a directory brings its
// children), exchanged with whatever holds that name now (which a later
// round moves on, or step 2 removes). A name whose parent is not there
// yet is left to make again.
Result<void, std::string> UndoRenames(const TreeState& before) {
  const std::string& root = before.root;
  std::map<ino_t, std::vector<std::string>> names_of;  // an inode's names before
  for (const auto& e : before.entries)
    if (!e.rel.empty()) names_of[e.st.st_ino].push_back(e.rel);
  auto own = [&](ino_t ino, const std::string& rel) {
    auto it = names_of.find(ino);
    return it != names_of.end() &&
           std::find(it->second.begin(), it->second.end(), rel) != it->second.end();
  };
  for (size_t round = 0; round <= before.entries.size(); ++round) {
    auto now = CaptureTree(root, false);
    if (!now) return Unexpected("reading the scratch directory again: " + now.error());
    std::map<std::string, ino_t> at;                       // name -> inode now
    std::map<ino_t, std::vector<std::string>> elsewhere;  // inode -> names not its own
    for (const auto& c : now->entries) {
      if (c.rel.empty()) continue;
      at[c.rel] = c.st.st_ino;
      if (names_of.count(c.st.st_ino) && !own(c.st.st_ino, c.rel))
        elsewhere[c.st.st_ino].push_back(c.rel);
    }
    bool moved = false;
    for (const auto& e : before.entries) {
      if (e.rel.empty()) continue;
      auto held = at.find(e.rel);
      if (held != at.end() && held->second == e.st.st_ino) continue;
      auto from = elsewhere.find(e.st.st_ino);
      if (from == elsewhere.end()) continue;  // gone, or only its other links are left
      const std::string parent = e.rel.find('/') == std::string::npos
                                     ? ""
                                     : e.rel.substr(0, e.rel.rfind('/'));
      if (!parent.empty() && !at.count(parent)) continue;
      const std::string src = Join(root, from->second.front()), dst = Join(root, e.rel);
      const unsigned flags = held != at.end() ? RENAME_EXCHANGE : RENAME_NOREPLACE;
      if (renameat2(AT_FDCWD, src.c_str(), AT_FDCWD, dst.c_str(), flags) != 0)
        return Unexpected(Err(fmt::format("rename {} back to", src), dst));
      moved = true;
      break;
    }
    if (!moved) return {};
  }
  return Unexpected(fmt::format("{}: renames not undone after {} rounds", root,
                                before.entries.size() + 1));
}

}  // namespace

Result<TreeState, std::string> Capture(const std::string& root) { return CaptureTree(root, true); }

Result<void, std::string> Restore(const TreeState& before) {
  const std::string& root = before.root;
  std::map<std::string, const TreeState::Entry*> was, is;
  for (const auto& e : before.entries) was[e.rel] = &e;
  // 1. Renames undone, by inode (exchanges too).
  if (auto r = UndoRenames(before); !r) return r;
  auto now = Capture(root);
  if (!now) return Unexpected("reading the scratch directory again: " + now.error());
  // A name of before that now holds another type of file (its own inode
  // is gone) counts as added: removed, then made again.
  auto added = [&](const TreeState::Entry& c) {
    auto it = was.find(c.rel);
    return it == was.end() ||
           (!c.rel.empty() && (it->second->st.st_mode & S_IFMT) != (c.st.st_mode & S_IFMT));
  };
  // 2. Names added: removed, deepest first.
  for (auto it = now->entries.rbegin(); it != now->entries.rend(); ++it)
    if (added(*it))
      if (auto r = RemoveAll(Join(root, it->rel)); !r) return r;
  for (const auto& e : now->entries)
    if (!added(e)) is[e.rel] = &e;
  // 3. Names removed: made again, parents first (a hard link as a link).
  std::map<ino_t, std::string> made;  // an inode of before -> a name it has now
  for (const auto& [rel, c] : is)
    if (!rel.empty() && c->st.st_ino == was[rel]->st.st_ino) made.emplace(c->st.st_ino, rel);
  for (const auto& e : before.entries) {
    if (e.rel.empty() || is.count(e.rel)) continue;
    const std::string path = Join(root, e.rel);
    int rc = 0;
    if (S_ISDIR(e.st.st_mode)) {
      rc = mkdir(path.c_str(), 0700);
    } else if (S_ISLNK(e.st.st_mode)) {
      rc = symlink(e.link.c_str(), path.c_str());
    } else if (S_ISREG(e.st.st_mode)) {
      if (auto m = made.find(e.st.st_ino); m != made.end()) {
        rc = link(Join(root, m->second).c_str(), path.c_str());
      } else {
        const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        rc = fd < 0 ? -1 : close(fd);
      }
    } else {
      rc = mknod(path.c_str(), (e.st.st_mode & S_IFMT) | 0600, 0);
    }
    if (rc != 0) return Unexpected(Err("making again", path));
    made.emplace(e.st.st_ino, e.rel);
  }
  // 4. Contents, xattrs, owners, modes, then times (deepest first, so that
  // no later change moves a directory's mtime). A name that kept its
  // type and whose contents, symlink body, xattrs, owner and mode read
  // after step 1 are still those of before is left as it is: steps 2 and
  // 3 change none of these (only link counts, and directories' times),
  // and most queries change one name or none.
  for (const auto& e : before.entries) {
    if (auto c = is.find(e.rel); c != is.end()) {
      const TreeState::Entry& n = *c->second;
      if (n.st.st_mode == e.st.st_mode && n.st.st_uid == e.st.st_uid &&
          n.st.st_gid == e.st.st_gid && n.content == e.content && n.link == e.link &&
          n.xattrs == e.xattrs)
        continue;
    }
    const std::string path = Join(root, e.rel);
    if (S_ISREG(e.st.st_mode)) {
      auto c = ReadAll(path);
      if (!c) return Unexpected(c.error());
      if (*c != e.content)
        if (auto r = WriteAll(path, e.content); !r) return r;
    }
    auto x = Xattrs(path);
    if (!x) return Unexpected(x.error());
    for (const auto& kv : *x) {
      const std::string& name = kv.first;
      const bool kept = std::any_of(e.xattrs.begin(), e.xattrs.end(),
                                    [&](const auto& old) { return old.first == name; });
      if (!kept && lremovexattr(path.c_str(), name.c_str()) != 0)
        return Unexpected(Err("lremovexattr " + name, path));
    }
    if (lchown(path.c_str(), e.st.st_uid, e.st.st_gid) != 0) return Unexpected(Err("lchown", path));
    for (const auto& [name, value] : e.xattrs)
      if (lsetxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0) != 0)
        return Unexpected(Err("lsetxattr " + name, path));
    if (!S_ISLNK(e.st.st_mode) && chmod(path.c_str(), e.st.st_mode & 07777) != 0)
      return Unexpected(Err("chmod", path));
  }
  for (auto it = before.entries.rbegin(); it != before.entries.rend(); ++it) {
    const timespec times[2] = {it->st.st_atim, it->st.st_mtim};
    if (utimensat(AT_FDCWD, Join(root, it->rel).c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
      return Unexpected(Err("utimensat", Join(root, it->rel)));
  }
  return {};
}

std::string Differences(const TreeState& a, const TreeState& b) {
  std::map<std::string, const TreeState::Entry*> in_b;
  for (const auto& e : b.entries) in_b[e.rel] = &e;
  std::string out;
  auto add = [&](std::string s) {
    if (!out.empty()) out += "; ";
    out += std::move(s);
  };
  for (const auto& e : a.entries) {
    const std::string name = e.rel.empty() ? a.root : e.rel;
    auto it = in_b.find(e.rel);
    if (it == in_b.end()) {
      add(name + " is gone");
      continue;
    }
    const TreeState::Entry& f = *it->second;
    in_b.erase(it);
    if (e.st.st_mode != f.st.st_mode) add(fmt::format("{}: mode {:o} is {:o}", name, e.st.st_mode, f.st.st_mode));
    if (e.st.st_uid != f.st.st_uid || e.st.st_gid != f.st.st_gid) add(name + ": owner");
    if (e.content != f.content || e.link != f.link) add(name + ": contents");
    if (e.xattrs != f.xattrs) add(name + ": xattrs");
    if (e.st.st_mtim.tv_sec != f.st.st_mtim.tv_sec || e.st.st_mtim.tv_nsec != f.st.st_mtim.tv_nsec)
      add(name + ": mtime");
    if (e.st.st_atim.tv_sec != f.st.st_atim.tv_sec || e.st.st_atim.tv_nsec != f.st.st_atim.tv_nsec)
      add(name + ": atime");
    if (e.st.st_nlink != f.st.st_nlink) add(name + ": link count");
  }
  for (const auto& [rel, e] : in_b) add(rel + " is new");
  return out;
}

namespace {

constexpr std::string_view kJournalMagic = "pathwarden scratch journal 1\n";
constexpr size_t kMaxJournal = kMaxBytes + (size_t{64} << 20);

void PutU64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), 8); }

void PutBytes(std::string* out, std::string_view b) {
  PutU64(out, b.size());
  out->append(b);
}

// Reads what PutU64() and PutBytes() wrote; `ok` false from the first
// read past the end on.
struct JournalReader {
  std::string_view in;
  bool ok = true;
  uint64_t U64() {
    uint64_t v = 0;
    if (in.size() < 8) {
      ok = false;
      return 0;
    }
    std::memcpy(&v, in.data(), 8);
    in.remove_prefix(8);
    return v;
  }
  std::string Bytes() {
    const uint64_t n = U64();
    if (!ok || n > in.size()) {
      ok = false;
      return "";
    }
    std::string out(in.substr(0, n));
    in.remove_prefix(n);
    return out;
  }
};

std::function<void(pid_t)>& AfterChangeHook() {
  static std::function<void(pid_t)> hook;
  return hook;
}

// Whether every name of `a` is in `b` on the same inode, and `b` has no
// other: what Differences() leaves aside, and Restore() puts back.
bool SameInodes(const TreeState& a, const TreeState& b) {
  if (a.entries.size() != b.entries.size()) return false;
  std::map<std::string_view, ino_t> in_b;
  for (const auto& e : b.entries) in_b.emplace(e.rel, e.st.st_ino);
  for (const auto& e : a.entries) {
    auto it = in_b.find(e.rel);
    if (it == in_b.end() || it->second != e.st.st_ino) return false;
  }
  return true;
}

// Capture(); where anything differs, Restore(), then Capture() again and
// compare; the journal deleted when nothing differs. "" or why the tree
// is not `before`.
std::string PutBack(const TreeState& before, const std::string& journal) {
  // Most changing calls are refused, and change nothing: one walk that
  // finds every name on its own inode and nothing else differing is the
  // check after Restore() already, and Restore() would change nothing
  // (it walks the tree twice more to find that out).
  auto now = Capture(before.root);
  if (!now) return "reading it: " + now.error();
  if (!SameInodes(before, *now) || !Differences(before, *now).empty()) {
    auto restored = Restore(before);
    if (!restored) return restored.error();
    auto after = Capture(before.root);
    if (!after) return "reading it again: " + after.error();
    if (std::string diff = Differences(before, *after); !diff.empty()) return diff;
  }
  if (unlink(journal.c_str()) != 0 && errno != ENOENT) return Err("unlink", journal);
  return "";
}

// The journal a holder and its guardian left, put back (the lock held).
Result<bool, std::string> RepairJournal(const std::string& journal) {
  if (access(journal.c_str(), F_OK) != 0) {
    if (errno == ENOENT) return false;
    return Unexpected(Err("access", journal));
  }
  // Never larger than the files it may keep (kMaxBytes) and their
  // metadata: a larger file is not one of ours, and is not read whole.
  struct stat jst {};
  if (lstat(journal.c_str(), &jst) != 0) return Unexpected(Err("lstat", journal));
  if (static_cast<uint64_t>(jst.st_size) > kMaxJournal)
    return Unexpected(fmt::format("{}: {} bytes, larger than a scratch journal can be: put the "
                                  "scratch directory back by hand and delete it",
                                  journal, jst.st_size));
  auto bytes = ReadAll(journal);
  if (!bytes) return Unexpected(bytes.error());
  auto before = DecodeJournal(*bytes);
  if (!before)
    return Unexpected(fmt::format("{}: {}: put the scratch directory back by hand and delete it",
                                  journal, before.error()));
  // The directory it kept, still there? A directory since removed, or
  // made again (another inode), is not the one to put back.
  struct stat st {};
  const TreeState::Entry& top = before->entries.front();
  if (lstat(before->root.c_str(), &st) != 0 || st.st_dev != top.st.st_dev ||
      st.st_ino != top.st.st_ino) {
    if (unlink(journal.c_str()) != 0) return Unexpected(Err("unlink", journal));
    return true;
  }
  if (std::string why = PutBack(*before, journal); !why.empty())
    return Unexpected(fmt::format(
        "{} left changed by a run that died, and not put back exactly ({}): put it back by hand "
        "from {} and delete that file",
        before->root, why, journal));
  return true;
}

// The descriptor closed on every way out.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::string EncodeJournal(const TreeState& t) {
  std::string out(kJournalMagic);
  PutU64(&out, sizeof(struct stat));
  PutBytes(&out, t.root);
  PutU64(&out, t.entries.size());
  for (const TreeState::Entry& e : t.entries) {
    PutBytes(&out, e.rel);
    PutBytes(&out, std::string_view(reinterpret_cast<const char*>(&e.st), sizeof e.st));
    PutBytes(&out, e.link);
    PutBytes(&out, e.content);
    PutU64(&out, e.xattrs.size());
    for (const auto& [name, value] : e.xattrs) {
      PutBytes(&out, name);
      PutBytes(&out, value);
    }
  }
  return out;
}

Result<TreeState, std::string> DecodeJournal(std::string_view bytes) {
  if (!bytes.starts_with(kJournalMagic)) return Unexpected(std::string("not a scratch journal"));
  JournalReader r{bytes.substr(kJournalMagic.size())};
  if (r.U64() != sizeof(struct stat))
    return Unexpected(std::string("written by another build (struct stat differs)"));
  TreeState t;
  t.root = r.Bytes();
  const uint64_t n = r.U64();
  // Every entry takes more than 40 bytes: a count past that is damage.
  if (!r.ok || n == 0 || n > r.in.size() / 40 || !t.root.starts_with('/'))
    return Unexpected(std::string("damaged"));
  for (uint64_t i = 0; i < n && r.ok; ++i) {
    TreeState::Entry e;
    e.rel = r.Bytes();
    const std::string st = r.Bytes();
    if (st.size() != sizeof e.st) r.ok = false;
    if (r.ok) std::memcpy(&e.st, st.data(), sizeof e.st);
    e.link = r.Bytes();
    e.content = r.Bytes();
    const uint64_t nx = r.U64();
    for (uint64_t k = 0; k < nx && r.ok; ++k) {
      std::string name = r.Bytes();
      std::string value = r.Bytes();
      e.xattrs.emplace_back(std::move(name), std::move(value));
    }
    if (r.ok && (i == 0) != e.rel.empty()) r.ok = false;  // the root first, and only there
    t.entries.push_back(std::move(e));
  }
  if (!r.ok || !r.in.empty()) return Unexpected(std::string("damaged"));
  return t;
}

void SetAfterChangeHookForTesting(std::function<void(pid_t guardian)> hook) {
  AfterChangeHook() = std::move(hook);
}

Result<bool, std::string> RepairScratch(const std::string& state_dir) {
  auto lock = kernel_internal::LockStateFile(state_dir, "scratch.lock",
                                             "this process is changing a scratch directory");
  if (!lock) return Unexpected(lock.error());
  const FdCloser closer{*lock};
  return RepairJournal(state_dir + "/scratch.journal");
}

Result<std::unique_ptr<ScratchGuard>, std::string> ScratchGuard::Open(
    const std::string& root, const std::string& state_dir) {
  // OVERLAYFS_SUPER_MAGIC (include/uapi/linux/magic.h)
  constexpr decltype(statfs::f_type) kOverlayMagic = 0x794c7630;
  if (struct statfs sf {}; statfs(root.c_str(), &sf) == 0 && sf.f_type == kOverlayMagic)
    return Unexpected(fmt::format(
        "{} is on an overlay: a change there copies its directories up, which changes their "
        "link counts, so it could not be put back exactly; give a directory of another "
        "filesystem",
        root));
  auto lock = kernel_internal::LockStateFile(state_dir, "scratch.lock",
                                             "this process is changing a scratch directory");
  if (!lock) return Unexpected(lock.error());
  std::unique_ptr<ScratchGuard> g(new ScratchGuard(root, state_dir + "/scratch.journal", *lock));
  if (auto r = RepairJournal(g->journal_); !r) return Unexpected(r.error());
  // The guardian wakes when this process and every child it forked
  // meanwhile (the kernel's child among them) are gone: at Close(), or
  // when this process dies however it dies. A journal there then is a
  // change not put back: it puts it back (RepairJournal()), holding the
  // lock until it is done.
  const std::string journal = g->journal_;
  const int keep[] = {*lock};
  auto guardian = kernel_internal::Guardian::Start(keep, [&journal]() -> int {
    return RepairJournal(journal) ? 0 : 1;
  });
  if (!guardian) return Unexpected(guardian.error());
  g->guardian_ = std::move(*guardian);
  return g;
}

ScratchGuard::~ScratchGuard() { Close(); }

void ScratchGuard::Close() {
  // Nothing journalled unless a put back failed, which RepairJournal()
  // in the guardian tries once more (the journal stays if it fails too).
  guardian_.Finish();
  if (lock_ >= 0) close(lock_);
  lock_ = -1;
}

Result<int, std::string> ScratchGuard::Change(
    const std::function<Result<int, std::string>()>& change) {
  if (lock_ < 0) return Unexpected(std::string("the scratch directory's guard is closed"));
  // A change not put back exactly before: tried again; while it fails,
  // nothing else is changed.
  if (auto r = RepairJournal(journal_); !r) return Unexpected(r.error());
  auto before = Capture(root_);
  if (!before) return Unexpected(before.error());
  // Not fsync()ed (a disk's flush per query): the journal is for this
  // process and its guardian dying, and /run does not outlive the machine.
  if (std::string e =
          kernel_internal::SaveAtomically(journal_, EncodeJournal(*before), 0600, /*sync=*/false);
      !e.empty())
    return Unexpected("the journal: " + e);
  auto changed = change();
  if (AfterChangeHook()) AfterChangeHook()(guardian_.pid());
  // Put back here; should this process die meanwhile, the guardian does
  // it from the journal, which PutBack() deletes last.
  if (std::string why = PutBack(*before, journal_); !why.empty())
    return Unexpected("the scratch directory could not be put back exactly: " + why);
  return changed;
}

Result<int, std::string> ChangeGuarded(const std::string& root,
                                       const std::function<Result<int, std::string>()>& change,
                                       const std::string& state_dir) {
  auto guard = ScratchGuard::Open(root, state_dir);
  if (!guard) return Unexpected(guard.error());
  return (*guard)->Change(change);
}

std::string Contained(const Query& q, const std::string& root, const std::string& cwd) {
  // Its codec row says which arguments are paths (a symlink's target is
  // its content) and whether the call follows a symlink at the end.
  const scenario_internal::OpCodec& c = scenario_internal::CodecOf(OpOf(q.request));
  std::vector<std::string> paths{q.path};
  if (std::ranges::find(c.query, scenario_internal::QueryArg::kPath2) != c.query.end())
    paths.push_back(q.path2);
  uint64_t flags = 0;
  std::visit(
      [&](const auto& r) {
        if constexpr (requires { r.flags; }) flags = r.flags;
      },
      q.request);
  // Landlock has no right for extended attributes: only this keeps a
  // setxattr through a symlink inside from changing its target.
  const bool follows = scenario_internal::FollowsLast(c, flags);
  char* real_root = realpath(root.c_str(), nullptr);
  if (real_root == nullptr) return fmt::format("--scratch {}: {}", root, std::strerror(errno));
  const std::string rroot = real_root;
  std::free(real_root);
  for (size_t k = 0; k < paths.size(); ++k) {
    const std::string& p = paths[k];
    const std::string abs = internal::LexicallyNormal(p.starts_with('/') ? p : cwd + "/" + p);
    if (!StrictlyBelow(abs, internal::LexicallyNormal(root)) && !StrictlyBelow(abs, rroot))
      return fmt::format("{} is not inside --scratch {}", p, root);
    const std::string parent = abs.substr(0, abs.rfind('/'));
    char* rp = realpath(parent.empty() ? "/" : parent.c_str(), nullptr);
    if (rp == nullptr) return fmt::format("{}: its directory does not resolve: {}", p, std::strerror(errno));
    const std::string rparent = rp;
    std::free(rp);
    if (!BelowOrAt(rparent, rroot))
      return fmt::format("{} resolves outside --scratch {} (through a symlink)", p, root);
    struct stat st {};
    if (k == 0 && follows && lstat(abs.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return fmt::format("{} is a symlink the call would follow", p);
  }
  return "";
}

}  // namespace pathwarden::query
