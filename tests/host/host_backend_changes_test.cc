// The live host backend as the host and the model change: revalidation
// (a chmod, a new name, a replaced or removed file, a directory emptied
// or filled, the sysctls), an overlay's layers found, readers filling
// concurrently and linearizable under the host's writes, and the model's
// own changes staying in the model. The fixture: host_backend_fixture.h.
// Root only; skipped elsewhere.

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "pathwarden/model.h"
#include "pathwarden/uapi.h"
#include "src/api/linearizability_test_util.h"
#include "src/api/model_impl.h"
#include "src/kernel/guardian.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/scratch_host.h"
#include "tests/host/host_backend_fixture.h"
#include "tests/host/scratch_fixture.h"

namespace pathwarden {
namespace {

using namespace host_backend_testing;  // the fixture and its helpers

TEST_F(HostBackendTest, RevalidationSeesTheHostChange) {
  changes_host_ = true;  // this test changes its own scratch tree
  const std::string file = root_ + "/data/file";
  const std::string fresh = root_ + "/data/fresh";
  Model snap = Host();
  Model live = Host(HostOptions::Consistency::kRevalidate);
  Process ps = snap.Spawn("alice", Cred::ForUser(1000, 1000));
  Process pl = live.Spawn("alice", Cred::ForUser(1000, 1000));
  EXPECT_TRUE(snap.Evaluate(ps, Open{.path = file}).allowed());
  EXPECT_TRUE(live.Evaluate(pl, Open{.path = file}).allowed());
  EXPECT_EQ(snap.Evaluate(ps, Stat{.path = fresh}).err(), ENOENT);
  EXPECT_EQ(live.Evaluate(pl, Stat{.path = fresh}).err(), ENOENT);
  // The host changes: the file is 0600 now, a new name exists.
  ASSERT_EQ(chmod(file.c_str(), 0600), 0);
  { std::ofstream(fresh) << "new\n"; }
  // A snapshot keeps what it read; revalidate-on-use sees the change.
  EXPECT_TRUE(snap.Evaluate(ps, Open{.path = file}).allowed());
  EXPECT_EQ(snap.Evaluate(ps, Stat{.path = fresh}).err(), ENOENT);
  EXPECT_EQ(live.Evaluate(pl, Open{.path = file}).err(), EACCES);
  EXPECT_TRUE(live.Evaluate(pl, Stat{.path = fresh}).allowed());
  // Revalidating the snapshot by hand.
  auto changed = snap.Revalidate(ps, file);
  ASSERT_TRUE(changed) << changed.error();
  // At least the file (other processes may change /tmp meanwhile).
  EXPECT_GE(*changed, 1);
  EXPECT_EQ(snap.Evaluate(ps, Open{.path = file}).err(), EACCES);
  ASSERT_TRUE(snap.Revalidate(ps, fresh));
  EXPECT_TRUE(snap.Evaluate(ps, Stat{.path = fresh}).allowed());
  // A replaced file is another inode: a Landlock rule on the old one no
  // longer holds, as in the kernel.
  LandlockRuleset rs;
  rs.handled_access_fs = landlock::kFsReadFile;
  rs.AllowPath(fresh, landlock::kFsReadFile);
  Process confined = live.Spawn("confined", Cred::ForUser(0, 0));
  ASSERT_TRUE(live.Apply(confined, Restrict{rs}).allowed());
  EXPECT_TRUE(live.Evaluate(confined, Open{.path = fresh}).allowed());
  const std::string tmp = root_ + "/data/fresh.tmp";
  { std::ofstream(tmp) << "replacement\n"; }
  ASSERT_EQ(rename(tmp.c_str(), fresh.c_str()), 0);
  EXPECT_EQ(live.Evaluate(confined, Open{.path = fresh}).err(), EACCES);
  // Removed on the host: gone after revalidation.
  ASSERT_EQ(unlink(fresh.c_str()), 0);
  EXPECT_EQ(live.Evaluate(pl, Stat{.path = fresh}).err(), ENOENT);
  EXPECT_GE(live.host_counts().refreshed, 3u);
}

// rmdir's emptiness on a host that changes: the names a revalidating
// model read before may have gone, and names it read as absent may have
// come (a rename inside the directory, then a remove). Before, the model
// kept both: ENOTEMPTY for an emptied directory, and ok for one that
// still held the renamed file (a wrong "ok").
TEST_F(HostBackendTest, RevalidationSeesADirectoryEmptiedOrFilled) {
  changes_host_ = true;  // this test changes its own scratch tree
  const std::string dir = root_ + "/data/emptied";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  { std::ofstream(dir + "/n") << "x\n"; }
  Model live = Host(HostOptions::Consistency::kRevalidate);
  Process root = live.Init();
  EXPECT_TRUE(live.Evaluate(root, Stat{.path = dir + "/n"}).allowed());
  EXPECT_EQ(live.Evaluate(root, Stat{.path = dir + "/n3"}).err(), ENOENT);
  EXPECT_EQ(live.Evaluate(root, Rmdir{.path = dir}).err(), ENOTEMPTY);
  // Renamed on the host: the model's "n" is gone, its absent "n3" came.
  ASSERT_EQ(rename((dir + "/n").c_str(), (dir + "/n3").c_str()), 0);
  const Decision full = live.Evaluate(root, Rmdir{.path = dir});
  EXPECT_EQ(full.err(), ENOTEMPTY) << full.ToText();
  // Removed on the host: empty.
  ASSERT_EQ(unlink((dir + "/n3").c_str()), 0);
  const Decision empty = live.Evaluate(root, Rmdir{.path = dir});
  EXPECT_TRUE(empty.allowed()) << empty.ToText();
  // Renaming a directory over it asks the same.
  const std::string other = root_ + "/data/renamed-over";
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  { std::ofstream(dir + "/back") << "x\n"; }
  EXPECT_EQ(live.Evaluate(root, Rename{.oldpath = other, .newpath = dir}).err(), ENOTEMPTY);
  ASSERT_EQ(unlink((dir + "/back").c_str()), 0);
  EXPECT_TRUE(live.Evaluate(root, Rename{.oldpath = other, .newpath = dir}).allowed());
  EXPECT_EQ(rmdir(other.c_str()), 0);
  EXPECT_EQ(rmdir(dir.c_str()), 0);
}

// Filesystems that decide themselves, mounted for the test: an overlay
// (ovl_permission() checks the lower inode with the mounter's
// credentials) answers unknown, with why.
TEST_F(HostBackendTest, AnOverlayIsModelledWhereItsLayersCanBeFound) {
  changes_host_ = true;  // its own scratch tree: the overlay's directories
  const std::string o = root_ + "/ovl";
  for (const char* d : {"", "/upper", "/work", "/merged", "/upper2", "/work2", "/rel"})
    ASSERT_EQ(mkdir((o + d).c_str(), 0755), 0) << d;
  const std::string opts =
      fmt::format("lowerdir={}/data,upperdir={}/upper,workdir={}/work", root_, o, o);
  if (mount("overlay", (o + "/merged").c_str(), "overlay", 0, opts.c_str()) != 0)
    GTEST_SKIP() << "no overlayfs here: " << std::strerror(errno);
  // Layers named relative to the mounter's working directory, which
  // mountinfo prints as given.
  // (Back by descriptor: the working directory's path may be hidden by
  // the private namespace's own /tmp.)
  const int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cwd, 0) << std::strerror(errno);
  ASSERT_EQ(chdir(root_.c_str()), 0);
  const int rel = mount("overlay", (o + "/rel").c_str(), "overlay", 0,
                        "lowerdir=data,upperdir=ovl/upper2,workdir=ovl/work2");
  const int rel_errno = errno;
  ASSERT_EQ(fchdir(cwd), 0) << std::strerror(errno);
  close(cwd);
  ASSERT_EQ(rel, 0) << std::strerror(rel_errno);
  Model m = Host();
  Process p = m.Spawn("alice", Cred::ForUser(1000, 1000));
  // The merged file is the lower layer's, its mode and owner with it.
  const Decision d = m.Evaluate(p, Open{.path = o + "/merged/file"});
  EXPECT_FALSE(d.unknown()) << d.ToText();
  EXPECT_EQ(d.allowed(), m.Evaluate(p, Open{.path = root_ + "/data/file"}).allowed());
  const Decision r = m.Evaluate(p, Open{.path = o + "/rel/file"});
  EXPECT_TRUE(r.unknown()) << r.ToText();
  EXPECT_NE(r.reason().unknown_why.find("relative to the mounter's working directory"),
            std::string::npos)
      << r.reason().unknown_why;
  ASSERT_EQ(umount2((o + "/rel").c_str(), MNT_DETACH), 0);
  ASSERT_EQ(umount2((o + "/merged").c_str(), MNT_DETACH), 0);
}

// The protected_* sysctls come from the host, and again on revalidation.
TEST_F(HostBackendTest, SysctlsAreReadAgainOnRevalidation) {
  char dir[] = "/tmp/pathwarden-sysctl.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto write = [&](const char* name, int v) { std::ofstream(std::string(dir) + "/" + name) << v << "\n"; };
  write("protected_symlinks", 1);
  write("protected_hardlinks", 1);
  write("protected_regular", 2);
  write("protected_fifos", 0);
  HostOptions o;
  o.sysctl_dir = dir;
  auto m = Model::FromHost(o);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->sysctls(), (Sysctls{1, 1, 2, 0}));
  write("protected_fifos", 1);
  EXPECT_EQ(m->sysctls(), (Sysctls{1, 1, 2, 0}));
  ASSERT_TRUE(m->Revalidate(m->Init(), "/"));
  EXPECT_EQ(m->sysctls(), (Sysctls{1, 1, 2, 1}));
  // A value the kernel would never hold is an error, with where.
  write("protected_regular", 7);
  auto bad = m->Revalidate(m->Init(), "/");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), std::string(dir) + "/protected_regular:1:1: \"7\" is not a value of "
                                            "protected_regular (0 to 2)");
  std::filesystem::remove_all(dir);
}

