// The scratch directory of `explain --verify --scratch`: put back exactly
// after a change (modes, owners, ACLs, xattrs, times, renames by inode,
// names made and removed), also when the process changing it is killed
// at the worst moment — SIGKILL, or Ctrl-C (SIGINT to its process group)
// while the kernel's child holds its change, or after the change — by
// its guardian; and, when the guardian is killed too, by the next run from
// the journal. Root only (owners, O_NOATIME on others' files); skipped
// elsewhere.

#include "src/query/scratch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "src/identity/identity.h"
#include "src/kernel/kernel_session.h"
#include "src/query/explain.h"
#include "src/query/listing_test_util.h"
#include "src/query/query.h"

namespace pathwarden::query {
namespace {

// POSIX ACL entries as the system.posix_acl_* xattrs hold them
// (include/uapi/linux/posix_acl_xattr.h), sorted by tag and id.
struct AclEntry {
  uint16_t tag;
  uint16_t perm;
  uint32_t id = ~0u;
};
constexpr uint16_t kUserObj = 0x01, kUser = 0x02, kGroupObj = 0x04, kGroup = 0x08,
                   kMask = 0x10, kOther = 0x20;

std::string Acl(std::initializer_list<AclEntry> entries) {
  std::string out("\x02\0\0\0", 4);
  for (const AclEntry& e : entries) out.append(reinterpret_cast<const char*>(&e), sizeof e);
  return out;
}

bool Write(const std::string& path, std::string_view text, mode_t mode, uid_t uid, gid_t gid) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok && chown(path.c_str(), uid, gid) == 0 && chmod(path.c_str(), mode) == 0;
}

bool Dir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
  return mkdir(path.c_str(), 0700) == 0 && chown(path.c_str(), uid, gid) == 0 &&
         chmod(path.c_str(), mode) == 0;
}

// The tree every test starts from:
//
//   a/ 0755 1000:1000        f "one" 0640 1000:1000 (user.x), x 04755, hard2
//   b/ 02775 0:2000          g "two" 0664 0:2000
//   sticky/ 01777            f 0666 1001:1001
//   acl/ 0770 (u:1001:rwx, default u:1001:rwx g:2000:r-x)   f 0640 (u:1000:rw-)
//   empty/ 0755              hard1 (the same inode as a/hard2), l -> a/f, fifo
//
// each with its own access and modification time, set last.
bool BuildTree(const std::string& r) {
  bool ok = Dir(r + "/a", 0755, 1000, 1000) && Write(r + "/a/f", "one", 0640, 1000, 1000) &&
            Write(r + "/a/x", "#!/bin/sh\n", 04755, 1000, 1000) &&
            Dir(r + "/b", 02775, 0, 2000) && Write(r + "/b/g", "two", 0664, 0, 2000) &&
            Dir(r + "/sticky", 01777, 0, 0) && Write(r + "/sticky/f", "s", 0666, 1001, 1001) &&
            Dir(r + "/acl", 0770, 0, 0) && Write(r + "/acl/f", "acl", 0640, 0, 0) &&
            Dir(r + "/empty", 0755, 0, 0) && Write(r + "/hard1", "shared", 0644, 0, 0) &&
            link((r + "/hard1").c_str(), (r + "/a/hard2").c_str()) == 0 &&
            symlink("a/f", (r + "/l").c_str()) == 0 && mkfifo((r + "/fifo").c_str(), 0620) == 0;
  const std::string dir_acl = Acl({{kUserObj, 7}, {kUser, 7, 1001}, {kGroupObj, 7}, {kMask, 7},
                                   {kOther, 0}});
  const std::string def_acl = Acl({{kUserObj, 7}, {kUser, 7, 1001}, {kGroupObj, 5},
                                   {kGroup, 5, 2000}, {kMask, 7}, {kOther, 0}});
  const std::string file_acl = Acl({{kUserObj, 6}, {kUser, 6, 1000}, {kGroupObj, 4},
                                    {kMask, 6}, {kOther, 0}});
  ok = ok &&
       setxattr((r + "/acl").c_str(), "system.posix_acl_access", dir_acl.data(), dir_acl.size(),
                0) == 0 &&
       setxattr((r + "/acl").c_str(), "system.posix_acl_default", def_acl.data(),
                def_acl.size(), 0) == 0 &&
       setxattr((r + "/acl/f").c_str(), "system.posix_acl_access", file_acl.data(),
                file_acl.size(), 0) == 0 &&
       setxattr((r + "/a/f").c_str(), "user.x", "kept", 4, 0) == 0;
  // Times deepest first (a change below moves a directory's mtime).
  long t = 1000000000;
  for (const char* rel : {"a/f", "a/x", "a/hard2", "a", "b/g", "b", "sticky/f", "sticky", "acl/f",
                          "acl", "empty", "l", "fifo", ""}) {
    const timespec times[2] = {{t, 111}, {t + 500, 222}};
    t += 86400;
    const std::string p = *rel ? r + "/" + rel : r;
    ok = ok && utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0;
  }
  return ok;
}

