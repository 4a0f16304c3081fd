// explain on overlayfs, with the kernel as the judge (issue 30). An
// overlay mounted by root of the initial user namespace is modelled: the
// caller's checks on the merged objects (their attributes are the real
// inodes'), overlay's own refusals (directories with a lower layer do not
// move without redirect_dir=on, no RENAME_WHITEOUT, no whiteout made
// through it, its xattr prefix alone names nothing), EROFS on an overlay
// without an upper layer. Root only; skipped elsewhere.
//
// For each identity (root, root without capabilities, uid 1000, uid 1001
// also in group 1000) a fresh set of layers in a scratch tmpfs (this
// test's private mount namespace):
//   l2 (bottom)  the tree of host_tree.h: directories of several owners
//                and modes, files in copies, a sticky directory, an ACL
//   l1           pub/ again (1000:1000 0775, merged over l2's), and the
//                f1001_1001_644 files again, 0600 (shadowing l2's)
//   upper        grp/ again (1001:1000 0770), the f0_0_644 files again,
//                0666; other/ with whiteouts over f1000_1000_600 and its
//                copies; open/ opaque (hiding l2's); updir/, upper only
// mounted lowerdir=l1:l2,upperdir=upper (redirect_dir at this kernel's
// default, not "on") and again without an upper layer (read-only); every
// query of host_tree.h's QueryLines() through both, and directory renames,
// whiteout renames and overlay xattr names, asked of a Session for the
// identity and made on the kernel (ProbeHostChanging()).

#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "src/identity/identity.h"
#include "src/kernel/credentials.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/scratch_host.h"
#include "src/query/explain.h"
#include "src/policy/policy.h"
#include "src/query/query.h"
#include "src/query/scratch.h"
#include "tests/host/host_tree.h"

