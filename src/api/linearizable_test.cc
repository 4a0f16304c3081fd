// Readers evaluate every kind of request while one writer does everything
// a writer does (create, remove, rename, chmod, chown, setfacl, symlinks,
// links, xattrs, tmpfs mounts, binds, unmounts, new processes confined by
// Landlock): each reader's answer must be the answer of one state that
// existed during its call (linearizability). The writer's operations are
// counted: a reader that read `done` = a before its call and `started` = b
// after it saw one of the states a..b (state k: after k operations). A
// single-threaded replay of the same operations on a second model then
// asks each recorded question at each state of its interval; one must
// agree. ./test runs this in the tsan preset too (Concurrency.*), which
// reports any data race.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/api/linearizability_test_util.h"
#include "src/api/model_impl.h"

namespace pathwarden {
namespace {

using linearizability::Asked;

constexpr Model::Detail kQuiet = Model::Detail::kVerdictOnly;

// The paths everything acts on: two directories and a mount point under
// /w, each with a few names, so that operations collide often.
const std::vector<std::string>& Dirs() {
  static const std::vector<std::string> d = {"/w/a", "/w/b", "/w/a/d", "/w/b/d", "/w/m"};
  return d;
}
const std::vector<std::string>& Names() {
  static const std::vector<std::string> n = {"x", "y", "d", "l"};
  return n;
}

// One writer operation, applied the same way live and in the replay.
struct WriteOp {
  enum Kind {
    kMkdir, kCreate, kUnlink, kRmdir, kRename, kChmod, kChown, kSetfacl, kSymlink,
    kLink, kMountTmpfs, kBind, kUmount, kRestrict, kSetxattr, kRemovexattr, kKinds
  };
  Kind kind;
  std::string path, path2;
  uint32_t mode = 0;
  uint32_t id = 0;
};

std::vector<WriteOp> MakeOps(uint32_t seed, size_t n) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t k) { return static_cast<size_t>(rng() % k); };
  auto path = [&] { return Dirs()[pick(Dirs().size())] + "/" + Names()[pick(Names().size())]; };
  static const uint32_t kModes[] = {0755, 0700, 0711, 0644, 0600, 0666, 0777, 01777, 02775, 0750};
  std::vector<WriteOp> ops;
  for (size_t i = 0; i < n; ++i) {
    WriteOp op{static_cast<WriteOp::Kind>(pick(WriteOp::kKinds)), path(), path()};
    op.mode = kModes[pick(std::size(kModes))];
    op.id = 1000 + static_cast<uint32_t>(pick(3));
    if (op.kind == WriteOp::kMountTmpfs || op.kind == WriteOp::kUmount) op.path = "/w/m";
    if (op.kind == WriteOp::kBind) op.path2 = "/w/m";
    if (op.kind == WriteOp::kChmod || op.kind == WriteOp::kChown || op.kind == WriteOp::kSetfacl) {
      // Now and then the directories themselves.
      if (pick(3) == 0) op.path = Dirs()[pick(Dirs().size())];
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

// The result of one operation (its errno, or what the builder answered).
int Apply(Model& m, const WriteOp& op) {
  const Process root = m.Init();
  switch (op.kind) {
    case WriteOp::kMkdir:
      return m.Apply(root, Mkdir{.path = op.path, .mode = op.mode}, kQuiet).err();
    case WriteOp::kCreate:
      return m.Apply(root, Mknod{.path = op.path, .mode = op.mode & 0777}, kQuiet).err();
    case WriteOp::kUnlink:
      return m.Apply(root, Unlink{.path = op.path}, kQuiet).err();
    case WriteOp::kRmdir:
      return m.Apply(root, Rmdir{.path = op.path}, kQuiet).err();
    case WriteOp::kRename:
      return m.Apply(root, Rename{.oldpath = op.path, .newpath = op.path2}, kQuiet).err();
    case WriteOp::kChmod:
      return m.Apply(root, Chmod{.path = op.path, .mode = op.mode}, kQuiet).err();
    case WriteOp::kChown:
      return m.Apply(root, Chown{.path = op.path, .uid = op.id, .gid = op.id}, kQuiet).err();
    case WriteOp::kSetfacl: {
      Result<Node, int> n = m.Lookup(op.path, false);
      if (!n) return n.error();
      Result<FileType, int> t = m.TypeOf(*n);
      if (!t || *t == FileType::kSymlink) return t ? EPERM : t.error();
      NodeAttrs a{.mode = op.mode & 07777, .uid = op.id, .gid = op.id};
      a.acl = std::vector<AclEntry>{{AclTag::kUser, static_cast<uint8_t>(op.mode & 7), op.id + 1},
                                    {AclTag::kMask, 7, 0}};
      Result<void, int> r = m.SetAttrs(*n, a);
      return r ? 0 : r.error();
    }
    case WriteOp::kSymlink:
      return m.Apply(root, Symlink{.target = op.path2, .path = op.path}, kQuiet).err();
    case WriteOp::kLink:
      return m.Apply(root, Link{.oldpath = op.path, .newpath = op.path2}, kQuiet).err();
    case WriteOp::kMountTmpfs:
      return m.Apply(root, MountTmpfs{.path = op.path}, kQuiet).err();
    case WriteOp::kBind:
      return m.Apply(root, BindMount{.source = "/w/a", .target = op.path2}, kQuiet).err();
    case WriteOp::kUmount:
      return m.Apply(root, Umount{.path = op.path, .flags = MNT_DETACH}, kQuiet).err();
    case WriteOp::kRestrict: {
      // A new process of the writer's, confined: rules attach to inodes
      // the readers walk through.
      const Process p = m.Spawn("w", Cred::ForUser(op.id, op.id));
      LandlockRuleset rs{.handled_access_fs = landlock::kFsAll};
      rs.AllowPath(op.path, landlock::kFsReadFile | landlock::kFsWriteFile);
      return m.Apply(p, Restrict{.ruleset = rs}, kQuiet).err();
    }
    case WriteOp::kSetxattr:
      return m.Apply(root, Setxattr{.path = op.path, .name = "user.k", .value = "v"}, kQuiet).err();
    case WriteOp::kRemovexattr:
      return m.Apply(root, Removexattr{.path = op.path, .name = "user.k"}, kQuiet).err();
    case WriteOp::kKinds:
      break;
  }
  return -1;
}

// The world before the first operation, and the readers' processes.
struct Start {
  Start() : m(NewModel(EngineOptions{})) {
    for (const char* d : {"/w", "/w/a", "/w/b", "/w/a/d", "/w/b/d", "/w/m"})
      EXPECT_EQ(m.Apply(m.Init(), Mkdir{.path = d, .mode = 0755}, kQuiet).err(), 0) << d;
    for (const char* f : {"/w/a/x", "/w/b/x", "/w/a/d/x"})
      EXPECT_EQ(m.Apply(m.Init(), Mknod{.path = f, .mode = 0644}, kQuiet).err(), 0) << f;
    Cred bob = Cred::ForUser(1001, 1001);
    bob.SetGroups({100, 1000});
    procs = {m.Spawn("root", Cred{}), m.Spawn("alice", Cred::ForUser(1000, 1000)),
             m.Spawn("bob", bob), m.Spawn("confined", Cred::ForUser(1000, 1000))};
    LandlockRuleset rs{.handled_access_fs = landlock::kFsAll};
    rs.AllowPath("/w/a", landlock::kFsReadFile | landlock::kFsReadDir | landlock::kFsExecute);
    rs.AllowPath("/w/b", landlock::kFsAll);
    EXPECT_EQ(m.Apply(procs[3], Restrict{.ruleset = rs}, kQuiet).err(), 0);
  }
  Model m;
  std::vector<Process> procs;
};

// Every kind of request the readers ask, over the writer's paths.
std::vector<Request> Questions() {
  std::vector<Request> q;
  std::vector<std::string> paths;
  for (const std::string& d : Dirs()) {
    paths.push_back(d);
    for (const std::string& n : Names()) paths.push_back(d + "/" + n);
  }
  for (const std::string& p : paths) {
    q.push_back(Stat{.path = p});
    q.push_back(Lstat{.path = p});
    q.push_back(Access{.path = p, .mode = R_OK | W_OK});
    q.push_back(Open{.path = p, .flags = O_RDONLY});
    q.push_back(Open{.path = p, .flags = O_WRONLY | O_TRUNC});
    q.push_back(Open{.path = p, .flags = O_CREAT | O_WRONLY | O_EXCL, .mode = 0600});
    q.push_back(ExecCheck{.path = p});
    q.push_back(Mkdir{.path = p});
    q.push_back(Mknod{.path = p, .type = S_IFIFO});
    q.push_back(Unlink{.path = p});
    q.push_back(Rmdir{.path = p});
    q.push_back(Rename{.oldpath = p, .newpath = "/w/b/y"});
    q.push_back(Link{.oldpath = p, .newpath = "/w/a/y"});
    q.push_back(Symlink{.target = "x", .path = p});
    q.push_back(Chmod{.path = p, .mode = 0600});
    q.push_back(Chown{.path = p, .uid = 1000, .gid = 100});
    q.push_back(Truncate{.path = p});
    q.push_back(Readlink{.path = p});
    q.push_back(Utimensat{.path = p});
    q.push_back(Getxattr{.path = p, .name = "user.k"});
    q.push_back(Setxattr{.path = p, .name = "user.k", .value = "w", .xattr_flags = XATTR_CREATE});
    q.push_back(Listxattr{.path = p});
    q.push_back(Removexattr{.path = p, .name = "user.k"});
  }
  return q;
}

TEST(Concurrency, ReadersLinearizableUnderEveryWrite) {
  constexpr size_t kOps = linearizability::kUnderTsan ? 600 : 20000;
  constexpr size_t kMaxAsked = 150000;  // per reader
  const std::vector<WriteOp> ops = MakeOps(20261201, kOps);
  const std::vector<Request> questions = Questions();

  Start live;
  std::vector<int> live_results(ops.size());
  const std::vector<std::vector<Asked>> asked = linearizability::LiveRun(
      1, kMaxAsked, 0, static_cast<uint32_t>(live.procs.size()),
      static_cast<uint32_t>(questions.size()), ops.size(),
      [&](uint32_t pi, uint32_t qi) { return live.m.Evaluate(live.procs[pi], questions[qi], kQuiet); },
      [&](size_t i) { live_results[i] = Apply(live.m, ops[i]); });
  std::string bad = live.m.impl().engine.world().Verify();
  ASSERT_EQ(bad, "") << "after the live run";

  // The replay: the same operations, one thread.
  Start replay;
  const linearizability::Outcome o = linearizability::Replay(
      asked, static_cast<uint32_t>(ops.size()),
      [&](uint32_t state) {
        const int got = Apply(replay.m, ops[state - 1]);
        EXPECT_EQ(got, live_results[state - 1]) << "operation " << state << " answered otherwise";
        return got == live_results[state - 1];
      },
      [&](const Asked& a) {
        return replay.m.Evaluate(replay.procs[a.proc], questions[a.question], kQuiet);
      },
      [](const Asked&) { return false; },
      [&](const Asked& a) {
        return fmt::format("question {} (op {}) by process {} during states {}..{}: got {} ({})",
                           a.question, static_cast<int>(OpOf(questions[a.question])), a.proc,
                           a.from, a.to, a.err, VerdictName(a.verdict));
      });
  EXPECT_EQ(o.unmatched, 0u);
  EXPECT_EQ(o.mismatches, 0u) << fmt::format("{}", fmt::join(o.failures, "\n"));
  EXPECT_EQ(o.checked, o.asked);
  // The readers asked while the writer wrote: not all before or after.
  EXPECT_GT(o.during, 100u) << "the readers hardly overlapped the writer";
  RecordProperty("asked", static_cast<int>(o.asked));
  RecordProperty("replayed", static_cast<int>(o.answered));
}

}  // namespace
}  // namespace pathwarden
