#include "src/trace/learn.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/policy/policy.h"

namespace pathwarden::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace landlock;  // NOLINT: the right bits

constexpr AccessMask kR = kFsReadFile;
constexpr AccessMask kX = kFsExecute;
constexpr AccessMask kW = kFsWriteFile;
constexpr AccessMask kLs = kFsReadDir;

// A learner fed `needs`, each once.
Learner Fed(const std::vector<FsNeed>& needs) {
  Learner l;
  for (const FsNeed& n : needs) {
    auto r = l.AddFs(n);
    EXPECT_TRUE(r.has_value()) << n.path << ": " << r.error();
  }
  return l;
}

// Options (designated initializers omitting members warn in GCC 12).
LearnOptions Opts(int abi, std::string home = "/home/u", size_t threshold = 4,
                  std::vector<std::string> never_widen = {}) {
  LearnOptions o;
  o.abi = abi;
  o.home = std::move(home);
  o.sibling_threshold = threshold;
  o.never_widen = std::move(never_widen);
  return o;
}

LearntPolicy LearnOk(const Learner& l, const LearnOptions& o = Opts(kAbiLatest)) {
  auto p = l.Learn(o);
  EXPECT_TRUE(p.has_value()) << p.error();
  return p ? *p : LearntPolicy{};
}

// The learnt policy written and read back by our own landlockconfig reader.
policy::Policy ReadBack(const LearntPolicy& lp) {
  const std::string toml = ToToml(lp);
  auto p = policy::ParsePolicy(toml, "learnt.toml", false, "/");
  EXPECT_TRUE(p.has_value()) << p.error() << "\n" << toml;
  return p ? *p : policy::Policy{};
}

std::string Parent(const std::string& p) {
  const size_t slash = p.rfind('/');
  return slash == 0 ? std::string("/") : p.substr(0, slash);
}

// What a resolved policy grants on `path`: the rules on it and above
// (Landlock rights accumulate down the hierarchy).
AccessMask Granted(const policy::Policy& p, const std::string& path) {
  AccessMask m = 0;
  for (std::string at = path;; at = Parent(at)) {
    for (const policy::PathRule& r : p.paths)
      if (r.path == at) m |= r.access;
    if (at == "/") break;
  }
  return m;
}

const LearntRule* RuleOn(const LearntPolicy& p, const std::string& path) {
  for (const LearntRule& r : p.paths)
    if (r.path == path) return &r;
  return nullptr;
}

std::vector<std::string> RulePaths(const LearntPolicy& p) {
  std::vector<std::string> v;
  for (const LearntRule& r : p.paths) v.push_back(r.path);
  return v;
}

// The lines of the TOML entry on `path`: its comment and its rights.
std::string EntryOf(const std::string& toml, const std::string& quoted_path) {
  const size_t at = toml.find("parent = [" + quoted_path + "]");
  if (at == std::string::npos) return "";
  const size_t start = toml.rfind("\n\n", at);
  return toml.substr(start + 2, at - start - 2);
}

TEST(LearnAddFs, RefusesRelativeAndUnnormalisedPaths) {
  Learner l;
  for (const char* p : {"", "etc/passwd", ".", "/etc/", "/etc//passwd", "/etc/./passwd",
                        "/usr/../etc", "/usr/..", "//"}) {
    auto r = l.AddFs({p, kR, false});
    EXPECT_FALSE(r.has_value()) << p;
  }
  EXPECT_THAT(l.AddFs({"etc/passwd", kR, false}).error(), HasSubstr("not an absolute path"));
  EXPECT_THAT(l.AddFs({"/etc/", kR, false}).error(), HasSubstr("not a normalised path"));
  EXPECT_EQ(l.fs_calls(), 0u);
  auto p = LearnOk(l);
  EXPECT_TRUE(p.paths.empty());
}

TEST(LearnAddFs, RefusesWhatNoPolicyCouldSay) {
  Learner l;
  EXPECT_THAT(l.AddFs({std::string("/a\0b", 4), kR, false}).error(), HasSubstr("NUL"));
  EXPECT_THAT(l.AddFs({"/a\xff", kR, false}).error(), HasSubstr("not UTF-8"));
  EXPECT_THAT(l.AddFs({"/a\xc0\xaf", kR, false}).error(), HasSubstr("not UTF-8"));  // overlong
  EXPECT_THAT(l.AddFs({"/a\xed\xa0\x80", kR, false}).error(), HasSubstr("not UTF-8"));
  EXPECT_THAT(l.AddFs({"/a\xe2\x82", kR, false}).error(), HasSubstr("not UTF-8"));  // cut
  EXPECT_THAT(l.AddFs({"/a", 0, false}).error(), HasSubstr("no right"));
  EXPECT_THAT(l.AddFs({"/a", 1u << 16, true}).error(), HasSubstr("beyond"));
  // Directory rights go on directories: the tracer puts them on the
  // object for read_dir and on the parent for the others.
  EXPECT_THAT(l.AddFs({"/etc/passwd", kLs, false}).error(), HasSubstr("non-directory"));
  EXPECT_THAT(l.AddFs({"/tmp/x", kFsMakeReg, false}).error(), HasSubstr("non-directory"));
  EXPECT_FALSE(l.AddFs({"/tmp/x", kFsRefer | kR, false}).has_value());
  EXPECT_EQ(l.fs_calls(), 0u);
  EXPECT_TRUE(l.AddFs({"/caf\xc3\xa9", kR, false}).has_value());  // UTF-8 is fine
  EXPECT_TRUE(l.AddFs({"/", kFsMakeDir, true}).has_value());
  EXPECT_EQ(l.fs_calls(), 2u);
}

