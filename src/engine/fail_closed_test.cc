// Fail closed (issue 14): an internal inconsistency denies with EACCES and
// the reason "internal error: <what>", never allows, in every path (an
// explained evaluation, a traced one, a verdict-only one, a dry run of a
// builder call); without a DenyOnInternalForTesting scope the checking
// build aborts with the message instead.
//
// Each test builds a small world through the Model's builder, then injects
// what the engine's invariants exclude through the world's testing hooks
// (World::inode_for_testing(), dentry_for_testing(), the memo's
// MemoSetForTesting()): no sequence bump, no mirrors, no counts, as a torn
// read or a bug would leave the state.
//   a dangling id: an ACL id past the ACL table, an ACL without its other
//     entry, a dentry naming a freed inode slot;
//   a torn read: a regular file whose mode lost its type bits;
//   a memo entry out of date: grants that disagree with the walk.
// Several would be allowed if a check's denial were not final: root's
// capabilities overriding a failed ACL check, may_linkat() turning one into
// "not a safe source" that protected_hardlinks=0 ignores, the Landlock walk
// allowing what the memo denies.

#include <fcntl.h>
#include <sys/stat.h>

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/api/model_impl.h"
#include "src/base/check.h"
#include "src/engine/engine.h"
#include "src/explain/explain.h"
#include "src/landlock/memo.h"

namespace pathwarden {
namespace {

using Detail = Model::Detail;

constexpr Detail kDetails[] = {Detail::kReason, Detail::kTrace, Detail::kVerdictOnly};

std::string_view DetailName(Detail d) {
  switch (d) {
    case Detail::kReason: return "reason";
    case Detail::kTrace: return "trace";
    case Detail::kVerdictOnly: return "verdict-only";
  }
  return "?";
}

class FailClosedTest : public ::testing::Test {
 protected:
  FailClosedTest() : m_(NewModel(EngineOptions{})) {}

  void SetUp() override {
    const Process init = m_.Init();
    // /d: a directory everyone may search; /d/f: a file of uid 1000 that
    // its group may read.
    ASSERT_EQ(m_.Apply(init, Mkdir{.path = "/d", .mode = 0755}).err(), 0);
    ASSERT_EQ(m_.Apply(init, Mknod{.path = "/d/f", .mode = 0640}).err(), 0);
    ASSERT_EQ(m_.Apply(init, Chown{.path = "/d/f", .uid = 1000, .gid = 1000}).err(), 0);
    // /s: a directory only its owner and group may search, with a file.
    ASSERT_EQ(m_.Apply(init, Mkdir{.path = "/s", .mode = 0750}).err(), 0);
    ASSERT_EQ(m_.Apply(init, Mknod{.path = "/s/x", .mode = 0644}).err(), 0);
    ASSERT_EQ(m_.Apply(init, Chown{.path = "/s", .uid = 1000, .gid = 1000}).err(), 0);
    // /w: a directory anyone may write to, for links.
    ASSERT_EQ(m_.Apply(init, Mkdir{.path = "/w"}).err(), 0);
    ASSERT_EQ(m_.Apply(init, Chmod{.path = "/w", .mode = 0777}).err(), 0);
    root_ = m_.Spawn("root", Cred{});
    alice_ = m_.Spawn("alice", Cred::ForUser(1001, 1001));
  }

  vfs::World& world() { return EngineOf(m_).world(); }
  Node At(std::string_view path) {
    Result<Node, int> n = m_.Lookup(path, false);
    EXPECT_TRUE(n) << path;
    return n ? *n : Node{};
  }
  vfs::Inode& InodeOf(std::string_view path) { return world().inode_for_testing(At(path).inode); }

  // Evaluates `request` as `p` at every detail level, inside a
  // DenyOnInternalForTesting scope: each must deny with `err`; the
  // explained ones must say "internal error: <what>" and nothing else.
  void ExpectFailsClosed(Process p, const Request& request, std::string_view what,
                         int err = EACCES) {
    internal::DenyOnInternalForTesting deny;
    for (Detail detail : kDetails) {
      SCOPED_TRACE(DetailName(detail));
      const Decision d = m_.Evaluate(p, request, detail);
      EXPECT_TRUE(d.denied()) << d.ToText();
      EXPECT_FALSE(d.allowed());
      EXPECT_EQ(d.err(), err) << d.ToText();
      if (detail == Detail::kVerdictOnly) continue;
      const std::string text = "internal error: " + std::string(what);
      EXPECT_EQ(d.reason().text, text);
      EXPECT_EQ(d.stage(), Stage::kNone);
      // What the CLI, JSON and the C API's pathwarden_decision_reason()
      // print.
      EXPECT_EQ(d.ToText(), text);
    }
  }

