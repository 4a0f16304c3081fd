// Reason::fs_requests: what Landlock's hooks asked of which path, for a
// process with and without a domain, as `trace --learn` reads them (the
// rights each call needs are the ops', written once). Every expectation
// is what Linux 6.18's Landlock requests for the call (security/landlock/
// fs.c: hook_path_*, hook_file_open(), current_check_refer_path()).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>  // RENAME_EXCHANGE
#include <sys/stat.h>

#include <string>
#include <vector>

#include "pathwarden/decision.h"
#include "pathwarden/model.h"
#include "pathwarden/request.h"
#include "pathwarden/ruleset.h"

namespace pathwarden {
namespace {

namespace ll = landlock;

std::string Text(const std::vector<FsRequest>& v) {
  std::string out;
  for (const FsRequest& f : v)
    out += f.path + (f.directory ? "/ " : " ") + std::to_string(f.access) + "; ";
  return out;
}

class FsRequestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Node root = m.Root();
    Node a = *m.Mkdir(root, "a", {.mode = 0777});
    Node b = *m.Mkdir(root, "b", {.mode = 0777});
    (void)*m.Create(a, "f", {}, {.mode = 0755});
    (void)*m.Create(a, "g", {}, {.mode = 0666});
    (void)*m.Mkdir(a, "d");
    (void)*m.Create(b, "f", {}, {.mode = 0666});
    (void)*m.Create(root, "null", {.type = FileType::kChar}, {.mode = 0666});
    root_p = m.Spawn("root", Cred::ForUser(0, 0));
    // A domain that handles every right and allows it beneath /: the
    // same requests, now checked and granted.
    confined = m.Spawn("confined", Cred::ForUser(0, 0));
    LandlockRuleset rs{.handled_access_fs = ll::kFsAll};
    rs.AllowPath("/", ll::kFsAll);
    ASSERT_TRUE(m.Apply(confined, Restrict{.ruleset = rs}).allowed());
  }

  // The requests of `r`, asked by each process: the same.
  std::vector<FsRequest> Asked(const Request& r) {
    const Decision plain = m.Evaluate(root_p, r, Model::Detail::kTrace);
    const Decision under = m.Evaluate(confined, r, Model::Detail::kTrace);
    EXPECT_TRUE(plain.allowed()) << plain.ToText();
    EXPECT_TRUE(under.allowed()) << under.ToText();
    EXPECT_EQ(Text(plain.reason().fs_requests), Text(under.reason().fs_requests));
    return plain.reason().fs_requests;
  }

  static std::vector<FsRequest> Want(std::vector<FsRequest> v) { return v; }

  Model m;
  Process root_p, confined;
};

TEST_F(FsRequestsTest, OpensAskOfTheFileAndCreatesOfTheDirectory) {
  EXPECT_EQ(Text(Asked(Open{.path = "/a/g", .flags = O_RDWR | O_TRUNC})),
            Text(Want({{"/a/g", ll::kFsReadFile | ll::kFsWriteFile, false},
                       {"/a/g", ll::kFsTruncate, false}})));
  EXPECT_EQ(Text(Asked(Open{.path = "/a", .flags = O_RDONLY | O_DIRECTORY})),
            Text(Want({{"/a", ll::kFsReadDir, true}})));
  EXPECT_EQ(Text(Asked(Open{.path = "/a/new", .flags = O_WRONLY | O_CREAT})),
            Text(Want({{"/a", ll::kFsMakeReg, true}, {"/a", ll::kFsWriteFile, true}})));
  // O_PATH opens no file: Landlock is not asked.
  EXPECT_EQ(Text(Asked(Open{.path = "/a/g", .flags = O_PATH})), "");
  EXPECT_EQ(Text(Asked(ExecCheck{.path = "/a/f"})),
            Text(Want({{"/a/f", ll::kFsReadFile | ll::kFsExecute, false}})));
}