// Readers that miss fill concurrently (each fill a write), while the
// writer applies changes elsewhere: every answer equals the eager
// model's. Run under TSan by ./test's tsan phase.
TEST_F(HostBackendTest, ReadersFillConcurrently) {
  Model eager = Host();
  ASSERT_TRUE(eager.Preload(root_));
  Model lazy = Host();
  const std::vector<std::string> paths = HostPaths(root_);
  const Cred alice = Cred::ForUser(1000, 1000);
  Process pe = eager.Spawn("alice", alice);
  std::vector<Request> requests;
  for (const std::string& p : paths) {
    struct stat st {};
    const mode_t mode = lstat(p.c_str(), &st) == 0 ? st.st_mode : 0;
    for (Request& r : ReadOnlyRequests(p, mode)) requests.push_back(std::move(r));
  }
  std::vector<std::string> want;
  for (const Request& r : requests) want.push_back(eager.Evaluate(pe, r).ToText());
  constexpr int kReaders = 3;
  std::vector<Process> readers;
  for (int i = 0; i < kReaders; ++i) readers.push_back(lazy.Spawn("alice", alice));
  Process writer = lazy.Init();
  std::vector<int> wrong(kReaders, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&, i] {
      // Each reader its own order, so they miss on different names.
      for (size_t n = 0; n < requests.size(); ++n) {
        const size_t k = (n * (2 * i + 1) + static_cast<size_t>(i) * 7) % requests.size();
        if (lazy.Evaluate(readers[i], requests[k]).ToText() != want[k]) ++wrong[i];
      }
    });
  }
  auto tmp = lazy.Lookup(root_ + "/tmp");
  ASSERT_TRUE(tmp);
  for (int round = 0; round < 50; ++round) {
    const std::string d = fmt::format("{}/tmp/w{}", root_, round);
    EXPECT_TRUE(lazy.Apply(writer, Mkdir{.path = d}).allowed());
    EXPECT_TRUE(lazy.Apply(writer, Rmdir{.path = d}).allowed());
    // The builder writes too, while readers fill.
    ASSERT_TRUE(lazy.Mkdir(*tmp, fmt::format("b{}", round)));
    EXPECT_TRUE(lazy.Apply(writer, Rmdir{.path = fmt::format("{}/tmp/b{}", root_, round)}).allowed());
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kReaders; ++i) EXPECT_EQ(wrong[i], 0) << "reader " << i;
  // Asked again, single-threaded, to the same answers.
  for (size_t k = 0; k < requests.size(); ++k)
    EXPECT_EQ(lazy.Evaluate(readers[0], requests[k]).ToText(), want[k]) << Describe(requests[k]);
}