TEST(LearnAddNet, RefusesBadPortsAndRights) {
  Learner l;
  EXPECT_THAT(l.AddNet(65536, kNetBindTcp).error(), HasSubstr("above 65535"));
  EXPECT_FALSE(l.AddNet(80, 0).has_value());
  EXPECT_FALSE(l.AddNet(80, 1u << 2).has_value());
  EXPECT_TRUE(l.AddNet(65535, kNetConnectTcp).has_value());
  EXPECT_EQ(l.net_calls(), 1u);
}

TEST(LearnOptionsCheck, RefusesBadOptions) {
  Learner l;
  EXPECT_THAT(l.Learn(Opts(0)).error(), HasSubstr("ABI 0"));
  EXPECT_THAT(l.Learn(Opts(kAbiLatest + 1)).error(), HasSubstr("ABI 8"));
  EXPECT_THAT(l.Learn(Opts(kAbiLatest, "", 1)).error(), HasSubstr("threshold of 1"));
  EXPECT_THAT(l.Learn(Opts(kAbiLatest, "home/u")).error(), HasSubstr("home"));
  EXPECT_THAT(l.Learn(Opts(kAbiLatest, "/home/u/")).error(), HasSubstr("home"));
  EXPECT_THAT(l.Learn(Opts(kAbiLatest, "", 4, {"/srv/"})).error(), HasSubstr("never-widen"));
  EXPECT_TRUE(l.Learn(Opts(kAbiLatest, "/")).has_value());
}

// A right left unhandled is allowed everywhere: every right the ABI
// knows is handled, whatever the run needed.
TEST(LearnHandled, EveryRightOfTheKernelsAbi) {
  Learner l;
  ASSERT_TRUE(l.AddFs({"/etc/passwd", kR, false}).has_value());
  for (int abi = 1; abi <= kAbiLatest; ++abi) {
    SCOPED_TRACE(abi);
    const LearntPolicy lp = LearnOk(l, Opts(abi));
    const std::string toml = ToToml(lp);
    EXPECT_THAT(toml, HasSubstr("handled_access_fs = [\"abi.all\"]"));
    EXPECT_THAT(toml, HasSubstr(fmt::format("\nabi = {}\n", abi)));
    const policy::Policy p = ReadBack(lp);
    EXPECT_EQ(p.abi, abi);
    EXPECT_EQ(p.handled_fs, RightsForAbi(abi).fs);
    EXPECT_EQ(p.handled_net, RightsForAbi(abi).net);
    EXPECT_EQ(p.scoped, RightsForAbi(abi).scoped);
    EXPECT_EQ(toml.find("handled_access_net") != std::string::npos, abi >= 4);
    EXPECT_EQ(toml.find("scoped =") != std::string::npos, abi >= 6);
  }
}

TEST(LearnHandled, AnEmptyRunStillHandlesEverything) {
  const LearntPolicy lp = LearnOk(Learner{}, Opts(6));
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(p.handled_fs, RightsForAbi(6).fs);
  EXPECT_EQ(p.handled_net, kNetAll);
  EXPECT_EQ(p.scoped, kScopeAll);
  EXPECT_TRUE(p.paths.empty());
  EXPECT_TRUE(p.ports.empty());
}

// `ls /etc` needs read_dir on /etc itself: a rule on /etc, never on /.
TEST(LearnPaths, ReadDirOnEtcIsARuleOnEtc) {
  const LearntPolicy lp = LearnOk(Fed({{"/etc", kLs, true}}));
  ASSERT_EQ(lp.paths.size(), 1u);
  EXPECT_EQ(lp.paths[0].path, "/etc");
  EXPECT_EQ(lp.paths[0].access, kLs);
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/"), 0u);
  EXPECT_EQ(Granted(p, "/etc"), kLs);
}