  // A dangling access ACL id on the inode at `path`: one past the table.
  void DangleAcl(std::string_view path) {
    vfs::Inode& i = InodeOf(path);
    i.acl = world().acl_end_for_testing();
    ASSERT_EQ(world().acl(i.acl), nullptr);
  }

  Model m_;
  Process root_, alice_;
};

// --- A dangling id ------------------------------------------------------

TEST_F(FailClosedTest, DanglingAclIdOnAFileDenies) {
  // Sound first: alice falls in "other" of 0640 and may not read; root may.
  EXPECT_EQ(m_.Evaluate(alice_, Open{.path = "/d/f"}).err(), EACCES);
  EXPECT_EQ(m_.Evaluate(root_, Open{.path = "/d/f"}).err(), 0);
  DangleAcl("/d/f");
  ExpectFailsClosed(alice_, Open{.path = "/d/f"}, "dangling ACL id");
  // Root's CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE overrode the failed
  // check's EACCES, as they override a denial (generic_permission()):
  // allowed before the fix, in the verdict-only path too.
  ExpectFailsClosed(root_, Open{.path = "/d/f"}, "dangling ACL id");
  ExpectFailsClosed(root_, Open{.path = "/d/f", .flags = O_WRONLY}, "dangling ACL id");
  ExpectFailsClosed(root_, Access{.path = "/d/f", .mode = R_OK}, "dangling ACL id");
  // The owner never consults the ACL: nothing inconsistent is read.
  const Process owner = m_.Spawn("owner", Cred::ForUser(1000, 1000));
  EXPECT_EQ(m_.Evaluate(owner, Open{.path = "/d/f"}).err(), 0);
}

TEST_F(FailClosedTest, DanglingAclIdOnTheWalkDenies) {
  DangleAcl("/s");
  // may_lookup() on /s: the general code (no fast search bit: 0750).
  ExpectFailsClosed(alice_, Stat{.path = "/s/x"}, "dangling ACL id");
  ExpectFailsClosed(root_, Stat{.path = "/s/x"}, "dangling ACL id");
  // The builder's own walk, too.
  internal::DenyOnInternalForTesting deny;
  Result<Node, Decision> n = m_.Resolve(root_, "/s/x");
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().err(), EACCES);
  EXPECT_EQ(n.error().ToText(), "internal error: dangling ACL id");
}

TEST_F(FailClosedTest, DanglingAclIdOfAHardlinkSourceDenies) {
  // may_linkat() asks for read and write on the source to know whether it
  // is "safe"; with protected_hardlinks=0 the answer used not to matter,
  // so a failed check allowed the link.
  ASSERT_EQ(m_.Apply(m_.Init(), Mknod{.path = "/w/f", .mode = 0660}).err(), 0);
  ASSERT_EQ(m_.Apply(m_.Init(), Chown{.path = "/w/f", .uid = 1000, .gid = 1000}).err(), 0);
  m_.SetSysctls(Sysctls{.protected_hardlinks = 0});
  EXPECT_EQ(m_.Evaluate(alice_, Link{.oldpath = "/w/f", .newpath = "/w/g"}).err(), 0);
  DangleAcl("/w/f");
  ExpectFailsClosed(alice_, Link{.oldpath = "/w/f", .newpath = "/w/g"}, "dangling ACL id");
  m_.SetSysctls(Sysctls{.protected_hardlinks = 1});
  ExpectFailsClosed(alice_, Link{.oldpath = "/w/f", .newpath = "/w/g"}, "dangling ACL id");
}

TEST_F(FailClosedTest, AclWithoutOtherEntryDenies) {
  // An ACL no validation would let through (not even an owner entry),
  // interned behind the validators' back.
  vfs::World& w = world();
  const vfs::AclId empty = EngineOf(m_).AsWriter([&] { return w.InternAcl(PosixAcl{}); });
  InodeOf("/d/f").acl = empty;
  ExpectFailsClosed(alice_, Open{.path = "/d/f"}, "ACL without an other entry");
  ExpectFailsClosed(root_, Open{.path = "/d/f"}, "ACL without an other entry");
}

TEST_F(FailClosedTest, DentryNamingAFreedInodeDenies) {
  // /d/gone's inode freed by its unlink; /d/f's dentry made to name it.
  ASSERT_EQ(m_.Apply(m_.Init(), Mknod{.path = "/d/gone", .mode = 0644}).err(), 0);
  const vfs::InodeId freed = At("/d/gone").inode;
  ASSERT_EQ(m_.Apply(m_.Init(), Unlink{.path = "/d/gone"}).err(), 0);
  ASSERT_EQ(world().inode(freed).mode, 0u) << "the slot is not free";
  world().dentry_for_testing(At("/d/f").dentry).inode = freed;
  ExpectFailsClosed(root_, Open{.path = "/d/f"}, "open: unknown file type");
  ExpectFailsClosed(alice_, Open{.path = "/d/f"}, "open: unknown file type");
}

// --- A torn read --------------------------------------------------------

TEST_F(FailClosedTest, TornModeDenies) {
  // A reader that loaded a mode the writer was midway through, and a
  // sequence check that let it pass: the type bits gone (no S_IFMT type
  // is 0), the permission bits wide open. Not one class may open it.
  InodeOf("/d/f").mode = 0666;
  ExpectFailsClosed(alice_, Open{.path = "/d/f"}, "open: unknown file type");
  ExpectFailsClosed(root_, Open{.path = "/d/f", .flags = O_RDWR}, "open: unknown file type");
  const Process owner = m_.Spawn("owner", Cred::ForUser(1000, 1000));
  ExpectFailsClosed(owner, Open{.path = "/d/f"}, "open: unknown file type");
  // An S_IFMT value no type has.
  InodeOf("/d/f").mode = 0030644;
  ExpectFailsClosed(owner, Open{.path = "/d/f"}, "open: unknown file type");
}

// --- A memo entry out of date ------------------------------------------

class FailClosedMemoTest : public FailClosedTest {
 protected:
  void SetUp() override {
    FailClosedTest::SetUp();
    // /c of uid 1000, in which the confined process may read files, list
    // and make directories, nothing else.
    ASSERT_EQ(m_.Apply(m_.Init(), Mkdir{.path = "/c", .mode = 0755}).err(), 0);
    ASSERT_EQ(m_.Apply(m_.Init(), Mknod{.path = "/c/f", .mode = 0644}).err(), 0);
    ASSERT_EQ(m_.Apply(m_.Init(), Chown{.path = "/c", .uid = 1000, .gid = 1000}).err(), 0);
    ASSERT_EQ(m_.Apply(m_.Init(), Chown{.path = "/c/f", .uid = 1000, .gid = 1000}).err(), 0);
    confined_ = m_.Spawn("confined", Cred::ForUser(1000, 1000));
    LandlockRuleset rs{.handled_access_fs = landlock::kFsAll};
    rs.AllowPath("/", landlock::kFsReadDir | landlock::kFsExecute);
    rs.AllowPath("/c", landlock::kFsReadFile | landlock::kFsReadDir | landlock::kFsMakeDir);
    ASSERT_EQ(m_.Apply(confined_, Restrict{.ruleset = rs}).err(), 0);
    // Sound first, at every detail (the explained ones check the memo).
    for (Detail detail : kDetails) {
      EXPECT_EQ(m_.Evaluate(confined_, Open{.path = "/c/f"}, detail).err(), 0);
      EXPECT_EQ(m_.Evaluate(confined_, Open{.path = "/c/f", .flags = O_WRONLY}, detail).err(),
                EACCES);
      EXPECT_EQ(m_.Evaluate(confined_, Mkdir{.path = "/c/n"}, detail).err(), 0);
    }
  }

