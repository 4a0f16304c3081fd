// A C++20 program that links libpathwarden as its users do (tests/capi/
// install_test.sh): the same question as consumer.c through the C++ API,
// pathwarden::Model, which the shared library exports too.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <pathwarden/model.h>

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "consumer.cc:%d: %s failed\n", __LINE__, #cond);     \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

int main() {
  using namespace pathwarden;
  Model m;
  auto home = m.Mkdir(m.Root(), "home");
  CHECK(home);
  auto alice_home = m.Mkdir(*home, "alice", {.mode = 0700, .uid = 1000, .gid = 1000});
  CHECK(alice_home);
  CHECK(m.Create(*alice_home, "key", {.type = FileType::kRegular},
                 {.mode = 0600, .uid = 1000, .gid = 1000}));
  Process backup = m.Spawn("backup", Cred::ForUser(34, 34));
  Decision d = m.Evaluate(backup, Access{.path = "/home/alice/key", .mode = R_OK});
  CHECK(d.denied());
  CHECK(d.err() == EACCES);
  CHECK(d.stage() == Stage::kWalk);
  CHECK(!d.ToText().empty());
  CHECK(!d.reason().components.empty());
  std::printf("C++: %s\n", d.ToText().c_str());

  LandlockRuleset rs{.handled_access_fs = landlock::kFsReadFile};
  rs.AllowPath("/tmp", landlock::kFsReadFile);
  Process alice = m.Spawn("alice", Cred::ForUser(1000, 1000));
  CHECK(m.Mkdir(m.Root(), "tmp", {.mode = 01777}));
  CHECK(m.Apply(alice, Restrict{rs}).allowed());
  Decision l = m.Evaluate(alice, Open{.path = "/home/alice/key", .flags = O_RDONLY});
  CHECK(l.err() == EACCES && l.stage() == Stage::kLandlock);
  CHECK(l.reason().layers.size() == 1);
  CHECK(landlock::FsAuditNames(l.reason().layers[0].missing) == "fs.read_file");
  std::printf("C++: %s\n", l.ToText().c_str());
  std::printf("C++ consumer: ok\n");
  return 0;
}