TEST_F(HostBackendTest, TheModelChangesOnlyItself) {
  Model m = Host();
  Process root = m.Init();
  const std::string dir = root_ + "/data";
  // Applied changes stay in the model: the host listing (TearDown)
  // proves the host saw none, and the model keeps them against the host.
  EXPECT_TRUE(m.Apply(root, Mkdir{.path = dir + "/made"}).allowed());
  EXPECT_TRUE(m.Apply(root, Unlink{.path = dir + "/file"}).allowed());
  EXPECT_TRUE(m.Apply(root, Rename{.oldpath = dir + "/sub", .newpath = dir + "/moved"}).allowed());
  EXPECT_TRUE(m.Evaluate(root, Stat{.path = dir + "/made"}).allowed());
  EXPECT_EQ(m.Evaluate(root, Stat{.path = dir + "/file"}).err(), ENOENT);
  EXPECT_EQ(m.Evaluate(root, Stat{.path = dir + "/sub"}).err(), ENOENT);
  // The moved directory is still read from where it is on the host.
  EXPECT_TRUE(m.Evaluate(root, Stat{.path = dir + "/moved/deep"}).allowed());
  // rmdir of a directory none of whose names was read lists it first.
  const uint64_t listings = m.host_counts().listings;
  EXPECT_EQ(m.Evaluate(root, Rmdir{.path = root_ + "/hard/a"}).err(), ENOTEMPTY);
  EXPECT_EQ(m.host_counts().listings, listings + 1);
  EXPECT_TRUE(m.Apply(root, Rmdir{.path = dir + "/made"}).allowed());
  struct stat st {};
  EXPECT_EQ(stat((dir + "/made").c_str(), &st), -1);
  EXPECT_EQ(stat((dir + "/file").c_str(), &st), 0);
}