// The names ChangeEverything() removes: made again, with new inodes.
bool Remade(const std::string& rel) { return rel == "sticky/f" || rel == "empty"; }

// Everything of the tree a change may touch, one line per name, sorted,
// read without moving an access time (independently of Capture()):
// type and mode, owner, size, links, atime, mtime, inode (renames are
// undone by inode; not for names removed and made again), symlink body,
// contents, xattrs.
std::string Listing(const std::string& root) {
  return query_testing::Listing(root, {.remade = Remade});
}

// Every kind of change the restore must undo, made by the calling process
// (as root): modes, owners, xattrs and ACLs, contents through a hard link,
// a directory and a file renamed (the file across directories), an
// exchange, a name removed, names made, times.
bool ChangeEverything(const std::string& r) {
  const std::string acl = Acl({{kUserObj, 7}, {kGroupObj, 0}, {kOther, 7}});
  const int fd = open((r + "/hard1").c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  const bool wrote = fd >= 0 && write(fd, "other", 5) == 5;
  if (fd >= 0) close(fd);
  const timespec now[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
  return wrote && chmod((r + "/a/f").c_str(), 0666) == 0 &&
         chown((r + "/a/f").c_str(), 1001, 1001) == 0 &&
         setxattr((r + "/a/f").c_str(), "user.x", "changed", 7, 0) == 0 &&
         setxattr((r + "/a/f").c_str(), "user.new", "n", 1, 0) == 0 &&
         setxattr((r + "/acl/f").c_str(), "system.posix_acl_access", acl.data(), acl.size(),
                  0) == 0 &&
         removexattr((r + "/acl").c_str(), "system.posix_acl_default") == 0 &&
         chmod((r + "/a/x").c_str(), 0755) == 0 &&  // setuid gone
         rename((r + "/a").c_str(), (r + "/a2").c_str()) == 0 &&
         rename((r + "/b/g").c_str(), (r + "/sticky/g").c_str()) == 0 &&
         renameat2(AT_FDCWD, (r + "/l").c_str(), AT_FDCWD, (r + "/fifo").c_str(),
                   RENAME_EXCHANGE) == 0 &&
         unlink((r + "/sticky/f").c_str()) == 0 && rmdir((r + "/empty").c_str()) == 0 &&
         mkdir((r + "/new").c_str(), 0700) == 0 &&
         Write(r + "/new/file", "made", 0600, 1000, 1000) == true &&
         symlink("/etc", (r + "/b/etc").c_str()) == 0 &&
         link((r + "/a2/x").c_str(), (r + "/b/x").c_str()) == 0 &&
         utimensat(AT_FDCWD, (r + "/acl").c_str(), now, 0) == 0;
}

class ScratchGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (owners, O_NOATIME on others' files)";
    char root[] = "/tmp/pathwarden-scratch-test.XXXXXX";
    ASSERT_NE(mkdtemp(root), nullptr);
    top_ = root;
    root_ = top_ + "/s";
    state_ = top_ + "/state";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_TRUE(BuildTree(root_)) << std::strerror(errno);
    before_ = Listing(root_);
  }
  void TearDown() override {
    if (!top_.empty()) std::filesystem::remove_all(top_);
  }

  // ChangeGuarded() of a change that only notes it ran (*ran).
  Result<int, std::string> NoteRun(bool* ran) {
    return ChangeGuarded(
        root_,
        [ran]() -> Result<int, std::string> {
          *ran = true;
          return 0;
        },
        state_);
  }

  // How the process that changes the tree ends.
  enum class End { kSigkill, kCtrlC };

  // In the forked process that changes the tree: a process group of its
  // own, and once a change is made, the guardian's pid written to
  // ready[1] and the process stopped there for the test to end it.
  static void BecomeHolder(const int ready[2]) {
    close(ready[0]);
    setpgid(0, 0);
    const int fd = ready[1];
    SetAfterChangeHookForTesting([fd](pid_t guardian) {
      (void)!write(fd, &guardian, sizeof guardian);
      for (;;) pause();
    });
  }

  // Forks the process that changes the tree through ChangeGuarded() with
  // its own process group (as a shell runs a command), and ends it once
  // the change is made: while the kernel's child (a child tied to it, as
  // ProbeHost()'s is) still holds it (`in_child`), or after change()
  // returned (in the hook); with `guardian_too`, the guardian is killed
  // first. Returns "" when everything went as planned.
  std::string ChangeAndEnd(End end, bool in_child, bool guardian_too) {
    int ready[2];
    if (pipe(ready) != 0) return "pipe";
    const pid_t holder = fork();
    if (holder < 0) return "fork";
    if (holder == 0) {
      BecomeHolder(ready);
      const std::string r = root_;
      auto result = ChangeGuarded(
          r,
          [&]() -> Result<int, std::string> {
            const pid_t parent = getpid();
            const pid_t child = fork();
            if (child == 0) {
              prctl(PR_SET_PDEATHSIG, SIGKILL);
              if (getppid() != parent) _exit(1);
              if (!ChangeEverything(r)) _exit(2);
              if (in_child) {
                const pid_t none = 0;
                (void)!write(ready[1], &none, sizeof none);
                for (;;) pause();
              }
              _exit(0);
            }
            int status = 0;
            waitpid(child, &status, 0);
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
          },
          state_);
      _exit(result ? 3 : 4);  // never reached: it is killed first
    }
    close(ready[1]);
    pid_t guardian = -1;
    const bool got = read(ready[0], &guardian, sizeof guardian) == sizeof guardian;
    close(ready[0]);
    if (!got) {
      kill(holder, SIGKILL);
      waitpid(holder, nullptr, 0);
      return "the holder ended before its change";
    }
    std::string out;
    if (Listing(root_) == before_) out = "the tree did not change";
    if (guardian_too) {
      if (in_child || guardian <= 0) return "no guardian to kill";
      kill(guardian, SIGKILL);
    }
    if (end == End::kSigkill) {
      kill(holder, SIGKILL);
    } else {
      kill(-holder, SIGINT);  // the terminal's Ctrl-C: the whole process group
    }
    int status = 0;
    waitpid(holder, &status, 0);
    if (!WIFSIGNALED(status)) out = fmt::format("the holder ended with {:x}", status);
    return out;
  }

  // The holder ended by `end` with its change made (in the kernel's child
  // when `in_child`), its guardian left alone: the guardian put the tree
  // back and removed the journal (RepairScratch() waits for its lock and
  // finds nothing to do).
  void ExpectPutBackByTheGuardian(End end, bool in_child) {
    ASSERT_EQ(ChangeAndEnd(end, in_child, /*guardian_too=*/false), "");
    auto repaired = RepairScratch(state_);
    ASSERT_TRUE(repaired) << repaired.error();
    EXPECT_FALSE(*repaired) << "the guardian left the journal";
    EXPECT_EQ(Listing(root_), before_);
  }

  std::string top_, root_, state_, before_;
};

TEST_F(ScratchGuardTest, PutBackExactlyAfterAChange) {
  auto r = ChangeGuarded(
      root_, [&]() -> Result<int, std::string> { return ChangeEverything(root_) ? 7 : -1; },
      state_);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, 7);
  EXPECT_EQ(Listing(root_), before_);
  EXPECT_NE(access((state_ + "/scratch.journal").c_str(), F_OK), 0);
  // Reading the tree (twice, around the change) moved no access time.
  auto again = ChangeGuarded(root_, [&]() -> Result<int, std::string> { return 0; }, state_);
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(Listing(root_), before_);
}