// sandlock #209: a failed mkdir learnt as a write grant on /. The tracer
// feeds successful calls only; a real creation on / stays exactly what it
// needed, and nothing is ever widened to /.
TEST(LearnPaths, RootOnlyWhenANeedIsLiterallyOnIt) {
  const LearntPolicy lp = LearnOk(Fed({{"/", kFsMakeDir, true}}));
  ASSERT_EQ(lp.paths.size(), 1u);
  EXPECT_EQ(lp.paths[0].path, "/");
  EXPECT_EQ(lp.paths[0].access, kFsMakeDir);
  const policy::Policy p = ReadBack(lp);
  ASSERT_EQ(p.paths.size(), 1u);
  EXPECT_EQ(p.paths[0].access, kFsMakeDir);

  // Five top-level directories each read beneath: no rule on /.
  std::vector<FsNeed> needs;
  for (const char* d : {"/bin", "/lib", "/opt", "/srv", "/usr"})
    needs.push_back({std::string(d) + "/f", kR, false});
  const LearntPolicy wide = LearnOk(Fed(needs));
  EXPECT_EQ(RuleOn(wide, "/"), nullptr);
  EXPECT_EQ(wide.paths.size(), 5u);
  EXPECT_THAT(ToToml(wide), Not(HasSubstr("parent = [\"/\"]")));
}

// Execs are needs like any other: execute (and read_file, as the tracer
// reports them) on the file itself.
TEST(LearnPaths, ExecIsARuleOnTheFile) {
  const LearntPolicy lp =
      LearnOk(Fed({{"/usr/bin/ls", kX | kR, false},
                   {"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", kX | kR, false}}));
  ASSERT_NE(RuleOn(lp, "/usr/bin/ls"), nullptr);
  EXPECT_EQ(RuleOn(lp, "/usr/bin/ls")->access, kX | kR);
  EXPECT_FALSE(RuleOn(lp, "/usr/bin/ls")->directory);
  const std::string toml = ToToml(lp);
  EXPECT_THAT(EntryOf(toml, "\"/usr/bin/ls\""),
              HasSubstr("allowed_access = [\"execute\", \"read_file\"]"));
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/usr/bin/ls"), kX | kR);
  EXPECT_EQ(Granted(p, "/usr/bin/cat"), 0u);
  EXPECT_EQ(Granted(p, "/usr/bin"), 0u);
}

// Creations, removals and renames need rights on the parent directory
// (the tracer says so); they stay on that directory and are not widened
// to its parent.
TEST(LearnPaths, CreationsStayOnTheirDirectory) {
  const LearntPolicy lp = LearnOk(Fed({{"/tmp/work", kFsMakeReg | kFsRemoveFile, true},
                                       {"/tmp/work/out", kW | kFsTruncate, false}}));
  ASSERT_EQ(lp.paths.size(), 2u);
  EXPECT_EQ(RuleOn(lp, "/tmp/work")->access, kFsMakeReg | kFsRemoveFile);
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/tmp"), 0u);
  EXPECT_EQ(Granted(p, "/tmp/work/other") & (kW | kFsTruncate), 0u);
  EXPECT_EQ(Granted(p, "/tmp/work/out"), kFsMakeReg | kFsRemoveFile | kW | kFsTruncate);
}

// sandlock #209: a rule on /proc/self/maps pins one process's inode, so
// its children are denied. Per-process entries become a rule on /proc.
TEST(LearnProc, PerProcessEntriesMapToProc) {
  Learner l = Fed({{"/proc/1234/maps", kR, false},
                   {"/proc/self/status", kR, false},
                   {"/proc/thread-self/comm", kR | kW, false},
                   {"/proc/1234/task/1235/stat", kR, false},
                   {"/proc/self/fd", kLs, true},
                   {"/proc/self", kR, true},
                   {"/proc/cpuinfo", kR, false},
                   {"/proc/12ab/x", kR, false},
                   {"/proc/selfish", kR, false}});
  const LearntPolicy lp = LearnOk(l, Opts(kAbiLatest, "/home/u", 0));
  const LearntRule* proc = RuleOn(lp, "/proc");
  ASSERT_NE(proc, nullptr);
  EXPECT_TRUE(proc->directory);
  EXPECT_EQ(proc->access, kR | kW | kLs);
  EXPECT_EQ(proc->proc_calls, 6u);
  // /proc/cpuinfo, /proc/12ab/x and /proc/selfish are not one process's:
  // not mapped, but their read_file is granted by /proc's rule now.
  EXPECT_EQ(proc->calls, 9u);
  EXPECT_THAT(RulePaths(lp), ElementsAre("/proc"));
  for (const LearntRule& r : lp.paths) EXPECT_EQ(r.path.find("/proc/"), std::string::npos);
  EXPECT_THAT(EntryOf(ToToml(lp), "\"/proc\""),
              HasSubstr("# 9 calls; 6 on /proc/<pid>/..., /proc/self/... or "
                        "/proc/thread-self/..., mapped to /proc"));
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/proc/4321/maps"), kR | kW | kLs);  // a child's own entry
}

TEST(LearnProc, OtherProcEntriesStayExact) {
  const LearntPolicy lp =
      LearnOk(Fed({{"/proc/cpuinfo", kR, false}, {"/proc/sys/kernel/ngroups_max", kR, false}}));
  EXPECT_THAT(RulePaths(lp), ElementsAre("/proc/cpuinfo", "/proc/sys/kernel/ngroups_max"));
  EXPECT_EQ(RuleOn(lp, "/proc/cpuinfo")->proc_calls, 0u);
}

