// Scenarios and results survive the trip to the kernel server exactly,
// locations and fields no file could express included.

#include "src/kernel/codec.h"

#include <gtest/gtest.h>

namespace pathwarden::kernel_internal {
namespace {

constexpr std::string_view kRich = R"(format = 1
description = "every kind of field"
abi = 7
[sysctl]
protected_symlinks = 1
protected_fifos = 2
[[node]]
path = "/d"
type = "dir"
mode = 0o2750
uid = 7
gid = 8
acl = "u:1001:r-x,g:50:rwx"
default_acl = "u::rwx,o::r"
attrs = ["immutable"]
[[node]]
path = "/dev0"
type = "block"
rdev = "1:7"
[[node]]
path = "/m"
type = "tmpfs"
mount_flags = ["ro", "nosymfollow"]
[[node]]
path = "/b"
type = "bind"
source = "/d"
[[node]]
path = "/l"
type = "symlink"
target = "d/x"
[[node]]
path = "/f"
content = "line\n"
[[process]]
name = "p"
uid = 1000
gid = 1000
groups = [5, 6]
caps = ["CAP_CHOWN"]
cwd = "/d"
umask = 0o077
[[process.layer]]
handled_fs = ["read_file", "refer"]
handled_net = ["bind_tcp"]
scoped = ["signal"]
rule = [{ path = "/l", access = ["read_file"], nofollow = true }, { port = 80, access = ["bind_tcp"] }]
[[process]]
name = "c"
parent = "p"
[[step]]
as = "p"
op = "open"
path = "x"
dirfd = "d"
flags = "O_RDWR|O_CREAT"
mode = 0o600
fd = "h"
expect = "EACCES"
[[step]]
op = "chown"
path = "/f"
uid = -1
gid = 5
expect = "ok"
[[step]]
op = "restrict"
layer = { handled_fs = ["execute"], rule = [{ path = "/", access = ["execute"] }] }
expect = "ok"
[[step]]
op = "utimensat"
path = "/f"
times = ["now", "set"]
expect = "ok"
[[step]]
op = "ioctl"
fd = "h"
cmd = "0x1234"
expect = "EBADF"
[[step]]
op = "mknod"
path = "/s"
type = "socket"
expect = "ok"
)";

std::string Bytes(const Scenario& s) {
  ByteWriter w;
  EncodeScenario(s, &w);
  return w.Take();
}

TEST(KernelCodec, ScenarioRoundTripsExactly) {
  auto s = ParseScenario(kRich, "rich.toml", false);
  ASSERT_TRUE(s.has_value()) << s.error();
  // A field no file can set: the decoder must not rely on the parser.
  s->steps[0].flags |= uint64_t{1} << 40;
  std::string bytes = Bytes(*s);
  ByteReader in(bytes);
  Scenario back;
  ASSERT_TRUE(DecodeScenario(&in, &back));
  EXPECT_TRUE(in.AtEnd());
  EXPECT_EQ(Bytes(back), bytes);
  EXPECT_EQ(ScenarioToToml(back), ScenarioToToml(*s));
  EXPECT_EQ(back.Where(back.processes[0].layers[0].rules[1].loc),
            s->Where(s->processes[0].layers[0].rules[1].loc));
  EXPECT_EQ(back.steps[0].flags, s->steps[0].flags);
  EXPECT_EQ(back.steps[1].uid, -1);
  ASSERT_TRUE(back.nodes[0].acl.has_value());
  EXPECT_EQ(*back.nodes[0].acl, *s->nodes[0].acl);
}

TEST(KernelCodec, TruncatedInputIsRefused) {
  auto s = ParseScenario(kRich, "rich.toml", false);
  ASSERT_TRUE(s.has_value()) << s.error();
  std::string bytes = Bytes(*s);
  for (size_t cut : {size_t{0}, size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    ByteReader in(std::string_view(bytes).substr(0, cut));
    Scenario back;
    EXPECT_FALSE(DecodeScenario(&in, &back)) << "cut at " << cut;
  }
}

TEST(KernelCodec, ProbeJobRoundTripsWithItsGroups) {
  auto s = ParseScenario(kRich, "rich.toml", false);
  ASSERT_TRUE(s.has_value()) << s.error();
  ProbeJob job;
  job.cred = Cred::ForUser(1000, 100);
  job.cred.fsuid = 1001;
  job.cred.sgid = 7;
  job.cred.cap_permitted = CapBit(kCapChown);
  job.cred.umask = 027;
  job.groups = {4, 27, 1000};
  job.root = "/srv/root";
  job.cwd = "/home";
  job.layers = s->processes[0].layers;
  job.steps = s->steps;
  ByteWriter w;
  EncodeProbeJob(job, &w);
  const std::string bytes = w.Take();
  ByteReader in(bytes);
  ProbeJob back;
  ASSERT_TRUE(DecodeProbeJob(&in, &back));
  EXPECT_TRUE(in.AtEnd());
  // Every field, the groups in the credentials too.
  ByteWriter again;
  EncodeProbeJob(back, &again);
  EXPECT_EQ(again.Take(), bytes);
  EXPECT_EQ(back.cred.fsuid, 1001u);
  EXPECT_EQ(back.cred.umask, 027u);
  EXPECT_EQ(back.cred.cap_permitted, CapBit(kCapChown));
  EXPECT_EQ(std::vector<uint32_t>(back.cred.groups().begin(), back.cred.groups().end()),
            job.groups);
  ASSERT_EQ(back.layers.size(), job.layers.size());
  EXPECT_EQ(back.layers[0].rules.size(), job.layers[0].rules.size());
  ASSERT_EQ(back.steps.size(), job.steps.size());
  EXPECT_EQ(back.steps[0].flags, job.steps[0].flags);
  for (size_t cut : {size_t{0}, bytes.size() / 2, bytes.size() - 1}) {
    ByteReader part(std::string_view(bytes).substr(0, cut));
    ProbeJob half;
    EXPECT_FALSE(DecodeProbeJob(&part, &half)) << "cut at " << cut;
  }
}

TEST(KernelCodec, ResultRoundTrips) {
  RunResult r;
  r.status = RunResult::Status::kError;
  r.message = "t.toml:3:1: parent \"/f\" is a regular file, not a directory";
  r.steps = {{0, ""}, {EACCES, "why"}};
  TreeEntry root;
  root.type = "dir";
  TreeEntry e;
  e.parent = 0;
  e.name = "d";
  e.type = "dir";
  e.mode = 01777;
  e.nlink = 2;
  e.acl = "u::rwx,g::r-x,m::r-x,o::---";
  r.tree = {root, e};
  ByteWriter w;
  EncodeResult(r, &w);
  std::string bytes = w.Take();
  ByteReader in(bytes);
  RunResult back;
  ASSERT_TRUE(DecodeResult(&in, &back));
  EXPECT_TRUE(in.AtEnd());
  EXPECT_EQ(back.status, r.status);
  EXPECT_EQ(back.message, r.message);
  ASSERT_EQ(back.steps.size(), 2u);
  EXPECT_EQ(back.steps[1].err, EACCES);
  EXPECT_EQ(back.steps[1].reason, "why");
  EXPECT_EQ(back.tree, r.tree);
}

}  // namespace
}  // namespace pathwarden::kernel_internal