  // This thread's memo entry for `path` under the confined domain says
  // `grants` for layer 1.
  void SetMemo(std::string_view path, landlock::AccessMask grants) {
    const landlock::Domain* d = EngineOf(m_).tasks().task(confined_.index).domain.get();
    ASSERT_NE(d, nullptr);
    const Node n = At(path);
    landlock::LayerGrants g{};
    g[0] = grants;
    landlock::MemoSetForTesting(world(), *d, vfs::PathPos{n.mount, n.dentry}, g);
  }

  // The explained evaluations verify the memo against the walk; a
  // verdict-only one is the memo's answer (its evaluation: it cannot see
  // the entry is out of date).
  void ExpectExplainedFailsClosed(const Request& request, std::string_view what) {
    internal::DenyOnInternalForTesting deny;
    for (Detail detail : {Detail::kReason, Detail::kTrace}) {
      SCOPED_TRACE(DetailName(detail));
      const Decision d = m_.Evaluate(confined_, request, detail);
      EXPECT_TRUE(d.denied()) << d.ToText();
      EXPECT_EQ(d.err(), EACCES);
      EXPECT_EQ(d.ToText(), "internal error: " + std::string(what));
    }
  }

  Process confined_;
};

TEST_F(FailClosedMemoTest, MemoDenyingWhatTheWalkAllowsDenies) {
  // The walk allows reading /c/f and making /c/n; the memo, out of date,
  // says nothing is granted there. The walk's answer would allow: the
  // disagreement denies.
  SetMemo("/c/f", 0);
  ExpectExplainedFailsClosed(Open{.path = "/c/f"},
                             "Landlock: the memo disagrees with the walk on open");
  SetMemo("/c", 0);
  ExpectExplainedFailsClosed(Mkdir{.path = "/c/n"}, "Landlock: the memo disagrees with the walk");
  // The memo's own answer, verdict-only: a denial (not an internal error).
  EXPECT_EQ(m_.Evaluate(confined_, Open{.path = "/c/f"}, Detail::kVerdictOnly).err(), EACCES);
  EXPECT_EQ(m_.Evaluate(confined_, Mkdir{.path = "/c/n"}, Detail::kVerdictOnly).err(), EACCES);
}

TEST_F(FailClosedMemoTest, MemoAllowingWhatTheWalkDeniesDenies) {
  SetMemo("/c/f", landlock::kFsAll);
  ExpectExplainedFailsClosed(Open{.path = "/c/f", .flags = O_WRONLY},
                             "Landlock: the memo disagrees with the walk on open");
  SetMemo("/c", landlock::kFsAll);
  ExpectExplainedFailsClosed(Mknod{.path = "/c/g", .mode = 0644},
                             "Landlock: the memo disagrees with the walk");
}

// --- Every path, and nothing left behind -------------------------------

TEST_F(FailClosedTest, UnknownOperationDenies) {
  // Not a request the Model can express: the engine's own dispatch.
  Engine& e = EngineOf(m_);
  OpArgs args;
  args.op = static_cast<Op>(255);
  args.path = "/d/f";
  internal::DenyOnInternalForTesting deny;
  EXPECT_EQ(e.Evaluate(root_.index, args, nullptr), EACCES);
  Explainer ex;
  EXPECT_EQ(e.Evaluate(root_.index, args, &ex), EACCES);
  ASSERT_NE(internal::failed_check.what, nullptr);
  EXPECT_STREQ(internal::failed_check.what, "Dispatch: unknown operation");
  EXPECT_EQ(internal::failed_check.denial, EACCES);
}

TEST_F(FailClosedTest, TheNextDecisionIsItsOwn) {
  DangleAcl("/d/f");
  {
    internal::DenyOnInternalForTesting deny;
    // The verdict-only path notes the failed check and never reads it.
    EXPECT_EQ(m_.Evaluate(alice_, Open{.path = "/d/f"}, Detail::kVerdictOnly).err(), EACCES);
  }
  // What it noted says nothing of the next decision.
  const Decision d = m_.Evaluate(alice_, Stat{.path = "/d/f"});
  EXPECT_TRUE(d.allowed()) << d.ToText();
  EXPECT_EQ(d.stage(), Stage::kWalk);
  EXPECT_EQ(d.ToText().find("internal error"), std::string::npos) << d.ToText();
}

TEST_F(FailClosedTest, ApplyFailsClosedAndChangesNothing) {
  DangleAcl("/s");
  internal::DenyOnInternalForTesting deny;
  const Decision d = m_.Apply(root_, Mkdir{.path = "/s/n"});
  EXPECT_EQ(d.err(), EACCES);
  EXPECT_EQ(d.ToText(), "internal error: dangling ACL id");
  EXPECT_EQ(m_.Apply(root_, Mkdir{.path = "/s/n"}, Detail::kVerdictOnly).err(), EACCES);
  EXPECT_FALSE(m_.Lookup("/s/n"));
}

// Without the testing scope, a checking build aborts with the message:
// a test that reaches an inconsistency by accident fails loudly.
using FailClosedDeathTest = FailClosedTest;

TEST_F(FailClosedDeathTest, CheckingBuildAborts) {
  if (!internal::kAbortOnInternal) GTEST_SKIP() << "not a checking build";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  DangleAcl("/d/f");
  const std::string message = "internal error \\(cannot happen\\): dangling ACL id";
  EXPECT_DEATH((void)m_.Evaluate(alice_, Open{.path = "/d/f"}, Detail::kVerdictOnly), message);
  EXPECT_DEATH((void)m_.Evaluate(root_, Open{.path = "/d/f"}), message);
  EXPECT_DEATH((void)m_.Apply(root_, Open{.path = "/d/f"}), message);
  // The scope ends with its block.
  { internal::DenyOnInternalForTesting deny; }
  EXPECT_DEATH((void)m_.Evaluate(alice_, Open{.path = "/d/f"}), message);
}

}  // namespace
}  // namespace pathwarden