std::vector<FsNeed> Files(const std::string& dir, int n, AccessMask m, int first = 0) {
  std::vector<FsNeed> v;
  for (int i = first; i < first + n; ++i) v.push_back({fmt::format("{}/f{}", dir, i), m, false});
  return v;
}

TEST(LearnCompression, BelowTheThresholdRulesStayPerFile) {
  const LearntPolicy lp = LearnOk(Fed(Files("/usr/lib", 3, kR)));
  EXPECT_THAT(RulePaths(lp), ElementsAre("/usr/lib/f0", "/usr/lib/f1", "/usr/lib/f2"));
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/usr/lib/f3"), 0u);
  EXPECT_EQ(Granted(p, "/usr/lib"), 0u);
}

TEST(LearnCompression, AtTheThresholdTheDirectoryTakesTheRight) {
  const LearntPolicy lp = LearnOk(Fed(Files("/usr/lib", 4, kR)));
  ASSERT_THAT(RulePaths(lp), ElementsAre("/usr/lib"));
  const LearntRule& r = lp.paths[0];
  EXPECT_TRUE(r.directory);
  EXPECT_EQ(r.access, kR);
  EXPECT_EQ(r.widened, kR);
  EXPECT_EQ(r.widened_entries, 4u);
  EXPECT_EQ(r.calls, 4u);
  EXPECT_THAT(EntryOf(ToToml(lp), "\"/usr/lib\""),
              HasSubstr("# 4 calls; widened to this directory: read_file needed beneath 4 of "
                        "its entries\n"));
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/usr/lib/never-used"), kR);  // what compression means
  EXPECT_EQ(Granted(p, "/usr"), 0u);
  EXPECT_EQ(Granted(p, "/usr/share/x"), 0u);
}

TEST(LearnCompression, TheThresholdIsAnOption) {
  const Learner l = Fed(Files("/usr/lib", 4, kR));
  EXPECT_EQ(LearnOk(l, Opts(kAbiLatest, "/home/u", 5)).paths.size(), 4u);
  EXPECT_EQ(LearnOk(l, Opts(kAbiLatest, "/home/u", 0)).paths.size(), 4u);
  EXPECT_EQ(LearnOk(l, Opts(kAbiLatest, "/home/u", 2)).paths.size(), 1u);
}

// Each right is counted on its own: four readers widen read_file, the one
// writer keeps its write_file on its own file.
TEST(LearnCompression, PerRight) {
  std::vector<FsNeed> needs = Files("/srv/data", 4, kR);
  needs.push_back({"/srv/data/f0", kR | kW, false});
  const LearntPolicy lp = LearnOk(Fed(needs));
  EXPECT_THAT(RulePaths(lp), ElementsAre("/srv/data", "/srv/data/f0"));
  EXPECT_EQ(RuleOn(lp, "/srv/data")->access, kR);
  EXPECT_EQ(RuleOn(lp, "/srv/data/f0")->access, kW);  // read_file is the directory's
  EXPECT_EQ(RuleOn(lp, "/srv/data/f0")->calls, 1u);
  EXPECT_EQ(RuleOn(lp, "/srv/data")->calls, 5u);
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/srv/data/f0"), kR | kW);
  EXPECT_EQ(Granted(p, "/srv/data/f1"), kR);
  EXPECT_EQ(Granted(p, "/srv/data/f9") & kW, 0u);
}

// Entries count whole subtrees: four locales' catalogues widen to the
// locale directory, not to each LC_MESSAGES.
TEST(LearnCompression, SiblingsAreSubtrees) {
  std::vector<FsNeed> needs;
  for (const char* lang : {"de", "es", "fr", "it"})
    needs.push_back({fmt::format("/usr/share/locale/{}/LC_MESSAGES/x.mo", lang), kR, false});
  const LearntPolicy lp = LearnOk(Fed(needs));
  EXPECT_THAT(RulePaths(lp), ElementsAre("/usr/share/locale"));
  EXPECT_EQ(lp.paths[0].calls, 4u);
}

// Compressed directories count as one entry of their parent: three
// compressed siblings and a file do widen once more, at the threshold.
TEST(LearnCompression, Cascades) {
  std::vector<FsNeed> needs;
  for (const char* d : {"a", "b", "c"})
    for (const FsNeed& n : Files(fmt::format("/opt/app/{}", d), 4, kR)) needs.push_back(n);
  const LearntPolicy three = LearnOk(Fed(needs));
  EXPECT_THAT(RulePaths(three), ElementsAre("/opt/app/a", "/opt/app/b", "/opt/app/c"));
  needs.push_back({"/opt/app/VERSION", kR, false});
  const LearntPolicy four = LearnOk(Fed(needs));
  EXPECT_THAT(RulePaths(four), ElementsAre("/opt/app"));
  EXPECT_EQ(four.paths[0].widened_entries, 4u);
  EXPECT_EQ(four.paths[0].calls, 13u);
}

