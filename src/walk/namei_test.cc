// The walk's register loop (PlainRun(), PlainStep()) against the general
// code (EngineOptions::plain_components off): it must hand every case it
// does not take back at the right component, take the last component only
// as lookup_last() would, count components as may_lookup() does, and never
// change an answer or a reason. (The scenario suites and the fuzzer check
// the semantics at large; these pin the hand-offs.)

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/api/model_impl.h"
#include "src/engine/engine.h"
#include "src/walk/namei.h"

namespace pathwarden {
namespace {

constexpr const char* kLong = "/a/abcdefg/abcdefgh/a-name-longer-than-sixteen-bytes";

// The tree: /a (0755) holding /a/b (0710, 1000:1000: searchable by its
// owner, not by everyone) with /a/b/c/f, /a/locked (0700) with a file,
// /a/link -> b/c, a tmpfs on /a/m holding g, and names around a word's
// size and longer under /a/abcdefg/abcdefgh (0711). Everything else is
// root's, directories 0755 and files 0644. Then u (1000:1000) and other
// (2000:2000).
struct Tree {
  explicit Tree(Model model) : m(std::move(model)) {
    const Node a = *m.Mkdir(m.Root(), "a");
    const Node b = *m.Mkdir(a, "b", {.mode = 0710, .uid = 1000, .gid = 1000});
    const Node c = *m.Mkdir(b, "c");
    (void)*m.Create(c, "f", {});
    const Node locked = *m.Mkdir(a, "locked", {.mode = 0700});
    (void)*m.Create(locked, "f", {});
    (void)*m.Create(a, "link", {.type = FileType::kSymlink, .target = "b/c"});
    const Node mnt = *m.MountTmpfs(*m.Mkdir(a, "m"), {.mode = 0755});
    (void)*m.Create(mnt, "g", {});
    const Node abcdefg = *m.Mkdir(a, "abcdefg");
    const Node abcdefgh = *m.Mkdir(abcdefg, "abcdefgh", {.mode = 0711});
    const Node long_dir = *m.Mkdir(abcdefgh, "a-name-longer-than-sixteen-bytes");
    (void)*m.Create(long_dir, "file-with-a-long-name.txt", {});
    (void)*m.Create(long_dir, "flink",
                    {.type = FileType::kSymlink, .target = "file-with-a-long-name.txt"});
    u = m.Spawn("u", Cred::ForUser(1000, 1000));
    other = m.Spawn("other", Cred::ForUser(2000, 2000));
  }

  Process Of(std::string_view as) const { return as == "u" ? u : other; }

