// pathwarden-conformance: the runner (identities, fixtures, observers,
// the command line). See conformance.h.

#include <acl/libacl.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/acl.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/conformance/conformance.h"

namespace pathwarden::conformance {
namespace {

// A fixture that could not be built: the check fails with this text
// instead of running its op.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<Check>& Registry() {
  static std::vector<Check> checks;
  return checks;
}

[[noreturn]] void SetupFailed(const std::string& what, const std::string& path) {
  throw SetupError("setup: " + what + " " + path + ": " + ErrnoName(errno));
}

int ReadSysctl(const char* name) {
  std::ifstream in(std::string("/proc/sys/fs/") + name);
  int value = -1;
  if (!(in >> value)) {
    std::cerr << "pathwarden-conformance: cannot read /proc/sys/fs/" << name << "\n";
    std::exit(2);
  }
  return value;
}

// Takes `who` in the forked child. Returns "" or what failed.
std::string BecomeIdentity(const Identity& who) {
  if (who.caps == Identity::Caps::kOnly && prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) != 0)
    return "prctl(PR_SET_KEEPCAPS): " + ErrnoName(errno);
  if (setgroups(who.groups.size(), who.groups.data()) != 0) return "setgroups: " + ErrnoName(errno);
  gid_t rgid = who.rgid == static_cast<gid_t>(-1) ? who.gid : who.rgid;
  uid_t ruid = who.ruid == static_cast<uid_t>(-1) ? who.uid : who.ruid;
  if (setresgid(rgid, who.gid, who.gid) != 0) return "setresgid: " + ErrnoName(errno);
  if (setresuid(ruid, who.uid, who.uid) != 0) return "setresuid: " + ErrnoName(errno);
  if (who.caps == Identity::Caps::kAll || who.caps == Identity::Caps::kAsKernel) return "";
  cap_t caps = cap_init();  // every set empty
  if (caps == nullptr) return "cap_init: " + ErrnoName(errno);
  if (who.caps == Identity::Caps::kOnly && !who.keep.empty()) {
    std::vector<cap_value_t> values(who.keep.begin(), who.keep.end());
    if (cap_set_flag(caps, CAP_PERMITTED, static_cast<int>(values.size()), values.data(),
                     CAP_SET) != 0 ||
        cap_set_flag(caps, CAP_EFFECTIVE, static_cast<int>(values.size()), values.data(),
                     CAP_SET) != 0) {
      cap_free(caps);
      return "cap_set_flag: " + ErrnoName(errno);
    }
  }
  int rc = cap_set_proc(caps);
  int err = errno;
  cap_free(caps);
  if (rc != 0) return "cap_set_proc: " + ErrnoName(err);
  return "";
}

// Runs `check.op` as `check.who` in a child; returns what it got.
std::string RunOp(const Check& check) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "runner: pipe: " + ErrnoName(errno);
  std::cout.flush();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return "runner: fork: " + ErrnoName(err);
  }
  if (pid == 0) {
    close(fds[0]);
    // A check that blocks (a FUSE server that never answers) ends as a
    // failed check, not a hung run.
    alarm(30);
    std::string got = BecomeIdentity(check.who);
    if (got.empty()) {
      umask(check.umask);
      got = check.op();
    } else {
      got = "identity " + check.who.name + ": " + got;
    }
    size_t done = 0;
    while (done < got.size()) {
      ssize_t n = write(fds[1], got.data() + done, got.size() - done);
      if (n <= 0) _exit(3);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char buf[512];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return "child killed by signal " + std::to_string(WTERMSIG(status));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "child exit " + std::to_string(WEXITSTATUS(status));
  return got;
}

bool DirIsEmpty(int dirfd) {
  int fd = dup(dirfd);
  if (fd < 0) return false;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return false;
  }
  bool empty = true;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      empty = false;
      break;
    }
  }
  closedir(d);
  return empty;
}

int Usage(const std::string& message) {
  std::cerr << "pathwarden-conformance: " << message << "\n"
            << "usage: pathwarden-conformance [--log FILE] [--only REGEX] [--list] DIR\n"
            << "  DIR: an existing empty directory on the filesystem under test; run as root\n";
  return 2;
}

}  // namespace