// Never widened to /, $HOME or credential directories, nor beneath or
// above one: their needs stay exact.
TEST(LearnNeverWiden, HomeAndCredentials) {
  struct Case {
    std::string dir;
    bool widened;
  };
  for (const Case& c : std::vector<Case>{
           {"/home/u", false},            // $HOME
           {"/home/u/.ssh", false},       // credentials
           {"/home/u/.ssh/keys", false},  // beneath credentials
           {"/home/u/.gnupg", false},
           {"/etc/ssl/private", false},
           {"/etc", false},  // above /etc/ssl/private
           {"/etc/ssl", false},
           {"/srv/vault", false},  // never_widen option
           {"/srv/vault/x", false},
           {"/home/u/.cache/app", true},  // beneath $HOME is fine
           {"/etc/ssl/certs", true},      // beside credentials is fine
           {"/etc/fonts", true},
       }) {
    SCOPED_TRACE(c.dir);
    const LearntPolicy lp =
        LearnOk(Fed(Files(c.dir, 5, kR)), Opts(kAbiLatest, "/home/u", 4, {"/srv/vault"}));
    EXPECT_EQ(RuleOn(lp, c.dir) != nullptr, c.widened);
    EXPECT_EQ(lp.paths.size(), c.widened ? 1u : 5u);
    const policy::Policy p = ReadBack(lp);
    EXPECT_EQ(Granted(p, c.dir + "/unused") != 0, c.widened);
  }
}

TEST(LearnNeverWiden, NotAboveHome) {
  // Five users' files: /home would cover $HOME.
  std::vector<FsNeed> needs;
  for (const char* u : {"a", "b", "c", "d"})
    needs.push_back({fmt::format("/home/{}/f", u), kR, false});
  needs.push_back({"/home/u/f", kR, false});
  const LearntPolicy lp = LearnOk(Fed(needs), Opts(kAbiLatest, "/home/u"));
  EXPECT_EQ(RuleOn(lp, "/home"), nullptr);
  EXPECT_EQ(lp.paths.size(), 5u);
  // Without a $HOME, /home is a directory like another.
  const LearntPolicy no_home = LearnOk(Fed(needs), {});
  EXPECT_THAT(RulePaths(no_home), ElementsAre("/home"));
}

// A need literally on a protected directory is kept, exactly.
TEST(LearnNeverWiden, ANeedOnOneIsKeptExact) {
  std::vector<FsNeed> needs = Files("/home/u", 5, kR);
  needs.push_back({"/home/u", kLs, true});
  const LearntPolicy lp = LearnOk(Fed(needs), Opts(kAbiLatest, "/home/u"));
  ASSERT_NE(RuleOn(lp, "/home/u"), nullptr);
  EXPECT_EQ(RuleOn(lp, "/home/u")->access, kLs);
  EXPECT_EQ(RuleOn(lp, "/home/u")->widened, 0u);
  EXPECT_EQ(lp.paths.size(), 6u);
}

// Landlock rights accumulate down the hierarchy: what an ancestor's rule
// grants is dropped from the rules beneath it, and a rule left with
// nothing is dropped.
TEST(LearnRedundancy, RulesCoveredByAParentAreDropped) {
  const LearntPolicy lp = LearnOk(Fed({{"/usr", kX | kR | kLs, true},
                                       {"/usr/bin/ls", kX | kR, false},
                                       {"/usr/lib/libc.so.6", kR | kW, false},
                                       {"/usr/share", kLs | kFsMakeReg, true}}));
  EXPECT_THAT(RulePaths(lp), ElementsAre("/usr", "/usr/lib/libc.so.6", "/usr/share"));
  EXPECT_EQ(RuleOn(lp, "/usr/lib/libc.so.6")->access, kW);
  EXPECT_EQ(RuleOn(lp, "/usr/share")->access, kFsMakeReg);
  EXPECT_EQ(RuleOn(lp, "/usr")->calls, 4u);  // every need's read is /usr's
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/usr/bin/ls"), kX | kR | kLs);
  EXPECT_EQ(Granted(p, "/usr/lib/libc.so.6"), kX | kR | kLs | kW);
}