  Model m;
  Process u, other;
};

struct Answer {
  int err;
  std::string reason;
  EngineStats stats;
};

// The request of `op` (stat, lstat, access(F_OK) or chdir) on `path`.
Request RequestOf(Op op, const std::string& path) {
  switch (op) {
    case Op::kLstat:
      return Lstat{.path = path};
    case Op::kAccess:
      return Access{.path = path};
    case Op::kChdir:
      return Chdir{.path = path};
    default:
      return pathwarden::Stat{.path = path};
  }
}

const char* NameOf(Op op) {
  switch (op) {
    case Op::kLstat:
      return "lstat";
    case Op::kAccess:
      return "access";
    case Op::kChdir:
      return "chdir";
    default:
      return "stat";
  }
}

Answer Stat(const std::string& as, const std::string& path, bool fast_search,
            bool plain_components = true, Op op = Op::kStat) {
  EngineOptions o;
  o.fast_search = fast_search;
  o.plain_components = plain_components;
  Tree t(NewModel(o));
  Explainer ex;
  Answer a;
  a.err = EngineOf(t.m).Evaluate(t.Of(as).index, ArgsOf(RequestOf(op, path)), &ex, &a.stats);
  a.reason = ex.Line();
  return a;
}

// The parameter: the fast search check on or off.
class PlainComponentsTest : public ::testing::TestWithParam<bool> {};

TEST_P(PlainComponentsTest, CountsEverySearchedDirectoryAndTheFastOnes) {
  const bool fast = GetParam();
  const Answer a = Stat("u", "/a/b/c/f", fast);
  EXPECT_EQ(a.err, 0) << a.reason;
  // "/", a, b, c searched; b (0710) is not searchable by everyone.
  EXPECT_EQ(a.stats.components, 4u);
  EXPECT_EQ(a.stats.fast_components, fast ? 3u : 0u);
}

TEST_P(PlainComponentsTest, ARefusedDirectoryIsRefusedAndExplainedByTheGeneralCode) {
  const Answer a = Stat("other", "/a/b/c/f", GetParam());
  EXPECT_EQ(a.err, EACCES);
  EXPECT_NE(a.reason.find("no search permission on /a/b"), std::string::npos) << a.reason;
  const Answer locked = Stat("u", "/a/locked/f", GetParam());
  EXPECT_EQ(locked.err, EACCES);
  EXPECT_NE(locked.reason.find("/a/locked"), std::string::npos) << locked.reason;
}

TEST_P(PlainComponentsTest, HandsOffSymlinksDotsMountsAndMisses) {
  const bool fast = GetParam();
  EXPECT_EQ(Stat("u", "/a/link/f", fast).err, 0);          // a symlink mid-path
  EXPECT_EQ(Stat("u", "/a/./b/../b/c/f", fast).err, 0);    // "." and ".."
  EXPECT_EQ(Stat("u", "/a/m/g", fast).err, 0);             // into a mounted tmpfs
  EXPECT_EQ(Stat("u", "/a/m/../b/c/f", fast).err, 0);      // and back out of it
  EXPECT_EQ(Stat("u", "/a/missing/f", fast).err, ENOENT);
  EXPECT_EQ(Stat("u", "/a/b/c/f/x", fast).err, ENOTDIR);   // a file mid-path
  EXPECT_EQ(Stat("u", "/a/b/c/", fast).err, 0);            // trailing slash on a directory
  EXPECT_EQ(Stat("u", "/a/b/c/f/", fast).err, ENOTDIR);    // and on a file
  EXPECT_EQ(Stat("u", "//a///b//c//f", fast).err, 0);      // runs of slashes
  EXPECT_EQ(Stat("u", "/a/" + std::string(256, 'n') + "/f", fast).err, ENAMETOOLONG);
  EXPECT_EQ(Stat("u", "/a/" + std::string(255, 'n') + "/f", fast).err, ENOENT);
}

const std::string kPaths[] = {
    "/a/b/c/f", "/a/locked/f", "/a/link/f", "/a/m/../b/c/f", "/a/missing/f", "/a/b/c/f/x",
    "/a/b/c/f/", "//a//b/./c/f", "/a/b/../locked/f",
    // The last component: a symlink (followed by stat, not by lstat), a
    // mount point, a directory, one with a trailing slash, ".", "..".
    "/a/link", "/a/m", "/a/b", "/a/b/", "/a/b/.", "/a/b/..", "a/b/c/f", "a",
    // Names around a word's size and longer, found, missing and refused.
    std::string(kLong) + "/file-with-a-long-name.txt", std::string(kLong) + "/flink",
    std::string(kLong) + "/file-with-a-long-name.tx", std::string(kLong) + "/file-with-a-long-name.txu",
    std::string(kLong) + "/file-with-a-long-name.txt/", "/a/abcdefg/abcdefgh", "/a/abcdefg/abcdefg",
    "/a/abcdefg/abcdefghi", std::string(kLong)};

TEST_P(PlainComponentsTest, AnswersAsTheGeneralCode) {
  for (Op op : {Op::kStat, Op::kLstat, Op::kAccess, Op::kChdir}) {
    for (const char* as : {"u", "other"}) {
      for (const std::string& path : kPaths) {
        const Answer loop = Stat(as, path, GetParam(), true, op);
        const Answer general = Stat(as, path, GetParam(), false, op);
        const std::string what = std::string(NameOf(op)) + " as " + as + " " + path;
        EXPECT_EQ(loop.err, general.err) << what;
        EXPECT_EQ(loop.reason, general.reason) << what;
        EXPECT_EQ(loop.stats.components, general.stats.components) << what;
        EXPECT_EQ(loop.stats.fast_components, general.stats.fast_components) << what;
      }
    }
  }
}

TEST_P(PlainComponentsTest, TakesLongNamesAndTheLastComponent) {
  const bool fast = GetParam();
  const std::string file = std::string(kLong) + "/file-with-a-long-name.txt";
  EXPECT_EQ(Stat("u", file, fast).err, 0);
  EXPECT_EQ(Stat("u", std::string(kLong) + "/flink", fast).err, 0);  // followed
  EXPECT_EQ(Stat("u", std::string(kLong) + "/flink", fast, true, Op::kLstat).err, 0);
  EXPECT_EQ(Stat("u", file + "x", fast).err, ENOENT);
  EXPECT_EQ(Stat("u", file.substr(0, file.size() - 1), fast).err, ENOENT);
  // "/", a, abcdefg, abcdefgh (0711: searchable by everyone) and the long
  // one are searched, all fast with the check.
  const Answer a = Stat("u", file, fast);
  EXPECT_EQ(a.stats.components, 5u);
  EXPECT_EQ(a.stats.fast_components, fast ? 5u : 0u);
}

TEST(PlainComponents, FastSearchChangesNoAnswerNorReason) {
  for (const char* as : {"u", "other"}) {
    for (const std::string& path : kPaths) {
      const Answer on = Stat(as, path, true);
      const Answer off = Stat(as, path, false);
      EXPECT_EQ(on.err, off.err) << as << " " << path;
      EXPECT_EQ(on.reason, off.reason) << as << " " << path;
      EXPECT_EQ(on.stats.components, off.stats.components) << as << " " << path;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FastSearch, PlainComponentsTest, ::testing::Bool());

// The walk itself, loop against general code, for every LOOKUP_* flags
// and both entry points: each rule of the loop (namei.h, StepRuleOf(),
// LoopDirRule(), NameAccepted()) has a path below where the general code
// does something else than move on, so a rule dropped from the loop, or
// written into one of its shapes (PlainRun(), PlainStep()) and not the
// other, gives another position, errno, reason or count.
struct WalkAnswer {
  int err = 0;
  vfs::PathPos pos;
  std::string last;
  walk::LastType type = walk::LastType::kRoot;
  bool trailing_slash = false;
  std::string reason;
  EngineStats stats;
};

class WalkRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)*t_.m.Mkdir(*t_.m.Lookup("/a"), "gone", {.mode = 0777});
    dead_ = t_.m.Spawn("dead", Cred::ForUser(1000, 1000));
    // A working directory that was removed: lookup_fast() finds nothing
    // in it.
    ASSERT_EQ(t_.m.Apply(dead_, Chdir{.path = "/a/gone"}).err(), 0);
    ASSERT_EQ(t_.m.Apply(t_.m.Init(), Rmdir{.path = "/a/gone"}).err(), 0);
  }