// Two files alike in everything Differences() compares (contents, mode,
// owner, times, links) but their inodes, exchanged: the guardian's one
// walk that finds nothing to put back must not take that for nothing.
TEST_F(ScratchGuardTest, AnExchangeOfTwoAlikeFilesIsUndone) {
  const timespec times[2] = {{1000000000, 5}, {1000000000, 7}};
  for (const char* name : {"/twin1", "/twin2"}) {
    ASSERT_TRUE(Write(root_ + name, "same", 0644, 1000, 1000));
    ASSERT_EQ(utimensat(AT_FDCWD, (root_ + name).c_str(), times, 0), 0);
  }
  ASSERT_EQ(utimensat(AT_FDCWD, root_.c_str(), times, 0), 0);
  const std::string before = Listing(root_);
  auto r = ChangeGuarded(
      root_,
      [&]() -> Result<int, std::string> {
        // The directory's times set back too: only the inodes differ.
        return renameat2(AT_FDCWD, (root_ + "/twin1").c_str(), AT_FDCWD,
                         (root_ + "/twin2").c_str(), RENAME_EXCHANGE) |
               utimensat(AT_FDCWD, root_.c_str(), times, 0);
      },
      state_);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, 0);
  EXPECT_EQ(Listing(root_), before);  // the inodes back under their own names
}

