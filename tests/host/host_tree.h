// The scratch trees and the tally of the host tests that compare explain
// with the kernel (userns_test.cc, overlay_test.cc): a tree of directories
// and files of several owners and modes, each file in copies so that every
// changing query acts on its own object, the queries asked of it, and how
// the engine's answers compare with the kernel's.

#ifndef PATHWARDEN_TESTS_HOST_HOST_TREE_H_
#define PATHWARDEN_TESTS_HOST_HOST_TREE_H_

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "pathwarden/result.h"
#include "src/identity/identity.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/kernel_session.h"
#include "src/policy/policy.h"
#include "src/query/explain.h"
#include "src/query/query.h"

namespace pathwarden::host_test {

// A fresh tmpfs on /tmp/pathwarden-NAME.XXXXXX, in this process's private
// mount namespace (which removes it too when the process ends).
class Scratch {
 public:
  explicit Scratch(std::string name) : name_(std::move(name)) {}
  std::string Make() {
    std::string tmpl = fmt::format("/tmp/pathwarden-{}.XXXXXX", name_);
    if (mkdtemp(tmpl.data()) == nullptr) return fmt::format("mkdtemp: {}", std::strerror(errno));
    dir_ = tmpl;
    if (mount("tmpfs", dir_.c_str(), "tmpfs", 0, "mode=0755") != 0)
      return fmt::format("mount tmpfs: {}", std::strerror(errno));
    mounted_ = true;
    return "";
  }
  ~Scratch() {
    for (auto it = extra_.rbegin(); it != extra_.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  void AddMount(std::string m) { extra_.push_back(std::move(m)); }
  const std::string& dir() const { return dir_; }

 private:
  std::string name_;
  std::string dir_;
  bool mounted_ = false;
  std::vector<std::string> extra_;
};

inline bool MakeNode(const std::string& path, bool dir, uint32_t uid, uint32_t gid, uint32_t mode) {
  if (dir ? mkdir(path.c_str(), 0700) != 0 : [&] {
        const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0) return true;
        const bool bad = write(fd, "data\n", 5) != 5;
        close(fd);
        return bad;
      }())
    return false;
  return chown(path.c_str(), uid, gid) == 0 && chmod(path.c_str(), mode) == 0;
}

// How many copies of each file the changing queries use (ChangingLines()).
constexpr int kCopies = 8;

struct TreeSpec {
  std::vector<std::string> dirs;   // paths below the root
  std::vector<std::string> files;  // the originals (copies are NAME.cK)
};

// The tree below `root`: directories of several owners and modes, files
// of several owners and modes in the root and in the directories, each
// in kCopies copies; a sticky world-writable directory with files and a
// symlink of other owners; a file with an ACL entry for uid 1001.
inline Result<TreeSpec, std::string> BuildTree(const std::string& root) {
  TreeSpec t;
  struct D {
    const char* name;
    uint32_t uid, gid, mode;
  };
  const D dirs[] = {{"pub", 0, 0, 0755},     {"priv", 1000, 1000, 0700},
                    {"grp", 1000, 1000, 0770}, {"other", 1001, 1001, 0755},
                    {"sticky", 0, 0, 01777},  {"ro", 1001, 1001, 0555},
                    {"open", 1001, 1001, 0777}};
  for (const D& d : dirs) {
    if (!MakeNode(root + "/" + d.name, true, d.uid, d.gid, d.mode))
      return Unexpected(fmt::format("{}: {}", d.name, std::strerror(errno)));
    t.dirs.push_back(d.name);
  }
  struct F {
    uint32_t uid, gid, mode;
  };
  const F files[] = {{0, 0, 0600},       {0, 0, 0644},       {1000, 1000, 0600},
                     {1000, 1000, 0640}, {1000, 0, 0604},    {1001, 1001, 0644},
                     {1001, 1001, 0660}, {1001, 1000, 0640}, {1000, 1000, 0755},
                     {1001, 1001, 0606}};
  for (const char* where : {"", "pub/", "grp/", "other/", "open/"}) {
    for (const F& f : files) {
      const std::string name = fmt::format("{}f{}_{}_{:o}", where, f.uid, f.gid, f.mode);
      for (int c = 0; c <= kCopies; ++c) {
        const std::string path = root + "/" + name + (c == 0 ? "" : fmt::format(".c{}", c));
        if (!MakeNode(path, false, f.uid, f.gid, f.mode))
          return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
      }
      t.files.push_back(name);
    }
  }
  // The sticky directory: files and a symlink of other owners
  // (protected_regular, protected_symlinks, sticky removal).
  for (uint32_t uid : {0u, 1000u, 1001u}) {
    const std::string name = fmt::format("sticky/s{}", uid);
    for (int c = 0; c <= kCopies; ++c) {
      const std::string path = root + "/" + name + (c == 0 ? "" : fmt::format(".c{}", c));
      if (!MakeNode(path, false, uid, uid, 0666))
        return Unexpected(fmt::format("{}: {}", path, std::strerror(errno)));
    }
    t.files.push_back(name);
    const std::string link = fmt::format("{}/sticky/l{}", root, uid);
    if (symlink("../pub/f0_0_644", link.c_str()) != 0 || lchown(link.c_str(), uid, uid) != 0)
      return Unexpected(fmt::format("{}: {}", link, std::strerror(errno)));
  }
  const std::string acl = root + "/acl";
  if (!MakeNode(acl, false, 1000, 1000, 0640)) return Unexpected(std::string("acl"));
  // u::rw-, u:1001:r--, g::r--, m::r--, o::---
  const unsigned char v[] = {2, 0, 0, 0, 1, 0, 6, 0, 0,    0,    0, 0, 2, 0, 4, 0, 0xe9, 3, 0,
                             0, 4, 0, 4, 0, 0, 0, 0, 0, 0x10, 0, 4, 0, 0, 0, 0,    0, 0x20,
                             0, 0, 0, 0, 0, 0, 0};
  if (setxattr(acl.c_str(), "system.posix_acl_access", v, sizeof v, 0) != 0)
    return Unexpected(fmt::format("acl: {}", std::strerror(errno)));
  t.files.push_back("acl");
  return t;
}

inline std::string Q(const std::string& p) { return "\"" + p + "\""; }

// Who
//
// An identity the comparisons ask as, and the owner:group a chown of its
// own file to itself and to another names (QueryLines()).
struct Who {
  const char* name;
  Cred cred;
  const char* chown_self = "0:0";
  const char* chown_other = "1000:1000";
};

// StandardIdentities()
//
// Root with what this machine grants, root without capabilities, uid 1000
// in group 1000, uid 1001 in groups 1001 and 1000.
inline std::vector<Who> StandardIdentities() {
  Cred root = Cred::ForUser(0, 0);
  root.cap_effective = root.cap_permitted = kernel_internal::AvailableCaps();
  Cred none = Cred::ForUser(0, 0);
  none.cap_effective = none.cap_permitted = 0;
  Cred u1000 = Cred::ForUser(1000, 1000);
  u1000.SetGroups({1000});
  Cred u1001 = Cred::ForUser(1001, 1001);
  u1001.SetGroups({1001, 1000});
  return {{"root", root, "0:0", "1000:1000"},
          {"root without capabilities", none, "0:0", "1000:1000"},
          {"uid 1000", u1000, "1000:1000", "1001:1001"},
          {"uid 1001 (groups 1001, 1000)", u1001, "1001:1000", "0:0"}};
}

// The read-only queries of every object, and the changing ones, each on
// its own copy of a file or its own new name.
inline std::vector<std::string> QueryLines(const std::string& root, const TreeSpec& t,
                                    const std::string& chown_self, const std::string& chown_other) {
  std::vector<std::string> out;
  for (const std::string& d : t.dirs) {
    const std::string p = root + "/" + d;
    for (const char* op : {"stat", "chdir", "open {} O_RDONLY|O_DIRECTORY", "access {} W_OK",
                           "access {} X_OK|AT_EACCESS"})
      out.push_back(std::string(op).find("{}") == std::string::npos
                        ? fmt::format("{} {}", op, Q(p))
                        : fmt::format(fmt::runtime(op), Q(p)));
    out.push_back(fmt::format("mkdir {}", Q(p + "/newdir")));
    out.push_back(fmt::format("open {} O_WRONLY|O_CREAT 0644", Q(p + "/newfile")));
    out.push_back(fmt::format("symlink {} target", Q(p + "/newlink")));
  }
  for (const std::string& f : t.files) {
    const std::string p = root + "/" + f;
    for (const char* flags : {"O_RDONLY", "O_WRONLY", "O_RDWR|O_NOATIME"})
      out.push_back(fmt::format("open {} {}", Q(p), flags));
    out.push_back(fmt::format("access {} R_OK|AT_EACCESS", Q(p)));
    out.push_back(fmt::format("exec_check {}", Q(p)));
    auto c = [&](int k) { return Q(fmt::format("{}.c{}", p, k)); };
    out.push_back(fmt::format("chmod {} 0600", c(1)));
    out.push_back(fmt::format("chown {} {}", c(2), chown_self));
    out.push_back(fmt::format("chown {} {}", c(3), chown_other));
    out.push_back(fmt::format("unlink {}", c(4)));
    out.push_back(fmt::format("rename {} {}", c(5), Q(p + ".renamed")));
    out.push_back(fmt::format("truncate {}", c(6)));
    out.push_back(fmt::format("setxattr {} user.x v", c(7)));
    out.push_back(fmt::format("link {} {}", c(8), Q(p + ".linked")));
    out.push_back(fmt::format("open {} O_WRONLY|O_CREAT", Q(p)));
  }
  for (const char* l : {"sticky/l0", "sticky/l1000", "sticky/l1001"})
    out.push_back(fmt::format("open {} O_RDONLY", Q(root + "/" + l)));
  return out;
}

// What one run found.
struct Outcome {
  size_t queries = 0, agree = 0, unknown = 0, denied_other_errno = 0;
  std::vector<std::string> false_ok = {};  // allowed by the engine, refused by the kernel
  std::vector<std::string> wrong = {};     // refused with another errno than the kernel's
  std::vector<std::string> unknowns = {};  // unknown: the query and why
  std::vector<int> kernel = {};            // the kernel's errno for each query
  std::vector<int> as_userns = {};         // explain --userns: errno, -1 unknown
  std::string failure = {};
};

inline std::string Name(int err) { return err == 0 ? "ok" : ErrnoName(err); }

// Each of the engine's `decisions` against the kernel's errno for the same
// line, counted into `o`.
inline void Tally(const std::vector<std::string>& lines, const std::vector<Decision>& decisions,
           const std::vector<int>& kernel, Outcome& o) {
  o.kernel = kernel;
  for (size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    const int k = kernel[i];
    ++o.queries;
    if (d.unknown()) {
      ++o.unknown;
      o.unknowns.push_back(fmt::format("{}: {}", lines[i], d.reason().unknown_why));
    } else if (d.allowed() && k != 0) {
      o.false_ok.push_back(fmt::format("{}: engine ok, kernel {}: {}", lines[i], Name(k), d.ToText()));
    } else if (d.err() == k) {
      ++o.agree;
    } else {
      ++o.denied_other_errno;
      o.wrong.push_back(fmt::format("{}: engine {}, kernel {}: {}", lines[i], Name(d.err()), Name(k),
                                    d.ToText()));
    }
  }
}

// ExpectAllAgree()
//
// Every one of the `n` queries `o` counted is the kernel's answer, none
// unknown: each that is not fails the test, named with `who`.
inline void ExpectAllAgree(const Outcome& o, size_t n, const std::string& who) {
  for (const auto* list : {&o.false_ok, &o.wrong, &o.unknowns})
    for (const std::string& l : *list) ADD_FAILURE() << who << ": " << l;
  EXPECT_EQ(o.agree, n) << who;
}

// Each of `lines` asked of `session`, then made in order on the kernel by
// `probe` (ProbeHostChanging() for an identity, ProbeHere() for this
// process as it is); the tally, and each decision in *decisions when not
// null.
using Probe = std::function<Result<std::vector<int>, std::string>(std::span<const Request>)>;
inline Result<Outcome, std::string> Compare(query::Session& session,
                                            const std::vector<std::string>& lines,
                                            const Probe& probe,
                                            std::vector<Decision>* decisions = nullptr) {
  std::vector<Request> requests;
  std::vector<Decision> asked;
  for (const std::string& l : lines) {
    auto q = query::ParseQueryLine(l);
    if (!q) return Unexpected(fmt::format("{}: {}", l, q.error()));
    asked.push_back(session.Ask(*q, false).decision);
    requests.push_back(q->request);
  }
  auto kernel = probe(requests);
  if (!kernel) return Unexpected(kernel.error());
  Outcome o;
  Tally(lines, asked, *kernel, o);
  if (decisions != nullptr) *decisions = std::move(asked);
  return o;
}

// Compare() for a session of `cred` under `layers` (the tree is the
// test's own: no process pathwarden cannot see runs a program from it),
// the kernel's side taking the same identity and layers.
inline Result<Outcome, std::string> AskAndCompare(const Cred& cred,
                                                  std::vector<policy::Policy> layers,
                                                  const std::vector<std::string>& lines,
                                                  std::vector<Decision>* decisions = nullptr) {
  identity::Identity id;
  id.cred = cred;
  id.assume_unseen_run_nothing = true;
  auto session = query::Session::Open(id, std::move(layers));
  if (!session) return Unexpected(session.error());
  kernel_internal::ProbeIdentity probe{cred};
  for (const policy::HostLayer& l : (*session)->layers()) probe.layers.push_back(l.ruleset);
  return Compare(**session, lines, [&](std::span<const Request> r) {
    return kernel_internal::ProbeHostChanging(probe, r, true);
  }, decisions);
}

}  // namespace pathwarden::host_test

#endif  // PATHWARDEN_TESTS_HOST_HOST_TREE_H_