  // One walk as `as`: FilenameLookup() with `flags`, or with `parent`
  // FilenameParentat().
  WalkAnswer Walk(const char* as, const std::string& path, uint32_t flags, bool parent,
                  bool fast_search, bool plain_components) {
    Explainer ex;
    Engine& e = EngineOf(t_.m);
    const Process p = std::string_view(as) == "dead" ? dead_ : t_.Of(as);
    walk::WalkEnv env = e.WalkEnvFor(e.tasks().task(p.index), &ex);
    WalkAnswer a;
    env.stats = &a.stats;
    env.fast_search = fast_search;
    env.plain_components = plain_components;
    if (parent) {
      walk::ParentResult r;
      a.err = walk::FilenameParentat(env, walk::Start{}, path, flags, &r);
      if (a.err == 0) {
        a.pos = r.parent;
        a.last = std::string(r.last);
        a.type = r.type;
        a.trailing_slash = r.trailing_slash;
      }
    } else {
      a.err = walk::FilenameLookup(env, walk::Start{}, path, flags, &a.pos);
    }
    a.reason = ex.Line();
    return a;
  }

  // The tree with /a/gone (0777), and dead (1000:1000), whose working
  // directory it was.
  Tree t_{Model()};
  Process dead_;
};

TEST_F(WalkRulesTest, TheLoopTakesOnlyWhatTheGeneralCodeWouldJustMoveOnto) {
  const std::string kLongName = std::string(kLong) + "/file-with-a-long-name.txt";
  const std::string paths[] = {
      // Moved onto: plain names, short and long, in directories anyone
      // may search and in one that needs generic_permission() (/a/b).
      "/a/b/c/f", "/a/b/c", "a/b", kLongName, std::string(kLong) + "/", "/a/abcdefg/abcdefgh",
      // kSearchableByAll and the refusals: /a/b (0710) for "other",
      // /a/locked (0700).
      "/a/locked/f", "/a/locked", "/a/b/c/",
      // kNotMounted: a mountpoint in the middle and at the end.
      "/a/m/g", "/a/m", "/a/m/", "/a/m/../b",
      // kNotSymlink: a symlink in the middle, at the end (followed with
      // LOOKUP_FOLLOW only), with a trailing slash.
      "/a/link/f", "/a/link", "/a/link/", std::string(kLong) + "/flink",
      std::string(kLong) + "/flink/",
      // kIsDirectory: a file in the middle, at the end (a directory
      // required with LOOKUP_DIRECTORY), with a trailing slash.
      "/a/b/c/f/x", "/a/b/c/f/", kLongName + "/", kLongName + "/x",
      // Trailing and doubled slashes.
      "/a/b//c//f", "/a//", "a/b/c//", "//a/b",
      // NameAccepted(): ".", "..", and names around NAME_MAX.
      "/a/./b", "/a/b/.", "/a/b/..", "/a/..", "..", ".", "/a/" + std::string(255, 'n'),
      "/a/" + std::string(256, 'n'), "/a/" + std::string(256, 'n') + "/f",
      // kNotDeadDir: names in the removed working directory of "dead".
      "x", "x/y",
      // Misses.
      "/a/missing", "/a/missing/f", "/a/b/c/g"};
  const uint32_t flag_sets[] = {0, walk::kLookupFollow, walk::kLookupDirectory,
                                walk::kLookupFollow | walk::kLookupDirectory};
  for (const char* as : {"u", "other", "dead"}) {
    for (const bool fast : {true, false}) {
      for (const std::string& path : paths) {
        for (const bool parent : {false, true}) {
          for (const uint32_t flags : flag_sets) {
            const WalkAnswer loop = Walk(as, path, flags, parent, fast, true);
            const WalkAnswer general = Walk(as, path, flags, parent, fast, false);
            const std::string what = fmt::format("{} {} \"{}\" flags {} fast {}", as,
                                                 parent ? "parentat" : "lookup", path, flags, fast);
            EXPECT_EQ(loop.err, general.err) << what;
            EXPECT_EQ(loop.pos.mnt, general.pos.mnt) << what;
            EXPECT_EQ(loop.pos.dentry, general.pos.dentry) << what;
            EXPECT_EQ(loop.last, general.last) << what;
            EXPECT_EQ(loop.type, general.type) << what;
            EXPECT_EQ(loop.trailing_slash, general.trailing_slash) << what;
            EXPECT_EQ(loop.reason, general.reason) << what;
            EXPECT_EQ(loop.stats.components, general.stats.components) << what;
            EXPECT_EQ(loop.stats.fast_components, general.stats.fast_components) << what;
          }
        }
      }
    }
  }
}

TEST_F(WalkRulesTest, ARemovedDirectoryIsExplainedByTheRuleThatStoppedTheWalk) {
  for (const bool plain : {true, false}) {
    const WalkAnswer a = Walk("dead", "x", 0, false, true, plain);
    EXPECT_EQ(a.err, ENOENT);
    EXPECT_NE(a.reason.find("was removed"), std::string::npos) << a.reason;
  }
}

// The prefix memo (EngineOptions::prefix_memo, a session's evaluations):
// queries in a row, each against the same query on a model without it.

struct Asked {
  int err;
  std::string reason;
  EngineStats stats;
};

Asked AskOf(Model& m, Process p, const Request& r, bool memo) {
  Explainer ex;
  Asked a;
  const OpArgs args = ArgsOf(r);
  a.err = memo ? EngineOf(m).EvaluateWithPrefixMemo(p.index, args, &ex, &a.stats)
               : EngineOf(m).Evaluate(p.index, args, &ex, &a.stats);
  a.reason = ex.Line();
  return a;
}

const std::string kMemoPaths[] = {
    "/a/b/c/f", "/a/b/c/g", "/a/b/c/f/x", "/a/b/c/", "/a/b/c//f", "/a/b//c/f", "/a/b/c",
    "/a/abcdefg/abcdefgh/a-name-longer-than-sixteen-bytes/file-with-a-long-name.txt",
    "/a/abcdefg/abcdefgh/a-name-longer-than-sixteen-bytes/flink",
    "/a/abcdefg/abcdefgh/a-name-longer-than-sixteen-bytes/",
    "/a/abcdefg/abcdefgh/a-name-longer-than-sixteen-bytes/file-with-a-long-name.txt/",
    "/a/abcdefg/abcdefgh/missing", "/a/abcdefg/abcdefg", "/a/abcdefg", "/a/abcdefgh/x",
    "/a/locked/f", "/a/link/f", "/a/link", "/a/m/g", "/a/m/../b/c/f", "/a/./b/c/f", "//a/b/c/f",
    "/a", "/", "a/b/c/f", "/a/missing/f"};

Request Nth(int k, const std::string& path) {
  switch (k % 3) {
    case 0: return pathwarden::Stat{.path = path};
    case 1: return Open{.path = path};
    default: return ExecCheck{.path = path};
  }
}

TEST(PrefixMemo, AnswersReasonsAndCountsAsWithoutIt) {
  EngineOptions o;
  o.prefix_memo = true;
  Tree with(NewModel(o));
  Tree without(NewModel(EngineOptions{}));
  const uint64_t hits = walk::PrefixMemoStats().hits;
  // Every path after every other (the memo holds the one before), as each
  // process, by stat, open and exec_check.
  int k = 0;
  for (const char* as : {"u", "other"}) {
    for (const std::string& before : kMemoPaths) {
      for (const std::string& path : kMemoPaths) {
        for (const std::string* p : {&before, &path}) {
          const Request r = Nth(k++, *p);
          const Asked a = AskOf(with.m, with.Of(as), r, true);
          const Asked b = AskOf(without.m, without.Of(as), r, false);
          const std::string what = fmt::format("{} {} after {}", as, *p, before);
          EXPECT_EQ(a.err, b.err) << what;
          EXPECT_EQ(a.reason, b.reason) << what;
          EXPECT_EQ(a.stats.components, b.stats.components) << what;
          EXPECT_EQ(a.stats.fast_components, b.stats.fast_components) << what;
        }
      }
    }
  }
  // It was used, and skipped components.
  EXPECT_GT(walk::PrefixMemoStats().hits, hits + 1000);
}

TEST(PrefixMemo, AWriteBetweenQueriesIsSeen) {
  EngineOptions o;
  o.prefix_memo = true;
  Tree t(NewModel(o));
  Process root = t.m.Spawn("root", Cred::ForUser(0, 0));
  const std::string deep =
      "/a/abcdefg/abcdefgh/a-name-longer-than-sixteen-bytes/file-with-a-long-name.txt";
  EXPECT_EQ(t.m.Evaluate(t.other, pathwarden::Stat{.path = deep}).err(), 0);
  // No longer searchable by everyone: the memo's directories were found
  // by the fast search check, which no longer passes.
  ASSERT_TRUE(t.m.Apply(root, Chmod{.path = "/a/abcdefg/abcdefgh", .mode = 0700}).allowed());
  EXPECT_EQ(t.m.Evaluate(t.other, pathwarden::Stat{.path = deep}).err(), EACCES);
  EXPECT_EQ(t.m.Evaluate(root, pathwarden::Stat{.path = deep}).err(), 0);
  // Moved away, and another directory of that name made.
  ASSERT_TRUE(t.m.Apply(root, Chmod{.path = "/a/abcdefg/abcdefgh", .mode = 0755}).allowed());
  EXPECT_EQ(t.m.Evaluate(t.other, pathwarden::Stat{.path = deep}).err(), 0);
  ASSERT_TRUE(t.m.Apply(root, Rename{.oldpath = "/a/abcdefg", .newpath = "/a/moved"}).allowed());
  ASSERT_TRUE(t.m.Apply(root, Mkdir{.path = "/a/abcdefg"}).allowed());
  EXPECT_EQ(t.m.Evaluate(t.other, pathwarden::Stat{.path = deep}).err(), ENOENT);
  EXPECT_EQ(t.m.Evaluate(t.other, pathwarden::Stat{.path = "/a/moved" + deep.substr(10)}).err(),
            0);
}

TEST(PrefixMemo, NotOutsideAnEvaluationWithIt) {
  // The default evaluation neither reads nor records the memo.
  Tree t(NewModel(EngineOptions{}));
  const uint64_t hits = walk::PrefixMemoStats().hits;
  for (int k = 0; k < 3; ++k)
    EXPECT_EQ(t.m.Evaluate(t.u, pathwarden::Stat{.path = "/a/b/c/f"}).err(), 0);
  EXPECT_EQ(walk::PrefixMemoStats().hits, hits);
  EXPECT_EQ(walk::tls_prefix_memo_seq & 1, 1u);
}

}  // namespace
}  // namespace pathwarden