// Rights per path, abi.* groups where they fit: abi.all, abi.read_write,
// abi.read_execute plus names, on directories only (each group holds
// directory rights, which a rule on a file loses).
TEST(LearnGroups, UsedWhereTheyFit) {
  const AccessMask all5 = RightsForAbi(5).fs;
  const AccessMask rx = kX | kR | kLs | kFsRefer;
  EXPECT_THAT(FsRightNames(all5, true, 5), ElementsAre("abi.all"));
  EXPECT_THAT(FsRightNames(all5 & ~kX, true, 5), ElementsAre("abi.read_write"));
  EXPECT_THAT(FsRightNames(rx | kFsMakeReg, true, 5), ElementsAre("abi.read_execute", "make_reg"));
  EXPECT_THAT(FsRightNames(kX | kR | kLs, true, 5),  // no refer: not the group at ABI 2+
              ElementsAre("execute", "read_file", "read_dir"));
  EXPECT_THAT(FsRightNames(kX | kR | kLs, true, 1), ElementsAre("abi.read_execute"));
  EXPECT_THAT(FsRightNames(RightsForAbi(1).fs, true, 1), ElementsAre("abi.all"));
  EXPECT_THAT(FsRightNames(RightsForAbi(2).fs, true, 3),  // ABI 3's groups hold truncate
              ElementsAreArray(std::vector<std::string>{
                  "abi.read_execute", "write_file", "remove_dir", "remove_file", "make_char",
                  "make_dir", "make_reg", "make_sock", "make_fifo", "make_block", "make_sym"}));
  EXPECT_THAT(FsRightNames(kX | kR | kW | kFsTruncate, false, 5),
              ElementsAre("execute", "write_file", "read_file", "truncate"));

  // And they read back to the same rights.
  const LearntPolicy lp = LearnOk(Fed({{"/a", all5, true},
                                       {"/b", all5 & ~kX, true},
                                       {"/c", rx | kFsMakeReg, true},
                                       {"/d", kX | kR, false}}),
                                  Opts(5));
  const std::string toml = ToToml(lp);
  EXPECT_THAT(EntryOf(toml, "\"/a\""), HasSubstr("allowed_access = [\"abi.all\"]"));
  EXPECT_THAT(EntryOf(toml, "\"/b\""), HasSubstr("allowed_access = [\"abi.read_write\"]"));
  EXPECT_THAT(EntryOf(toml, "\"/c\""),
              HasSubstr("allowed_access = [\"abi.read_execute\", \"make_reg\"]"));
  const policy::Policy p = ReadBack(lp);
  EXPECT_EQ(Granted(p, "/a"), all5);
  EXPECT_EQ(Granted(p, "/b"), all5 & ~kX);
  EXPECT_EQ(Granted(p, "/c"), rx | kFsMakeReg);
  EXPECT_EQ(Granted(p, "/d"), kX | kR);
}

// A rule on a non-directory keeps only file rights; directory rights are
// only ever on directories.
TEST(LearnGroups, FileRulesHoldOnlyFileRights) {
  std::vector<FsNeed> needs = Files("/etc", 6, kR | kW);
  needs.push_back({"/etc/sub", kLs | kFsMakeReg, true});
  const LearntPolicy lp = LearnOk(Fed(needs));
  for (const LearntRule& r : lp.paths) {
    if (!r.directory) {
      EXPECT_EQ(r.access & ~kFsFileRights, 0u) << r.path;
    }
  }
  EXPECT_TRUE(RuleOn(lp, "/etc/sub")->directory);
}

TEST(LearnComments, CountCallsPerRule) {
  Learner l;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(l.AddFs({"/etc/passwd", kR, false}).has_value());
  ASSERT_TRUE(l.AddFs({"/etc/group", kR, false}).has_value());
  ASSERT_TRUE(l.AddNet(443, kNetConnectTcp).has_value());
  ASSERT_TRUE(l.AddNet(443, kNetConnectTcp).has_value());
  EXPECT_EQ(l.fs_calls(), 4u);
  const LearntPolicy lp = LearnOk(l);
  EXPECT_EQ(RuleOn(lp, "/etc/passwd")->calls, 3u);
  const std::string toml = ToToml(lp);
  EXPECT_EQ(EntryOf(toml, "\"/etc/passwd\""),
            "# 3 calls\n[[path_beneath]]\nallowed_access = [\"read_file\"]\n");
  EXPECT_EQ(EntryOf(toml, "\"/etc/group\""),
            "# 1 call\n[[path_beneath]]\nallowed_access = [\"read_file\"]\n");
  EXPECT_THAT(toml, HasSubstr("\n# 2 calls\n[[net_port]]\nallowed_access = [\"connect_tcp\"]\n"
                              "port = [443]\n"));
}

TEST(LearnNet, OneEntryPerPort) {
  Learner l;
  ASSERT_TRUE(l.AddNet(443, kNetConnectTcp).has_value());
  ASSERT_TRUE(l.AddNet(443, kNetConnectTcp).has_value());
  ASSERT_TRUE(l.AddNet(8080, kNetBindTcp).has_value());
  ASSERT_TRUE(l.AddNet(443, kNetBindTcp).has_value());
  ASSERT_TRUE(l.AddNet(53, kNetConnectTcp).has_value());
  const LearntPolicy lp = LearnOk(l, Opts(4));
  ASSERT_EQ(lp.ports.size(), 3u);
  EXPECT_EQ(lp.ports[0].port, 53u);
  EXPECT_EQ(lp.ports[1].port, 443u);
  EXPECT_EQ(lp.ports[1].access, kNetAll);
  EXPECT_EQ(lp.ports[1].calls, 3u);
  const std::string toml = ToToml(lp);
  EXPECT_THAT(toml, HasSubstr("allowed_access = [\"abi.all\"]\nport = [443]\n"));
  EXPECT_THAT(toml, HasSubstr("allowed_access = [\"bind_tcp\"]\nport = [8080]\n"));
  const policy::Policy p = ReadBack(lp);
  ASSERT_EQ(p.ports.size(), 3u);
  EXPECT_EQ(p.ports[0].access, kNetConnectTcp);
  EXPECT_EQ(p.ports[1].access, kNetAll);
  EXPECT_EQ(p.ports[2].port, 8080u);
  EXPECT_EQ(p.ports[2].access, kNetBindTcp);
}