TEST_F(ScratchGuardTest, TheChangesErrorIsReturnedAndTheTreePutBack) {
  auto r = ChangeGuarded(
      root_,
      [&]() -> Result<int, std::string> {
        (void)ChangeEverything(root_);
        return Unexpected(std::string("the probe failed"));
      },
      state_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "the probe failed");
  EXPECT_EQ(Listing(root_), before_);
}

TEST_F(ScratchGuardTest, KilledWhileTheKernelsChildHoldsTheChange) {
  ExpectPutBackByTheGuardian(End::kSigkill, /*in_child=*/true);
}

TEST_F(ScratchGuardTest, CtrlCWhileTheKernelsChildHoldsTheChange) {
  ExpectPutBackByTheGuardian(End::kCtrlC, /*in_child=*/true);
}

TEST_F(ScratchGuardTest, KilledAfterTheChangeBeforeThePutBack) {
  ExpectPutBackByTheGuardian(End::kSigkill, /*in_child=*/false);
}

TEST_F(ScratchGuardTest, CtrlCAfterTheChangeBeforeThePutBack) {
  ExpectPutBackByTheGuardian(End::kCtrlC, /*in_child=*/false);
}

TEST_F(ScratchGuardTest, GuardianKilledTooTheNextRunRepairsFirst) {
  ASSERT_EQ(ChangeAndEnd(End::kSigkill, /*in_child=*/false, /*guardian_too=*/true), "");
  // Nobody left to put it back: changed, with the journal beside it.
  EXPECT_NE(Listing(root_), before_);
  EXPECT_EQ(access((state_ + "/scratch.journal").c_str(), F_OK), 0);
  // The next run puts it back before its own change.
  bool saw_it_back = false;
  auto r = ChangeGuarded(
      root_,
      [&]() -> Result<int, std::string> {
        saw_it_back = Listing(root_) == before_;
        return 0;
      },
      state_);
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(saw_it_back);
  EXPECT_EQ(Listing(root_), before_);
  EXPECT_NE(access((state_ + "/scratch.journal").c_str(), F_OK), 0);
}

TEST_F(ScratchGuardTest, GuardianKilledTooRepairScratchPutsItBack) {
  ASSERT_EQ(ChangeAndEnd(End::kCtrlC, /*in_child=*/false, /*guardian_too=*/true), "");
  EXPECT_NE(Listing(root_), before_);
  auto repaired = RepairScratch(state_);
  ASSERT_TRUE(repaired) << repaired.error();
  EXPECT_TRUE(*repaired);
  EXPECT_EQ(Listing(root_), before_);
  repaired = RepairScratch(state_);
  ASSERT_TRUE(repaired) << repaired.error();
  EXPECT_FALSE(*repaired);
}

TEST_F(ScratchGuardTest, AJournalWhoseDirectoryIsGoneIsDropped) {
  auto t = Capture(root_);
  ASSERT_TRUE(t) << t.error();
  ASSERT_EQ(mkdir(state_.c_str(), 0755), 0);
  const std::string journal = state_ + "/scratch.journal";
  t->root = top_ + "/gone";
  ASSERT_TRUE(Write(journal, EncodeJournal(*t), 0600, 0, 0));
  auto repaired = RepairScratch(state_);
  ASSERT_TRUE(repaired) << repaired.error();
  EXPECT_TRUE(*repaired);
  EXPECT_NE(access(journal.c_str(), F_OK), 0);
  EXPECT_EQ(Listing(root_), before_);
}