// Linearizability with the host backend's own writes: the writer changes
// the host (create, remove, mkdir, rmdir, chmod, chown, setfacl, rename
// below the scratch tree's tmp/) and revalidates what it changed, and
// changes the model alone (Apply()), while readers ask every kind of
// question and fill what they miss from the host. Each reader's answer
// must be one a single-threaded replay gives at a state of its call's
// interval: the same operations on a second scratch tree built alike,
// read by a second model. ./test's tsan phase runs this too.
TEST_F(HostBackendTest, ReadersLinearizableUnderHostWrites) {
  constexpr size_t kOps = linearizability::kUnderTsan ? 300 : 3000;
  constexpr size_t kMaxAsked = 60000;  // per reader
  changes_host_ = true;
  auto second = ScratchHost::Build();
  ASSERT_TRUE(second) << second.error();
  std::unique_ptr<ScratchHost> replay_scratch = std::move(*second);
  ASSERT_EQ(replay_scratch->root().size(), root_.size());  // same name lengths

  struct Op {
    enum Kind { kCreate, kUnlink, kMkdir, kRmdir, kChmod, kChown, kSetfacl, kRename,
                kModelCreate, kModelMkdir, kModelUnlink, kModelChmod, kKinds };
    Kind kind;
    std::string path, path2;  // below the root
    uint32_t mode = 0, uid = 0, gid = 0;
  };
  std::mt19937 rng(20261201);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<Op> ops;
  for (size_t i = 0; i < kOps; ++i) {
    Op op{static_cast<Op::Kind>(pick(Op::kKinds)), {}, {}};
    const bool model = op.kind >= Op::kModelCreate;
    op.path = fmt::format("/tmp/{}{}", model ? 'm' : 'h', pick(4));
    op.path2 = fmt::format("/tmp/h{}", pick(4));
    op.mode = std::array<uint32_t, 5>{0600, 0644, 0755, 0700, 04711}[pick(5)];
    op.uid = std::array<uint32_t, 3>{0, 1000, 1001}[pick(3)];
    op.gid = std::array<uint32_t, 2>{0, 1000}[pick(2)];
    ops.push_back(op);
  }
  // One operation: on the host below `root` and revalidated, or on the model.
  auto apply = [](Model& m, Process writer, const std::string& root, const Op& op) -> int {
    const std::string p = root + op.path, p2 = root + op.path2;
    int r = 0;
    auto sys = [&r](int rc) { r = rc == 0 ? 0 : errno; };
    switch (op.kind) {
      case Op::kCreate: {
        const int fd = open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, op.mode);
        r = fd >= 0 ? 0 : errno;
        if (fd >= 0) close(fd);
        break;
      }
      case Op::kUnlink: sys(unlink(p.c_str())); break;
      case Op::kMkdir: sys(mkdir(p.c_str(), op.mode)); break;
      case Op::kRmdir: sys(rmdir(p.c_str())); break;
      case Op::kChmod: sys(chmod(p.c_str(), op.mode)); break;
      case Op::kChown: sys(chown(p.c_str(), op.uid, op.gid)); break;
      case Op::kSetfacl: {
        acl_t a = acl_from_text(fmt::format("u::rwx,u:{}:rwx,g::r-x,m::rwx,o::---",
                                            op.uid == 0 ? 1001 : op.uid).c_str());
        sys(a ? acl_set_file(p.c_str(), ACL_TYPE_ACCESS, a) : -1);
        if (a) acl_free(a);
        break;
      }
      case Op::kRename: sys(rename(p.c_str(), p2.c_str())); break;
      case Op::kModelCreate:
        return m.Apply(writer, Open{.path = p, .flags = O_CREAT | O_EXCL | O_WRONLY, .mode = op.mode},
                       Model::Detail::kVerdictOnly).err();
      case Op::kModelMkdir:
        return m.Apply(writer, Mkdir{.path = p, .mode = op.mode}, Model::Detail::kVerdictOnly).err();
      case Op::kModelUnlink:
        return m.Apply(writer, Unlink{.path = p}, Model::Detail::kVerdictOnly).err();
      case Op::kModelChmod:
        return m.Apply(writer, Chmod{.path = p, .mode = op.mode}, Model::Detail::kVerdictOnly).err();
      case Op::kKinds: break;
    }
    // What changed on the host is revalidated, as a tracer does before
    // each call (the entries walked to it, the sysctls).
    for (const std::string& q : op.kind == Op::kRename ? std::vector{p, p2} : std::vector{p}) {
      auto n = m.Revalidate(writer, q);
      if (!n) ADD_FAILURE() << "Revalidate(" << q << "): " << n.error();
    }
    return r;
  };
  // The questions: every kind, on the names the writer changes and on
  // the scratch tree's other objects, as four identities and a confined one.
  std::vector<std::string> rel = {"/tmp", "/tmp/alice_file", "/home", "/bin", "/data"};
  for (int i = 0; i < 4; ++i) {
    rel.push_back(fmt::format("/tmp/h{}", i));
    rel.push_back(fmt::format("/tmp/m{}", i));
    rel.push_back(fmt::format("/tmp/h{}/x", i));
  }
  auto questions = [&rel](const std::string& root) {
    std::vector<Request> q;
    for (const std::string& r : rel) {
      const std::string p = root + r;
      for (Request& x : ReadOnlyRequests(p, S_IFREG)) q.push_back(std::move(x));
      for (Request& x : ChangingRequests(p)) q.push_back(std::move(x));
    }
    return q;
  };
  struct World {
    Model m;
    Process writer;
    std::vector<Process> procs;
    std::vector<Request> questions;
  };
  auto make = [&](const std::string& root) {
    World w{Host(), {}, {}, questions(root)};
    w.writer = w.m.Init();
    for (const Who& who : Identities()) w.procs.push_back(w.m.Spawn(who.name, who.cred));
    Process confined = w.m.Spawn("confined", Cred::ForUser(1000, 1000));
    EXPECT_EQ(w.m.Apply(confined, Restrict{.ruleset = Layer(root)}).err(), 0);
    w.procs.push_back(confined);
    return w;
  };

  World live = make(root_);
  using linearizability::Asked;

  std::vector<int> live_results(ops.size());
  const std::vector<std::vector<Asked>> asked = linearizability::LiveRun(
      7, kMaxAsked, 40, static_cast<uint32_t>(live.procs.size()),
      static_cast<uint32_t>(live.questions.size()), ops.size(),
      [&](uint32_t pi, uint32_t qi) {
        return live.m.Evaluate(live.procs[pi], live.questions[qi], Model::Detail::kVerdictOnly);
      },
      [&](size_t i) { live_results[i] = apply(live.m, live.writer, root_, ops[i]); });
  ASSERT_EQ(EngineOf(live.m).world().Verify(), "") << "after the live run";

  // The replay, one thread, on the second tree.
  World replay = make(replay_scratch->root());
  const linearizability::Outcome o = linearizability::Replay(
      asked, static_cast<uint32_t>(ops.size()),
      [&](uint32_t state) {
        const int got = apply(replay.m, replay.writer, replay_scratch->root(), ops[state - 1]);
        EXPECT_EQ(got, live_results[state - 1]) << "operation " << state << " answered otherwise";
        return got == live_results[state - 1];
      },
      [&](const Asked& a) {
        return replay.m.Evaluate(replay.procs[a.proc], replay.questions[a.question],
                                 Model::Detail::kVerdictOnly);
      },
      // Between a host change and its revalidation the model's entries
      // and the host disagree: a listing or a fill may find the host
      // otherwise than the model, and the engine says it cannot tell
      // (unknown, never allowed). Only then: an unknown while no host
      // change was in flight has no excuse.
      [&](const Asked& a) {
        if (a.verdict != Verdict::kUnknown) return false;
        for (uint32_t k = a.from + 1; k <= a.to && k <= ops.size(); ++k)
          if (ops[k - 1].kind < Op::kModelCreate) return true;
        return false;
      },
      [&](const Asked& a) {
        return fmt::format("{} as process {} during states {}..{}: got {} ({})",
                           Describe(live.questions[a.question]), a.proc, a.from, a.to,
                           ErrnoName(a.err), VerdictName(a.verdict));
      });
  EXPECT_EQ(o.unmatched, 0u);
  EXPECT_EQ(o.mismatches, 0u) << fmt::format("{}", fmt::join(o.failures, "\n"));
  EXPECT_EQ(o.checked, o.asked);
  EXPECT_GT(o.during, 100u) << "the readers hardly overlapped the writer";
  EXPECT_GT(live.m.host_counts().revalidated, 0u);
  EXPECT_EQ(replay_scratch->Cleanup(), "");
  RecordProperty("asked", static_cast<int>(o.asked));
  RecordProperty("unknown_in_flight", static_cast<int>(o.excused));
}

}  // namespace
}  // namespace pathwarden