TEST(LearnNet, BeforeAbi4PortsCannotBeRestricted) {
  Learner l;
  ASSERT_TRUE(l.AddNet(443, kNetConnectTcp).has_value());
  const LearntPolicy lp = LearnOk(l, Opts(3));
  EXPECT_TRUE(lp.ports.empty());
  EXPECT_EQ(lp.handled_net, 0u);
  ASSERT_EQ(lp.notes.size(), 1u);
  EXPECT_THAT(lp.notes[0], HasSubstr("1 call needed TCP ports, which ABI 3 cannot restrict"));
  EXPECT_THAT(ToToml(lp), HasSubstr("\n# " + lp.notes[0] + ".\n"));
  EXPECT_TRUE(ReadBack(lp).ports.empty());
}

TEST(LearnScopes, WhatTheRunNeededIsNotScoped) {
  Learner l;
  l.NeedUnscoped(kScopeSignal);
  const LearntPolicy lp = LearnOk(l, Opts(6));
  EXPECT_EQ(lp.scoped, kScopeAbstractUnixSocket);
  EXPECT_THAT(ToToml(lp), HasSubstr("scoped = [\"abstract_unix_socket\"]\n"));
  EXPECT_EQ(ReadBack(lp).scoped, kScopeAbstractUnixSocket);
  ASSERT_EQ(lp.notes.size(), 1u);
  EXPECT_THAT(lp.notes[0], HasSubstr("not scoped (signal)"));

  l.NeedUnscoped(kScopeAbstractUnixSocket | (1u << 5));
  const LearntPolicy none = LearnOk(l, Opts(7));
  EXPECT_EQ(none.scoped, 0u);
  EXPECT_THAT(ToToml(none), Not(HasSubstr("scoped =")));
  EXPECT_EQ(ReadBack(none).scoped, 0u);
}

// Rights the kernel's ABI lacks cannot be restricted: dropped, noted.
TEST(LearnAbi, RightsTheAbiLacksAreDropped) {
  const Learner l = Fed({{"/var/log/app.log", kW | kFsTruncate, false},
                         {"/dev/tty", kFsIoctlDev, false},
                         {"/srv/in", kFsRefer, true}});
  const LearntPolicy lp = LearnOk(l, Opts(1));
  EXPECT_THAT(RulePaths(lp), ElementsAre("/var/log/app.log"));
  EXPECT_EQ(lp.paths[0].access, kW);
  ASSERT_EQ(lp.notes.size(), 1u);
  EXPECT_EQ(lp.notes[0],
            "3 calls needed rights (refer, truncate, ioctl_dev), which ABI 1 cannot restrict: "
            "allowed everywhere");
  const LearntPolicy v5 = LearnOk(l, Opts(5));
  EXPECT_EQ(v5.paths.size(), 3u);
  EXPECT_TRUE(v5.notes.empty());
}

