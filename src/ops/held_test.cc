// What the host backend marks on files other processes hold or their
// filesystem guards (src/vfs/world.h): a running program
// (kInodeDenyWrite), an active swap file (kInodeSwapfile), an fs-verity
// file (kInodeVerity), and the unknowns beside them. Each flag is set
// on a model's file directly, as the host backend sets it from /proc and
// statx, and each call is asked of it: the refusal where the kernel puts
// it, after the checks that come first, which stay what they are. The
// errnos and their order were seen on 6.18 (tests/host's
// ARunningProgramIsNotWritable and AnActiveSwapFileIsNeitherRemovedNorResized);
// fs-verity's cannot be seen there and are unknown.

#include <fcntl.h>
#include <sys/stat.h>

#include <string>

#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/api/model_impl.h"
#include "src/engine/engine.h"
#include "src/vfs/world.h"

namespace pathwarden {
namespace {

class Held : public ::testing::Test {
 protected:
  // /d (0755) holding f (0644) and g, both root's; alice (1000) and a
  // process under a layer that handles truncate and grants none.
  void SetUp() override {
    const Node d = *m.Mkdir(m.Root(), "d");
    f = *m.Create(d, "f", {}, {.mode = 0644});
    (void)*m.Create(d, "g", {}, {.mode = 0644});
    root = m.Init();
    alice = m.Spawn("alice", Cred::ForUser(1000, 1000));
    confined = m.Spawn("confined", Cred::ForUser(0, 0));
    LandlockRuleset rs{.handled_access_fs = landlock::kFsTruncate};
    ASSERT_EQ(m.Apply(confined, Restrict{.ruleset = rs}).err(), 0);
  }
  void Mark(uint32_t flags) {
    EngineOf(m).AsWriter([&] { EngineOf(m).world().SetFlags(f.inode, flags, 0); });
  }
  Decision Ask(Process p, const Request& r) { return m.Evaluate(p, r); }

  Model m;
  Node f;
  Process root, alice, confined;
};

TEST_F(Held, AnActiveSwapFile) {
  Mark(vfs::kInodeSwapfile);
  EXPECT_EQ(Ask(root, Unlink{.path = "/d/f"}).err(), EPERM);
  EXPECT_EQ(Ask(root, Rename{.oldpath = "/d/f", .newpath = "/d/h"}).err(), EPERM);
  EXPECT_EQ(Ask(root, Rename{.oldpath = "/d/g", .newpath = "/d/f"}).err(), EPERM);
  EXPECT_EQ(Ask(root, Truncate{.path = "/d/f"}).err(), ETXTBSY);
  EXPECT_EQ(Ask(root, Open{.path = "/d/f", .flags = O_WRONLY | O_TRUNC}).err(), ETXTBSY);
  EXPECT_TRUE(Ask(root, Open{.path = "/d/f", .flags = O_WRONLY}).allowed());
  EXPECT_TRUE(Ask(root, Chmod{.path = "/d/f", .mode = 0600}).allowed());
  EXPECT_TRUE(Ask(root, Link{.oldpath = "/d/f", .newpath = "/d/h"}).allowed());
  // DAC and Landlock's truncate check come first.
  EXPECT_EQ(Ask(alice, Truncate{.path = "/d/f"}).err(), EACCES);
  EXPECT_EQ(Ask(alice, Unlink{.path = "/d/f"}).err(), EACCES);
  const Decision t = Ask(confined, Truncate{.path = "/d/f"});
  EXPECT_EQ(t.err(), EACCES);
  EXPECT_EQ(t.stage(), Stage::kLandlock);
  // The fd form: opened for writing, then resized.
  const Decision o = m.Apply(root, Open{.path = "/d/f", .flags = O_WRONLY});
  ASSERT_TRUE(o.allowed());
  EXPECT_EQ(Ask(root, Ftruncate{.fd = o.fd()}).err(), ETXTBSY);
  EXPECT_EQ(Ask(root, Fallocate{.fd = o.fd(), .len = 4096}).err(), ETXTBSY);
}

TEST_F(Held, ASwapFileNotFound) {
  Mark(vfs::kInodeSwapfileUnknown);
  for (const Request& r : {Request{Unlink{.path = "/d/f"}}, Request{Truncate{.path = "/d/f"}},
                           Request{Open{.path = "/d/f", .flags = O_WRONLY | O_TRUNC}}}) {
    const Decision d = Ask(root, r);
    EXPECT_TRUE(d.unknown()) << d.ToText();
    EXPECT_NE(d.reason().unknown_why.find("swap file"), std::string::npos)
        << d.reason().unknown_why;
  }
  EXPECT_TRUE(Ask(root, Open{.path = "/d/f", .flags = O_WRONLY}).allowed());
  EXPECT_EQ(Ask(alice, Unlink{.path = "/d/f"}).err(), EACCES);
}

TEST_F(Held, AnFsVerityFile) {
  Mark(vfs::kInodeVerity);
  for (const Request& r : {Request{Open{.path = "/d/f", .flags = O_WRONLY}},
                           Request{Open{.path = "/d/f", .flags = O_RDWR}},
                           Request{Open{.path = "/d/f", .flags = O_RDONLY | O_TRUNC}},
                           Request{Truncate{.path = "/d/f"}}}) {
    const Decision d = Ask(root, r);
    EXPECT_TRUE(d.unknown()) << d.ToText();
    EXPECT_NE(d.reason().unknown_why.find("fs-verity"), std::string::npos)
        << d.reason().unknown_why;
  }
  EXPECT_TRUE(Ask(root, Open{.path = "/d/f"}).allowed());
  EXPECT_TRUE(Ask(root, Unlink{.path = "/d/f"}).allowed());
  // What refuses first still refuses.
  EXPECT_EQ(Ask(alice, Open{.path = "/d/f", .flags = O_WRONLY}).err(), EACCES);
  EXPECT_EQ(Ask(confined, Truncate{.path = "/d/f"}).err(), EACCES);
}

TEST_F(Held, ARunningProgram) {
  Mark(vfs::kInodeDenyWrite);
  EXPECT_EQ(Ask(root, Open{.path = "/d/f", .flags = O_WRONLY}).err(), ETXTBSY);
  EXPECT_EQ(Ask(root, Truncate{.path = "/d/f"}).err(), ETXTBSY);
  EXPECT_TRUE(Ask(root, Open{.path = "/d/f"}).allowed());
  EXPECT_TRUE(Ask(root, Unlink{.path = "/d/f"}).allowed());
  EXPECT_EQ(Ask(alice, Open{.path = "/d/f", .flags = O_WRONLY}).err(), EACCES);
}

}  // namespace
}  // namespace pathwarden