TEST_F(FsRequestsTest, CreatingAndRemovingAskOfTheDirectory) {
  EXPECT_EQ(Text(Asked(Mkdir{.path = "/a/n"})), Text(Want({{"/a", ll::kFsMakeDir, true}})));
  EXPECT_EQ(Text(Asked(Mknod{.path = "/a/p", .type = S_IFIFO})),
            Text(Want({{"/a", ll::kFsMakeFifo, true}})));
  EXPECT_EQ(Text(Asked(Symlink{.target = "x", .path = "/b/s"})),
            Text(Want({{"/b", ll::kFsMakeSym, true}})));
  EXPECT_EQ(Text(Asked(Unlink{.path = "/a/g"})), Text(Want({{"/a", ll::kFsRemoveFile, true}})));
  EXPECT_EQ(Text(Asked(Rmdir{.path = "/a/d"})), Text(Want({{"/a", ll::kFsRemoveDir, true}})));
  EXPECT_EQ(Text(Asked(Truncate{.path = "/a/g"})), Text(Want({{"/a/g", ll::kFsTruncate, false}})));
}

TEST_F(FsRequestsTest, RenamesAndLinksAskReferOnlyAcrossDirectories) {
  EXPECT_EQ(Text(Asked(Rename{.oldpath = "/a/g", .newpath = "/a/h"})),
            Text(Want({{"/a", ll::kFsRemoveFile | ll::kFsMakeReg, true}})));
  EXPECT_EQ(Text(Asked(Rename{.oldpath = "/a/g", .newpath = "/b/f"})),
            Text(Want({{"/a", ll::kFsRemoveFile | ll::kFsRefer, true},
                       {"/b", ll::kFsMakeReg | ll::kFsRemoveFile | ll::kFsRefer, true}})));
  EXPECT_EQ(Text(Asked(Rename{.oldpath = "/a/d", .newpath = "/b/f", .flags = RENAME_EXCHANGE})),
            Text(Want({{"/a", ll::kFsMakeReg | ll::kFsRemoveDir | ll::kFsRefer, true},
                       {"/b", ll::kFsMakeDir | ll::kFsRemoveFile | ll::kFsRefer, true}})));
  EXPECT_EQ(Text(Asked(Link{.oldpath = "/a/g", .newpath = "/b/l"})),
            Text(Want({{"/a", ll::kFsRefer, true}, {"/b", ll::kFsMakeReg | ll::kFsRefer, true}})));
}

TEST_F(FsRequestsTest, OpenFilesAskOfTheirPathAndNothingWithoutAReason) {
  const Decision o = m.Apply(root_p, Open{.path = "/a/g", .flags = O_WRONLY});
  ASSERT_TRUE(o.allowed()) << o.ToText();
  const Decision t = m.Evaluate(root_p, Ftruncate{.fd = o.fd()}, Model::Detail::kTrace);
  EXPECT_EQ(Text(t.reason().fs_requests), Text(Want({{"/a/g", ll::kFsTruncate, false}})));
  const Decision n = m.Apply(root_p, Open{.path = "/null", .flags = O_RDONLY});
  ASSERT_TRUE(n.allowed()) << n.ToText();
  const Decision io = m.Evaluate(root_p, Ioctl{.fd = n.fd(), .cmd = 0x5401}, Model::Detail::kTrace);
  EXPECT_EQ(Text(io.reason().fs_requests), Text(Want({{"/null", ll::kFsIoctlDev, false}})));
  // FIOCLEX is always allowed on devices (is_masked_device_ioctl()):
  // nothing asked.
  const Decision fioclex =
      m.Evaluate(root_p, Ioctl{.fd = n.fd(), .cmd = 0x5451}, Model::Detail::kTrace);
  EXPECT_EQ(Text(fioclex.reason().fs_requests), "");
  // A reason without the trace records nothing (the whole path of every
  // request would make deep chains quadratic), nor does a verdict alone.
  const Decision reason =
      m.Evaluate(root_p, Open{.path = "/a/g", .flags = O_RDONLY}, Model::Detail::kReason);
  EXPECT_EQ(Text(reason.reason().fs_requests), "");
  const Decision quiet =
      m.Evaluate(root_p, Open{.path = "/a/g", .flags = O_RDONLY}, Model::Detail::kVerdictOnly);
  EXPECT_EQ(Text(quiet.reason().fs_requests), "");
}

}  // namespace
}  // namespace pathwarden