// landlockconfig paths are TOML strings and templates: quotes,
// backslashes and control characters escaped, '$' written "$$".
TEST(LearnToml, PathsAreEscaped) {
  const std::vector<std::string> odd = {"/tmp/a \"quoted\" name",
                                        "/tmp/back\\slash",
                                        "/tmp/new\nline",
                                        "/tmp/tab\there",
                                        "/tmp/$HOME",
                                        "/tmp/${HOME}",
                                        "/tmp/$$",
                                        "/tmp/caf\xc3\xa9",
                                        "/tmp/del\x7f",
                                        "/tmp/#not-a-comment"};
  std::vector<FsNeed> needs;
  for (const std::string& p : odd) needs.push_back({p, kR, false});
  const LearntPolicy lp = LearnOk(Fed(needs), Opts(kAbiLatest, "/home/u", 0));
  const std::string toml = ToToml(lp);
  EXPECT_THAT(toml, HasSubstr("parent = [\"/tmp/$$HOME\"]"));
  EXPECT_THAT(toml, HasSubstr("parent = [\"/tmp/$${HOME}\"]"));
  EXPECT_THAT(toml, HasSubstr("parent = [\"/tmp/$$$$\"]"));
  EXPECT_THAT(toml, HasSubstr("parent = [\"/tmp/new\\nline\"]"));
  const policy::Policy p = ReadBack(lp);
  std::vector<std::string> got;
  for (const policy::PathRule& r : p.paths) got.push_back(r.path);
  std::vector<std::string> want = odd;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

// A realistic run, read back: every need is granted by a rule on its
// path or above, and paths nobody needed get nothing but what
// compression gave their directory.
TEST(LearnReadBack, GrantsEveryNeedAndNoMore) {
  std::vector<FsNeed> needs = {
      {"/usr/bin/sh", kX | kR, false},
      {"/usr/bin/ls", kX | kR, false},
      {"/etc", kLs, true},
      {"/etc/passwd", kR, false},
      {"/etc/nsswitch.conf", kR, false},
      {"/etc/ld.so.cache", kR, false},
      {"/etc/localtime", kR, false},
      {"/etc/ssl/certs/ca-certificates.crt", kR, false},
      {"/home/u/.bashrc", kR, false},
      {"/home/u/.ssh/known_hosts", kR | kW, false},
      {"/home/u/project", kFsMakeReg | kFsRemoveFile | kFsRefer, true},
      {"/home/u/project/out.txt", kW | kFsTruncate, false},
      {"/proc/self/maps", kR, false},
      {"/proc/777/stat", kR, false},
      {"/dev/null", kR | kW, false},
      {"/dev/tty", kR | kW | kFsIoctlDev, false},
      {"/", kLs, true},
  };
  for (const FsNeed& n : Files("/usr/lib/x86_64-linux-gnu", 7, kX | kR)) needs.push_back(n);
  Learner l = Fed(needs);
  ASSERT_TRUE(l.AddNet(443, kNetConnectTcp).has_value());
  const LearntPolicy lp = LearnOk(l, Opts(6));
  const policy::Policy p = ReadBack(lp);

  for (const FsNeed& n : needs) {
    const std::string at = n.path.starts_with("/proc/") ? "/proc" : n.path;
    EXPECT_EQ(Granted(p, at) & n.access, n.access) << n.path;
  }
  ASSERT_EQ(p.paths.size(), lp.paths.size());
  for (size_t i = 0; i < p.paths.size(); ++i) {
    EXPECT_EQ(p.paths[i].path, lp.paths[i].path);
    EXPECT_EQ(p.paths[i].access, lp.paths[i].access) << p.paths[i].path;
  }
  EXPECT_TRUE(lp.notes.empty());
  // No more than it must.
  EXPECT_EQ(Granted(p, "/"), kLs);
  EXPECT_EQ(Granted(p, "/etc/shadow"), kLs);  // /etc's read_dir, not its files
  EXPECT_EQ(Granted(p, "/etc/ssl/private/key.pem"), kLs);
  EXPECT_EQ(Granted(p, "/home/u/.ssh/id_ed25519"), kLs);
  EXPECT_EQ(Granted(p, "/home/u/.profile"), kLs);
  EXPECT_EQ(Granted(p, "/usr/bin/sudo"), kLs);
  EXPECT_EQ(Granted(p, "/usr/lib/x86_64-linux-gnu/libunused.so"), kLs | kX | kR);  // compressed
  EXPECT_EQ(Granted(p, "/usr/lib/python3/x"), kLs);
  EXPECT_EQ(Granted(p, "/home/u/project/other.txt"), kLs | kFsMakeReg | kFsRemoveFile | kFsRefer);
  EXPECT_EQ(Granted(p, "/dev/sda"), kLs);
  EXPECT_EQ(RuleOn(lp, "/dev"), nullptr);
  ASSERT_EQ(p.ports.size(), 1u);
  EXPECT_EQ(p.ports[0].port, 443u);
  EXPECT_EQ(p.ports[0].access, kNetConnectTcp);
  // Each need's rights counted once: the rules' calls add up to at least
  // the calls (a need split over two rules counts in both).
  uint64_t calls = 0;
  for (const LearntRule& r : lp.paths) calls += r.calls;
  EXPECT_GE(calls, needs.size());
}

TEST(LearnToml, DeterministicWhateverTheOrder) {
  std::vector<FsNeed> needs = Files("/usr/lib", 5, kR);
  needs.push_back({"/etc/hosts", kR, false});
  needs.push_back({"/tmp", kFsMakeReg, true});
  needs.push_back({"/proc/self/maps", kR, false});
  Learner a = Fed(needs);
  std::reverse(needs.begin(), needs.end());
  Learner b = Fed(needs);
  ASSERT_TRUE(a.AddNet(80, kNetConnectTcp).has_value());
  ASSERT_TRUE(a.AddNet(22, kNetConnectTcp).has_value());
  ASSERT_TRUE(b.AddNet(22, kNetConnectTcp).has_value());
  ASSERT_TRUE(b.AddNet(80, kNetConnectTcp).has_value());
  const std::string ta = ToToml(LearnOk(a));
  EXPECT_EQ(ta, ToToml(LearnOk(b)));
  EXPECT_EQ(ta, ToToml(LearnOk(a)));  // Learn() keeps the needs
  const size_t etc = ta.find("\"/etc/hosts\""), proc = ta.find("\"/proc\"");
  const size_t tmp = ta.find("\"/tmp\""), lib = ta.find("\"/usr/lib\"");
  EXPECT_LT(etc, proc);
  EXPECT_LT(proc, tmp);
  EXPECT_LT(tmp, lib);
  EXPECT_LT(ta.find("port = [22]"), ta.find("port = [80]"));
}

}  // namespace
}  // namespace pathwarden::trace