Identity Identity::With(std::vector<int> caps_kept) const {
  Identity copy = *this;
  copy.caps = Caps::kOnly;
  copy.keep = std::move(caps_kept);
  for (int cap : copy.keep) {
    char* cap_name = cap_to_name(cap);  // allocated: cap_free()
    copy.name += "+" + std::string(cap_name != nullptr ? cap_name : "?");
    cap_free(cap_name);
  }
  return copy;
}

const Identity& Root() {
  static const Identity id{"root", 0, 0, {}, Identity::Caps::kAll, {}};
  return id;
}
const Identity& RootNoCaps() {
  static const Identity id{"root-nocaps", 0, 0, {}, Identity::Caps::kNone, {}};
  return id;
}
const Identity& U1000() {
  static const Identity id{"u1000", 1000, 1000, {1000, 100}, Identity::Caps::kNone, {}};
  return id;
}
const Identity& U1001() {
  static const Identity id{"u1001", 1001, 1001, {1001, 100, 2000}, Identity::Caps::kNone, {}};
  return id;
}
const Identity& U1002() {
  static const Identity id{"u1002", 1002, 1002, {1002, 2001}, Identity::Caps::kNone, {}};
  return id;
}
const Identity& U1003() {
  static const Identity id{"u1003", 1003, 2000, {}, Identity::Caps::kNone, {}};
  return id;
}

void Add(Check check) { Registry().push_back(std::move(check)); }

void Add(std::string name, const Identity& who, std::function<void()> setup,
         std::function<std::string()> op, std::function<std::string()> observe, std::string want,
         mode_t umask) {
  Add(Check{std::move(name), std::move(setup), who, umask, std::move(op), std::move(observe),
            std::move(want)});
}

const Sysctls& HostSysctls() {
  static const Sysctls s{ReadSysctl("protected_hardlinks"), ReadSysctl("protected_symlinks"),
                         ReadSysctl("protected_fifos"), ReadSysctl("protected_regular")};
  return s;
}

void FixtureError(const std::string& message) { throw SetupError("setup: " + message); }

void MkFile(const std::string& path, uid_t uid, gid_t gid, mode_t mode, std::string_view content) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) SetupFailed("create", path);
  if (!content.empty() &&
      write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
    close(fd);
    SetupFailed("write", path);
  }
  close(fd);
  // chown before chmod: chown clears setuid and setgid.
  if (chown(path.c_str(), uid, gid) != 0) SetupFailed("chown", path);
  if (chmod(path.c_str(), mode) != 0) SetupFailed("chmod", path);
}

void MkDir(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  if (mkdir(path.c_str(), 0700) != 0) SetupFailed("mkdir", path);
  if (chown(path.c_str(), uid, gid) != 0) SetupFailed("chown", path);
  if (chmod(path.c_str(), mode) != 0) SetupFailed("chmod", path);
}

void MkSymlink(const std::string& target, const std::string& path, uid_t uid, gid_t gid) {
  if (symlink(target.c_str(), path.c_str()) != 0) SetupFailed("symlink", path);
  if (lchown(path.c_str(), uid, gid) != 0) SetupFailed("lchown", path);
}

void MkFifo(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  if (mkfifo(path.c_str(), 0600) != 0) SetupFailed("mkfifo", path);
  if (chown(path.c_str(), uid, gid) != 0) SetupFailed("chown", path);
  if (chmod(path.c_str(), mode) != 0) SetupFailed("chmod", path);
}

void SetTimes(const std::string& path, long seconds) {
  struct timespec ts[2] = {{seconds, 0}, {seconds, 0}};
  if (utimensat(AT_FDCWD, path.c_str(), ts, AT_SYMLINK_NOFOLLOW) != 0)
    SetupFailed("utimensat", path);
}

void SetMode(const std::string& path, mode_t mode) {
  if (chmod(path.c_str(), mode) != 0) SetupFailed("chmod", path);
}

