// The host backend tests' fixture (host_backend_test.cc,
// host_backend_changes_test.cc): a scratch tree with every kind of object
// (src/kernel/scratch_host.h) in a private mount namespace of the test
// process, the identities and requests the decisions are compared for,
// and a listing of the host before and after each test.

#ifndef PATHWARDEN_TESTS_HOST_HOST_BACKEND_FIXTURE_H_
#define PATHWARDEN_TESTS_HOST_HOST_BACKEND_FIXTURE_H_

#include <acl/libacl.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/model.h"
#include "src/api/model_impl.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/scratch_host.h"
#include "tests/host/scratch_fixture.h"

namespace pathwarden::host_backend_testing {

using kernel_internal::ProbeHost;
using kernel_internal::ProbeIdentity;
using kernel_internal::ScratchHost;

// Every object below `root`, mounts crossed, symlinks not followed; the
// root first, then in sorted order.
inline std::vector<std::string> HostPaths(const std::string& root) {
  std::vector<std::string> out{root};
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(
           root, std::filesystem::directory_options::none, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    out.push_back(it->path().string());
  std::sort(out.begin() + 1, out.end());
  return out;
}

// The ACL of `path` as PosixAcl::ToText() prints it ("" when none or the
// mode says it all), from libacl: the model's reading is not its own judge.
inline std::string HostAcl(const std::string& path, acl_type_t type) {
  acl_t a = acl_get_file(path.c_str(), type);
  if (a == nullptr) return "";
  std::string out;
  if (type == ACL_TYPE_ACCESS && acl_equiv_mode(a, nullptr) == 0) {
    acl_free(a);
    return "";
  }
  char* text = acl_to_any_text(a, nullptr, ',', TEXT_ABBREVIATE | TEXT_NUMERIC_IDS);
  if (text != nullptr) out = text;
  acl_free(text);
  acl_free(a);
  return out;
}

inline std::string ModelAcl(const vfs::World& w, vfs::AclId id) {
  if (id == vfs::kNone) return "";
  const PosixAcl* a = w.acl(id);
  return a ? a->ToText() : "?";
}

// The identities the decisions are compared for. "root" has the
// capabilities this machine can grant.
struct Who {
  std::string name;
  Cred cred;
};

inline std::vector<Who> Identities() {
  const uint64_t caps = kernel_internal::AvailableCaps();
  Cred root = Cred::ForUser(0, 0);
  root.cap_effective &= caps;
  root.cap_permitted &= caps;
  Cred root_nocaps = Cred::ForUser(0, 0);
  root_nocaps.cap_effective = root_nocaps.cap_permitted = 0;
  Cred alice = Cred::ForUser(1000, 1000);
  Cred bob = Cred::ForUser(1001, 1001);
  bob.SetGroups({1000});
  return {{"root", root}, {"root without capabilities", root_nocaps}, {"uid 1000", alice},
          {"uid 1001 in group 1000", bob}};
}

// The read-only requests the kernel probe may make on `path` of type
// `mode` (it never opens devices, FIFOs or sockets but with O_PATH).
inline std::vector<Request> ReadOnlyRequests(const std::string& path, mode_t mode, bool writes = true) {
  std::vector<Request> r{Stat{.path = path},
                         Lstat{.path = path},
                         Access{.path = path, .mode = R_OK},
                         Access{.path = path, .mode = W_OK},
                         Access{.path = path, .mode = X_OK},
                         Open{.path = path, .flags = O_PATH},
                         Open{.path = path, .flags = O_PATH | O_NOFOLLOW},
                         Readlink{.path = path},
                         Chdir{.path = path},
                         ExecCheck{.path = path}};
  if (S_ISREG(mode) || S_ISDIR(mode)) {
    r.push_back(Open{.path = path, .flags = O_RDONLY});
    r.push_back(Open{.path = path, .flags = O_RDONLY | O_DIRECTORY});
  }
  // Opening for writing changes no data, but watchers see it: the
  // scratch tree only.
  if (S_ISREG(mode) && writes) r.push_back(Open{.path = path, .flags = O_WRONLY});
  if (S_ISDIR(mode)) r.push_back(Open{.path = path + "/missing", .flags = O_RDONLY});
  return r;
}

// Requests that would change the tree: only the model is asked (it never
// changes the host), the lazy model against the eager one.
inline std::vector<Request> ChangingRequests(const std::string& path) {
  return {Mkdir{.path = path + "/new"},
          Unlink{.path = path},
          Rmdir{.path = path},
          Rename{.oldpath = path, .newpath = path + ".moved"},
          Truncate{.path = path},
          Chmod{.path = path, .mode = 0600},
          Chown{.path = path, .uid = 1000, .gid = -1},
          Open{.path = path, .flags = O_WRONLY | O_CREAT, .mode = 0644},
          Symlink{.target = "x", .path = path + "/link"},
          Link{.oldpath = path, .newpath = path + ".link"}};
}

inline std::string Describe(const Request& r) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        std::string name = typeid(T).name();
        if constexpr (requires { x.path; }) return fmt::format("{} {}", name, x.path);
        if constexpr (requires { x.oldpath; }) return fmt::format("{} {}", name, x.oldpath);
        return name;
      },
      r);
}