namespace pathwarden {
namespace {

using kernel_internal::EnterPrivateMountNamespace;
using kernel_internal::ProbeHere;
using kernel_internal::ProbeHostChanging;
using kernel_internal::ProbeIdentity;
using query::Session;
using namespace host_test;

// The layers below `base` and the two overlays of them; "" or what failed.
std::string BuildOverlays(const std::string& base, TreeSpec* tree) {
  for (const char* d : {"l1", "l2", "upper", "work", "m", "mro"})
    if (!MakeNode(base + "/" + d, true, 0, 0, 0755)) return fmt::format("{}: {}", d, std::strerror(errno));
  auto t = BuildTree(base + "/l2");
  if (!t) return t.error();
  *tree = std::move(*t);
  const std::string l1 = base + "/l1", up = base + "/upper";
  auto copies = [&](const std::string& dir, const std::string& name, uint32_t uid, uint32_t gid,
                    uint32_t mode) {
    for (int c = 0; c <= kCopies; ++c)
      if (!MakeNode(fmt::format("{}/{}{}", dir, name, c == 0 ? "" : fmt::format(".c{}", c)), false,
                uid, gid, mode))
        return false;
    return true;
  };
  if (!MakeNode(l1 + "/pub", true, 1000, 1000, 0775) ||
      !copies(l1, "f1001_1001_644", 1001, 1001, 0600) ||
      !MakeNode(up + "/grp", true, 1001, 1000, 0770) || !copies(up, "f0_0_644", 0, 0, 0666) ||
      !MakeNode(up + "/other", true, 1001, 1001, 0755) || !MakeNode(up + "/open", true, 1001, 1001, 0777) ||
      !MakeNode(up + "/updir", true, 1000, 1000, 0755) ||
      !MakeNode(up + "/updir/file", false, 1000, 1000, 0644))
    return fmt::format("layers: {}", std::strerror(errno));
  for (int c = 0; c <= kCopies; ++c) {
    const std::string wh = fmt::format("{}/other/f1000_1000_600{}", up,
                                       c == 0 ? "" : fmt::format(".c{}", c));
    if (mknod(wh.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0)
      return fmt::format("whiteout {}: {}", wh, std::strerror(errno));
  }
  if (setxattr((up + "/open").c_str(), "trusted.overlay.opaque", "y", 1, 0) != 0)
    return fmt::format("opaque: {}", std::strerror(errno));
  const std::string rw = fmt::format("lowerdir={0}/l1:{0}/l2,upperdir={0}/upper,workdir={0}/work",
                                     base);
  if (mount("overlay", (base + "/m").c_str(), "overlay", 0, rw.c_str()) != 0)
    return fmt::format("mount overlay: {}", std::strerror(errno));
  const std::string ro = fmt::format("lowerdir={0}/l1:{0}/l2", base);
  if (mount("overlay", (base + "/mro").c_str(), "overlay", 0, ro.c_str()) != 0)
    return fmt::format("mount read-only overlay: {}", std::strerror(errno));
  return "";
}

// What overlay answers itself, through merged directory `m`. The kernel
// makes them in order and the engine answers each on the tree as it was:
// nothing that succeeds changes what a later line asks.
std::vector<std::string> OverlayLines(const std::string& m) {
  std::vector<std::string> out;
  // (The host model reads no xattr values: a getxattr that finds a name
  // or not is unknown, so only the prefix alone is asked.)
  for (const char* name : {"trusted.overlay.", "trusted.overlay.x", "user.overlay.", "user.x"})
    out.push_back(fmt::format("setxattr {} {} v", Q(m + "/updir/file"), name));
  out.push_back(fmt::format("getxattr {} trusted.overlay.", Q(m + "/updir")));
  // Names QueryLines() does not create: a whiteout's, one the opaque
  // directory hides.
  out.push_back(fmt::format("mknod {} fifo", Q(m + "/open/fifo")));
  out.push_back(fmt::format("mkdir {}", Q(m + "/other/f1000_1000_600.c1")));
  out.push_back(fmt::format("open {} O_RDONLY", Q(m + "/open/f0_0_600.c1")));
  out.push_back(fmt::format("rename {} {} RENAME_WHITEOUT", Q(m + "/updir/file"),
                            Q(m + "/updir/file.w")));
  out.push_back(fmt::format("rename {} {} RENAME_WHITEOUT", Q(m + "/pub/f0_0_644"),
                            Q(m + "/pub/f0_0_644.w")));
  // Directories with a lower layer (merged l1 and l2, l2 only, merged
  // upper and l2) never move.
  for (const char* d : {"pub", "priv", "grp", "sticky", "ro"}) {
    out.push_back(fmt::format("rename {} {}", Q(m + "/" + d), Q(m + "/" + d + ".mv")));
    out.push_back(fmt::format("rename {} {} RENAME_EXCHANGE", Q(m + "/updir"), Q(m + "/" + d)));
    out.push_back(fmt::format("rename {} {} RENAME_EXCHANGE", Q(m + "/" + d), Q(m + "/updir")));
  }
  // Upper only, and opaque over l2's: they do. Last.
  out.push_back(fmt::format("rename {} {}", Q(m + "/open"), Q(m + "/open.mv")));
  out.push_back(fmt::format("rename {} {}", Q(m + "/updir"), Q(m + "/updir.mv")));
  return out;
}

// Root with what this machine grants, and uid 1000 in group 1000.
std::vector<std::pair<const char*, Cred>> RootAndUser() {
  Cred root = Cred::ForUser(0, 0);
  root.cap_effective = root.cap_permitted = kernel_internal::AvailableCaps();
  Cred u1000 = Cred::ForUser(1000, 1000);
  u1000.SetGroups({1000});
  return {{"root", root}, {"uid 1000", u1000}};
}

class OverlayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "not root";
    if (std::string e = EnterPrivateMountNamespace(); !e.empty()) GTEST_SKIP() << e;
    ASSERT_EQ(scratch_.Make(), "");
  }
  // Fresh layers and their two overlays below scratch directory `name`
  // (BuildOverlays()); "" or what failed.
  std::string Layers(const std::string& name, std::string* base, TreeSpec* tree) {
    *base = scratch_.dir() + "/" + name;
    if (!MakeNode(*base, true, 0, 0, 0755)) return fmt::format("{}: {}", *base, std::strerror(errno));
    if (std::string e = BuildOverlays(*base, tree); !e.empty()) return e;
    scratch_.AddMount(*base + "/m");
    scratch_.AddMount(*base + "/mro");
    return "";
  }
  // Each identity of RootAndUser() on overlays of its own (`prefix` and
  // its index below the scratch directory): body(k, name, cred, base,
  // tree).
  template <typename F>
  void ForEachIdentity(const std::string& prefix, F&& body) {
    const auto whos = RootAndUser();
    for (size_t k = 0; k < whos.size(); ++k) {
      std::string base;
      TreeSpec tree;
      const std::string e = Layers(fmt::format("{}{}", prefix, k), &base, &tree);
      if (!e.empty()) {
        ADD_FAILURE() << whos[k].first << ": " << e;
        return;
      }
      body(k, whos[k].first, whos[k].second, base, tree);
    }
  }
  Scratch scratch_{"overlay"};
};

TEST_F(OverlayTest, TheKernelAgreesThroughMergedAndReadOnlyOverlays) {
  const std::vector<Who> whos = StandardIdentities();
  size_t total = 0;
  for (size_t k = 0; k < whos.size(); ++k) {
    const Who& w = whos[k];
    std::string base;
    TreeSpec tree;
    ASSERT_EQ(Layers(fmt::format("case{}", k), &base, &tree), "") << w.name;
    std::vector<std::string> lines;
    for (const char* m : {"/m", "/mro"}) {
      for (const std::string& l : QueryLines(base + m, tree, w.chown_self, w.chown_other))
        lines.push_back(l);
      for (const std::string& l : OverlayLines(base + m)) lines.push_back(l);
    }
    std::vector<Decision> decisions;
    auto compared = AskAndCompare(w.cred, {}, lines, &decisions);
    ASSERT_TRUE(compared.has_value()) << w.name << ": " << compared.error();
    const Outcome& o = *compared;
    // The walk table names the layers that hold each object.
    auto layer = [&](const std::string& line) {
      for (size_t i = 0; i < lines.size(); ++i)
        if (lines[i] == line && decisions[i].reason().dac) return decisions[i].reason().dac->layer;
      return std::string("(no such query)");
    };
    const std::string m = base + "/m";
    EXPECT_EQ(layer(fmt::format("access {} R_OK|AT_EACCESS", Q(m + "/f0_0_644"))), "upper");
    EXPECT_EQ(layer(fmt::format("access {} R_OK|AT_EACCESS", Q(m + "/f1001_1001_644"))), "lower 1");
    EXPECT_EQ(layer(fmt::format("access {} R_OK|AT_EACCESS", Q(m + "/f1000_1000_640"))), "lower 2");
    EXPECT_EQ(layer(fmt::format("access {} W_OK", Q(m + "/grp"))), "upper + lower 2");
    EXPECT_EQ(layer(fmt::format("access {} W_OK", Q(m + "/pub"))), "lower 1 + lower 2");
    EXPECT_EQ(layer(fmt::format("access {} W_OK", Q(m + "/open"))), "upper");
    total += o.queries;
    ExpectAllAgree(o, lines.size(), w.name);
    std::printf("%s: %zu queries through the overlays, %zu agree with the kernel, %zu unknown\n",
                w.name, o.queries, o.agree, o.unknown);
  }
  EXPECT_GE(total, 1000u);
}

// explain --verify --scratch refuses a directory on an overlay before it
// changes anything: copy-up changes the link counts it would put back.
TEST_F(OverlayTest, AScratchDirectoryOnAnOverlayIsRefused) {
  std::string base;
  TreeSpec tree;
  ASSERT_EQ(Layers("scratch", &base, &tree), "");
  const std::string state = scratch_.dir() + "/state";
  ASSERT_EQ(mkdir(state.c_str(), 0700), 0);
  auto g = query::ScratchGuard::Open(base + "/m/pub", state);
  ASSERT_FALSE(g.has_value());
  EXPECT_NE(g.error().find("is on an overlay"), std::string::npos) << g.error();
  struct stat st {};
  EXPECT_NE(stat((state + "/scratch.journal").c_str(), &st), 0) << "a journal was left";
  // A directory of the layers' own tmpfs is taken.
  auto ok = query::ScratchGuard::Open(base + "/upper", state);
  EXPECT_TRUE(ok.has_value()) << ok.error();
}

// Landlock rules attach to the objects a path reaches: through an
// overlay, the overlay's own dentries, so a rule on a layer's directory
// does not cover the merged directory, and a rule on the merged
// directory does not cover the layer's.
TEST_F(OverlayTest, LandlockRulesOnLayersDoNotCoverTheMergedView) {
  using namespace landlock;
  size_t total = 0;
  ForEachIdentity("landlock", [&](size_t, const char* name, const Cred& cred,
                                  const std::string& base, const TreeSpec& tree) {
    auto rule = [](std::string path, AccessMask access) {
      return policy::PathRule{std::move(path), access, {{"test", 1, 1}}};
    };
    const AccessMask rw = kFsReadFile | kFsReadDir | kFsWriteFile | kFsMakeReg | kFsMakeDir |
                          kFsRemoveFile | kFsRemoveDir | kFsTruncate;
    policy::Policy p;
    p.source = "layers and merged";
    p.handled_fs = rw | kFsExecute | kFsMakeSym | kFsRefer;
    p.paths = {rule(base + "/l2/pub", kFsReadFile | kFsReadDir),
               rule(base + "/upper/grp", rw),
               rule(base + "/m/priv", rw),
               rule(base + "/m/open", kFsReadDir | kFsMakeReg),
               rule(base + "/mro/other", kFsReadFile | kFsReadDir)};
    std::sort(p.paths.begin(), p.paths.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    std::vector<std::string> lines;
    for (const char* m : {"/m", "/mro"})
      for (const std::string& l : QueryLines(base + m, tree, "0:0", "1000:1000"))
        lines.push_back(l);
    for (const char* f : {"/l2/pub/f0_0_644", "/l2/other/f0_0_644", "/upper/f0_0_644"})
      lines.push_back(fmt::format("open {} O_RDONLY", Q(base + f)));
    std::vector<Decision> decisions;
    auto compared = AskAndCompare(cred, {p}, lines, &decisions);
    ASSERT_TRUE(compared.has_value()) << name << ": " << compared.error();
    const Outcome& o = *compared;
    size_t landlock = 0;
    for (const Decision& d : decisions) landlock += d.stage() == Stage::kLandlock;
    total += o.queries;
    ExpectAllAgree(o, lines.size(), fmt::format("{} (Landlock)", name));
    EXPECT_GT(landlock, lines.size() / 8) << name << ": too few answers decided by Landlock";
    // The point, named: the lower layer's file is readable by its rule,
    // the same file through the merged directory is not; the merged
    // directory's rule covers its files.
    auto answer = [&](const std::string& line) {
      for (size_t i = 0; i < lines.size(); ++i)
        if (lines[i] == line) return std::pair{decisions[i].err(), decisions[i].stage()};
      ADD_FAILURE() << "no query " << line;
      return std::pair{-1, Stage::kArgs};
    };
    EXPECT_EQ(answer(fmt::format("open {} O_RDONLY", Q(base + "/l2/pub/f0_0_644"))),
              std::pair(0, Stage::kDac)) << name;
    EXPECT_EQ(answer(fmt::format("open {} O_RDONLY", Q(base + "/m/pub/f0_0_644"))),
              std::pair(EACCES, Stage::kLandlock)) << name;
    std::printf("%s under Landlock: %zu queries through the overlays, %zu agree with the kernel, "
                "%zu decided by Landlock\n",
                name, o.queries, o.agree, landlock);
  });
  EXPECT_GE(total, 1000u);
}

// A container: a child in a mount namespace of its own whose root is
// pivoted onto overlay `merged` (its layers stay visible here, as a
// container engine's are), as `who`. It makes `lines` itself, in order
// (ProbeHere()); before that, this process asks them as `explain --pid
// CHILD` would. The engine's decisions and the kernel's errnos, or what
// failed.
struct Asked {
  std::vector<Decision> decisions;
  std::vector<int> kernel;
  std::string failure;
};
Asked RunInContainer(const std::string& merged, const Cred& who,
                     const std::vector<std::string>& lines) {
  Asked a;
  std::vector<Request> requests;
  for (const std::string& l : lines) {
    auto q = query::ParseQueryLine(l);
    if (!q) {
      a.failure = l + ": " + q.error();
      return a;
    }
    requests.push_back(q->request);
  }
  int ready[2], go[2], out[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    a.failure = "pipe2";
    return a;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    a.failure = "fork";
    return a;
  }
  if (pid == 0) {
    close(ready[0]);
    close(go[1]);
    close(out[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const char* failed = nullptr;
    char b = 1;
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      failed = "unshare(CLONE_NEWNS)";
    else if (chdir(merged.c_str()) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
             umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)
      failed = "pivot_root";
    else if (kernel_internal::TakeCred(who, &failed) != 0 && failed == nullptr)
      failed = "TakeCred";
    if (failed != nullptr) b = 0;
    if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1) _exit(1);
    std::string report;
    if (failed != nullptr) {
      report = fmt::format("X {}: {}", failed, std::strerror(errno));
    } else if (auto k = ProbeHere(requests, true); !k) {
      report = "X " + k.error();
    } else {
      for (int e : *k) report += fmt::format("{} ", e);
    }
    for (size_t done = 0; done < report.size();) {
      const ssize_t n = write(out[1], report.data() + done, report.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(ready[1]);
  close(go[0]);
  close(out[1]);
  char b = 0;
  if (read(ready[0], &b, 1) != 1 || b != 1) {
    a.failure = "the container did not get ready";
  } else {
    identity::IdentityOptions o;
    o.pid = pid;
    auto id = identity::ResolveIdentity(o);
    if (!id) {
      a.failure = id.error();
    } else if (id->host_root.empty()) {
      a.failure = "the container's mount namespace was not seen as another";
    } else {
      id->assume_unseen_run_nothing = true;
      auto session = Session::Open(*id, {});
      if (!session) {
        a.failure = session.error();
      } else {
        for (const std::string& l : lines)
          a.decisions.push_back((*session)->Ask(*query::ParseQueryLine(l), false).decision);
      }
    }
  }
  b = 1;
  if (write(go[1], &b, 1) != 1 && a.failure.empty()) a.failure = "the container went away";
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(ready[0]);
  close(go[1]);
  close(out[0]);
  waitpid(pid, nullptr, 0);
  if (!a.failure.empty()) return a;
  if (text.starts_with("X ")) {
    a.failure = text.substr(2);
    return a;
  }
  for (size_t i = 0; i < text.size();) {
    size_t end = text.find(' ', i);
    if (end == std::string::npos) break;
    a.kernel.push_back(std::stoi(text.substr(i, end - i)));
    i = end + 1;
  }
  if (a.kernel.size() != lines.size())
    a.failure = fmt::format("the container reported {} answers for {} queries", a.kernel.size(),
                            lines.size());
  return a;
}

// explain --pid of a process in a container whose root is an overlay: its
// mount table and paths are its own (read through /proc/PID/root), the
// overlay's layers are found in this namespace, and every answer is the
// kernel's as the process itself gets it.
TEST_F(OverlayTest, ExplainPidOfAProcessInAContainer) {
  size_t total = 0;
  ForEachIdentity("container", [&](size_t k, const char* name, const Cred& cred,
                                   const std::string& base, const TreeSpec& tree) {
    // Paths as the container sees them: its root is the overlay.
    std::vector<std::string> lines = QueryLines("", tree, k == 0 ? "0:0" : "1000:1000",
                                                k == 0 ? "1000:1000" : "1001:1001");
    for (const std::string& l : OverlayLines("")) lines.push_back(l);
    const Asked a = RunInContainer(base + "/m", cred, lines);
    ASSERT_EQ(a.failure, "") << name;
    Outcome o;
    Tally(lines, a.decisions, a.kernel, o);
    total += o.queries;
    ExpectAllAgree(o, lines.size(), fmt::format("{} (explain --pid)", name));
    std::printf("%s in a container: %zu queries by explain --pid, %zu agree with the kernel, %zu "
                "unknown\n",
                name, o.queries, o.agree, o.unknown);
  });
  EXPECT_GE(total, 1000u);
}

}  // namespace
}  // namespace pathwarden