void SetAcl(const std::string& path, const std::string& text, bool default_acl) {
  acl_t acl = acl_from_text(text.c_str());
  if (acl == nullptr) SetupFailed("acl_from_text " + text, path);
  int rc = acl_set_file(path.c_str(), default_acl ? ACL_TYPE_DEFAULT : ACL_TYPE_ACCESS, acl);
  int err = errno;
  acl_free(acl);
  errno = err;
  if (rc != 0) SetupFailed(default_acl ? "set default acl" : "set acl", path);
}

void SetXattr(const std::string& path, const std::string& name, const std::string& value) {
  if (lsetxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0) != 0)
    SetupFailed("setxattr " + name, path);
}

std::string ErrnoName(int err) {
  if (err == 0) return "ok";
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : "E#" + std::to_string(err);
}

std::string Result(long rc) { return rc < 0 ? ErrnoName(errno) : "ok"; }

std::string Open(const std::string& path, int flags, mode_t mode) {
  int fd = open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoName(errno);
  close(fd);
  return "ok";
}

std::string TruncateOp(const char* path, off_t size) { return Result(truncate(path, size)); }

std::string SetXattrOp(const char* path, const char* name, int flags) {
  return Result(lsetxattr(path, name, "v", 1, flags));
}

std::string Stat(const std::string& path) {
  struct stat st;
  if (fstatat(AT_FDCWD, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? path + "=absent" : path + "=" + ErrnoName(errno);
  char type = '?';
  switch (st.st_mode & S_IFMT) {
    case S_IFREG:
      type = 'f';
      break;
    case S_IFDIR:
      type = 'd';
      break;
    case S_IFLNK:
      type = 'l';
      break;
    case S_IFIFO:
      type = 'p';
      break;
    case S_IFCHR:
      type = 'c';
      break;
    case S_IFBLK:
      type = 'b';
      break;
    case S_IFSOCK:
      type = 's';
      break;
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "%c%04o,%u:%u", type, static_cast<unsigned>(st.st_mode & 07777),
                static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_gid));
  std::string out = path + "=" + buf;
  if (type == 'c' || type == 'b')
    out += ",rdev=" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  return out;
}

std::string Size(const std::string& path) {
  struct stat st;
  if (fstatat(AT_FDCWD, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return path + ".size=" + ErrnoName(errno);
  return path + ".size=" + std::to_string(st.st_size);
}

std::string Acl(const std::string& path, bool default_acl) {
  std::string key = path + (default_acl ? ".dacl=" : ".acl=");
  acl_t acl = acl_get_file(path.c_str(), default_acl ? ACL_TYPE_DEFAULT : ACL_TYPE_ACCESS);
  if (acl == nullptr) return key + ErrnoName(errno);
  std::string out;
  if (acl_entries(acl) == 0) {
    out = key + "none";
  } else {
    char* text = acl_to_any_text(acl, nullptr, ',', TEXT_ABBREVIATE | TEXT_NUMERIC_IDS);
    out = key + (text != nullptr ? text : "?");
    acl_free(text);
  }
  acl_free(acl);
  return out;
}

std::string Xattrs(const std::string& path) {
  std::string key = path + ".xattrs=";
  ssize_t n = llistxattr(path.c_str(), nullptr, 0);
  if (n < 0) return key + ErrnoName(errno);
  std::string buf(static_cast<size_t>(n) + 1, '\0');
  n = llistxattr(path.c_str(), buf.data(), buf.size());
  if (n < 0) return key + ErrnoName(errno);
  std::vector<std::string> names;
  for (size_t i = 0; i < static_cast<size_t>(n);) {
    std::string name(buf.data() + i);
    i += name.size() + 1;
    if (!name.empty()) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::string out = key;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? "," : "") + names[i];
  return out;
}

std::string XattrValue(const std::string& path, const std::string& name) {
  char buf[256];
  ssize_t n = lgetxattr(path.c_str(), name.c_str(), buf, sizeof buf);
  if (n < 0) return path + "[" + name + "]=" + ErrnoName(errno);
  return path + "[" + name + "]=" + std::string(buf, static_cast<size_t>(n));
}

}  // namespace pathwarden::conformance

int main(int argc, char** argv) {
  namespace pc = pathwarden::conformance;
  std::string log_path, only, dir;
  bool list = false, have_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--log" || arg == "--only") {
      if (i + 1 >= argc) return pc::Usage(arg + " needs an argument");
      (arg == "--log" ? log_path : only) = argv[++i];
      if (arg == "--only") have_only = true;
    } else if (arg == "--list") {
      list = true;
    } else if (arg == "-h" || arg == "--help") {
      pc::Usage("the POSIX permissions and ownership conformance checks");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      return pc::Usage("unknown option " + arg);
    } else if (!dir.empty()) {
      return pc::Usage("one DIR only (got " + dir + " and " + arg + ")");
    } else {
      dir = arg;
    }
  }
  std::regex only_re;
  if (have_only) {
    try {
      only_re = std::regex(only, std::regex::extended);
    } catch (const std::regex_error& e) {
      return pc::Usage("--only: bad regular expression '" + only + "': " + e.what());
    }
  }

  pc::AddChmodChownChecks();
  pc::AddOpenAccessChecks();
  pc::AddCreateChecks();
  pc::AddNamespaceChecks();
  pc::AddAttributeChecks();
  const std::vector<pc::Check>& checks = pc::Registry();
  std::set<std::string> names;
  for (const pc::Check& c : checks) {
    if (c.name.empty() || c.name.find('/') != std::string::npos || c.name[0] == '.' ||
        !names.insert(c.name).second) {
      std::cerr << "pathwarden-conformance: internal: bad or duplicate check name '" << c.name
                << "'\n";
      return 1;
    }
  }
  std::vector<const pc::Check*> selected;
  for (const pc::Check& c : checks)
    if (!have_only || std::regex_search(c.name, only_re)) selected.push_back(&c);

  if (list) {
    for (const pc::Check* c : selected) std::cout << c->name << "\n";
    return 0;
  }
  if (dir.empty()) return pc::Usage("no DIR given");
  if (geteuid() != 0) return pc::Usage("must run as root (the checks act as several users)");
  if (selected.empty()) return pc::Usage("--only '" + only + "' matches no check");
  int dirfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return pc::Usage("cannot open directory " + dir + ": " + std::strerror(errno));
  if (!pc::DirIsEmpty(dirfd)) return pc::Usage(dir + " is not an empty directory");
  std::ofstream log;
  if (!log_path.empty()) {
    log.open(log_path, std::ios::out | std::ios::trunc);
    if (!log) return pc::Usage("cannot write log " + log_path);
  }
  pc::HostSysctls();  // read before any check

  size_t failed = 0;
  for (const pc::Check* c : selected) {
    std::string got;
    umask(0);
    if (mkdirat(dirfd, c->name.c_str(), 0755) != 0 ||
        fchmodat(dirfd, c->name.c_str(), 0755, 0) != 0 ||
        fchownat(dirfd, c->name.c_str(), 0, 0, 0) != 0) {
      got = "setup: mkdir " + c->name + ": " + pc::ErrnoName(errno);
    } else if (fchdir(dirfd) != 0 || chdir(c->name.c_str()) != 0) {
      got = "setup: chdir " + c->name + ": " + pc::ErrnoName(errno);
    } else {
      try {
        if (c->setup) c->setup();
        got = pc::RunOp(*c);
        if (c->observe) got += " " + c->observe();
      } catch (const pc::SetupError& e) {
        got = e.what();
      }
    }
    bool ok = got == c->want;
    if (!ok) ++failed;
    std::string line =
        c->name + "\t" + (ok ? "ok" : "FAIL") + "\tgot " + got + "\twant " + c->want + "\n";
    std::cout << line;
    if (log.is_open()) log << line;
    if (fchdir(dirfd) != 0) {
      std::cerr << "pathwarden-conformance: cannot return to " << dir << ": "
                << std::strerror(errno) << "\n";
      return 1;
    }
  }
  std::cout.flush();
  if (log.is_open()) {
    log.close();
    if (!log) {
      std::cerr << "pathwarden-conformance: writing the log " << log_path << " failed\n";
      return 1;
    }
  }
  std::cerr << "pathwarden-conformance: " << selected.size() << " checks, " << failed
            << " failed\n";
  close(dirfd);
  return failed == 0 ? 0 : 1;
}