TEST_F(ScratchGuardTest, ADamagedJournalStopsEveryChange) {
  ASSERT_EQ(mkdir(state_.c_str(), 0755), 0);
  const std::string journal = state_ + "/scratch.journal";
  auto t = Capture(root_);
  ASSERT_TRUE(t) << t.error();
  std::string bytes = EncodeJournal(*t);
  bytes.resize(bytes.size() - 3);
  ASSERT_TRUE(Write(journal, bytes, 0600, 0, 0));
  bool ran = false;
  auto r = NoteRun(&ran);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("damaged"), std::string::npos) << r.error();
  EXPECT_FALSE(ran);
  EXPECT_EQ(access(journal.c_str(), F_OK), 0);
}

// A file far larger than any journal (a sparse 129 MiB) is refused
// unread, as a damaged one is: no change runs, the file stays.
TEST_F(ScratchGuardTest, AnOversizedJournalIsNotRead) {
  ASSERT_EQ(mkdir(state_.c_str(), 0755), 0);
  const std::string journal = state_ + "/scratch.journal";
  ASSERT_TRUE(Write(journal, "", 0600, 0, 0));
  ASSERT_EQ(truncate(journal.c_str(), off_t{129} << 20), 0);
  bool ran = false;
  auto r = NoteRun(&ran);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("larger than a scratch journal can be"), std::string::npos)
      << r.error();
  EXPECT_FALSE(ran);
  EXPECT_EQ(access(journal.c_str(), F_OK), 0);
}

TEST_F(ScratchGuardTest, JournalRoundTrip) {
  auto t = Capture(root_);
  ASSERT_TRUE(t) << t.error();
  auto back = DecodeJournal(EncodeJournal(*t));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->root, t->root);
  ASSERT_EQ(back->entries.size(), t->entries.size());
  EXPECT_EQ(Differences(*t, *back), "");
  for (size_t i = 0; i < t->entries.size(); ++i) {
    EXPECT_EQ(back->entries[i].rel, t->entries[i].rel);
    EXPECT_EQ(back->entries[i].st.st_ino, t->entries[i].st.st_ino);
    EXPECT_EQ(back->entries[i].xattrs, t->entries[i].xattrs);
  }
  EXPECT_FALSE(DecodeJournal("not a journal"));
  std::string bytes = EncodeJournal(*t);
  for (size_t cut : {size_t{40}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_FALSE(DecodeJournal(std::string_view(bytes).substr(0, cut))) << cut;
  EXPECT_FALSE(DecodeJournal(bytes + "x"));
}

// The same through explain's own road: a changing query verified with
// --scratch (Session::Ask()), the process killed after the kernel's
// change; its guardian puts the directory back (the machine's state
// directory, as explain uses it).
TEST_F(ScratchGuardTest, ExplainKilledAfterTheKernelsChange) {
  identity::Identity who;
  who.cred = Cred::ForUser(0, 0);
  who.cred.cap_effective = who.cred.cap_permitted = kernel_internal::AvailableCaps();
  auto session = Session::Open(who, {});
  ASSERT_TRUE(session) << session.error();
  auto q = ParseQueryLine(fmt::format("rename {}/a {}/empty RENAME_EXCHANGE", root_, root_));
  ASSERT_TRUE(q) << q.error();
  for (End end : {End::kSigkill, End::kCtrlC}) {
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t holder = fork();
    ASSERT_GE(holder, 0);
    if (holder == 0) {
      BecomeHolder(ready);
      (void)(*session)->Ask(*q, true, root_);
      _exit(1);
    }
    close(ready[1]);
    pid_t guardian = -1;
    ASSERT_EQ(read(ready[0], &guardian, sizeof guardian), static_cast<ssize_t>(sizeof guardian));
    close(ready[0]);
    EXPECT_NE(Listing(root_), before_) << "the kernel made no change";
    kill(end == End::kSigkill ? holder : -holder, end == End::kSigkill ? SIGKILL : SIGINT);
    int status = 0;
    waitpid(holder, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status));
    auto repaired = RepairScratch();  // waits for the guardian
    ASSERT_TRUE(repaired) << repaired.error();
    EXPECT_EQ(Listing(root_), before_);
  }
  // And not killed: the kernel agrees, the tree is as it was.
  const Answer a = (*session)->Ask(*q, true, root_);
  ASSERT_TRUE(a.kernel_err) << a.unverified;
  EXPECT_EQ(*a.kernel_err, 0);
  EXPECT_EQ(a.decision.err(), 0);
  EXPECT_EQ(Listing(root_), before_);
}

}  // namespace
}  // namespace pathwarden::query