// A Landlock layer: read everything below the scratch root's "home" and
// "links", execute below "bin", write below "tmp".
inline LandlockRuleset Layer(const std::string& root) {
  LandlockRuleset rs;
  rs.handled_access_fs = landlock::kFsReadFile | landlock::kFsReadDir | landlock::kFsExecute |
                         landlock::kFsWriteFile | landlock::kFsMakeReg | landlock::kFsMakeDir |
                         landlock::kFsRemoveFile | landlock::kFsTruncate;
  rs.AllowPath(root + "/home", landlock::kFsReadFile | landlock::kFsReadDir);
  rs.AllowPath(root + "/links", landlock::kFsReadFile | landlock::kFsReadDir);
  rs.AllowPath(root + "/bin", landlock::kFsExecute | landlock::kFsReadFile);
  rs.AllowPath(root + "/tmp", landlock::kFsWriteFile | landlock::kFsMakeReg |
                                  landlock::kFsRemoveFile | landlock::kFsTruncate);
  rs.AllowPath(root + "/ro", landlock::kFsReadFile);
  return rs;
}

// What `ask` says of a host model read by a child that is uid 1001 (so
// that the host refuses pathwarden what it refuses that user), as text:
// "could not ..." when the child could not read the host.
inline std::string ReadAsUid1001(const std::function<std::string(Model&)>& ask) {
  HostOptions o;
  o.lsm.trusted = RootIdleModules();
  int pipefd[2];
  if (pipe(pipefd) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    close(pipefd[0]);
    std::string out;
    if (setgroups(0, nullptr) != 0 || setresgid(1001, 1001, 1001) != 0 ||
        setresuid(1001, 1001, 1001) != 0) {
      out = "could not drop to uid 1001";
    } else if (auto h = Model::FromHost(o); !h) {
      out = "could not read the host: " + h.error();
    } else {
      out = ask(*h);
    }
    (void)!write(pipefd[1], out.data(), out.size());
    _exit(0);
  }
  close(pipefd[1]);
  std::string got;
  char buf[1024];
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  close(pipefd[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return "waitpid failed";
  return got;
}

class HostBackendTest : public ScratchHostTest {
 protected:
  void SetUp() override {
    ScratchHostTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    root_ = scratch_->root();
    auto before = kernel_internal::HostListing(root_);
    ASSERT_TRUE(before) << before.error();
    listing_before_ = *before;
  }

  void TearDown() override {
    // Whatever the test read, the host is as it was (atimes aside, which
    // the listing leaves out: reading a directory may move them).
    if (scratch_ && !changes_host_) ExpectUnchanged();
    ScratchHostTest::TearDown();
  }

  void ExpectUnchanged() {
    auto after = kernel_internal::HostListing(root_);
    ASSERT_TRUE(after) << after.error();
    EXPECT_EQ(listing_before_, *after) << "reading the host changed it";
  }

  static Model Host(HostOptions::Consistency c = HostOptions::Consistency::kSnapshot) {
    HostOptions o;
    o.consistency = c;
    // The scratch tree is this test's own, in its private mount namespace:
    // no process pathwarden cannot see runs a program from it.
    o.assume_unseen_run_nothing = true;
    auto m = Model::FromHost(o);
    EXPECT_TRUE(m) << m.error();
    return std::move(*m);
  }

  std::string root_;
  std::string listing_before_;
  bool changes_host_ = false;
};

}  // namespace pathwarden::host_backend_testing

#endif  // PATHWARDEN_TESTS_HOST_HOST_BACKEND_FIXTURE_H_
