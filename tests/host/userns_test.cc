// explain in user namespaces and on idmapped mounts, with the kernel as
// the judge (issues 27 and 30). In a user namespace the engine applies the
// namespace's rules (capabilities over mapped inodes only, capable() never,
// chown's unmapped ids refused), so it must give the kernel's answer where
// it can see the ids, and never "allowed" where the kernel refuses; a walk
// through an idmapped mount, not modelled yet, is unknown. Root only;
// skipped elsewhere.
//
// - UserNamespaces: a scratch tmpfs (in a private mount namespace of this
//   test's process) of directories and files of several owners and
//   modes, each file in copies so that every changing call acts on its
//   own object. For each namespace below, this process first asks every
//   query as `explain --pid CHILD` would from the initial namespace
//   (AskFromOutside(): the kernel's ids; every answer must be the
//   kernel's); then a child in it asks, as `explain` run there would
//   (ResolveIdentity(), Session: the host read from inside), every query,
//   and makes the same calls itself (ProbeHere(): its own credentials,
//   unmapped groups included).
//     root as root        uid_map/gid_map "0 0 1", every capability
//     a user as root      "0 1000 1" + "1 100000 65536", supplementary
//                         groups 0 and 27 left unmapped (shown 65534);
//                         from inside, owners shown as 65534 may be
//                         mapped or not: unknown where that decides
//     a capable user      "0 0 1" + "1000 1000 1"; uid 1000 in it with
//                         CAP_DAC_READ_SEARCH, CAP_FOWNER and CAP_CHOWN
//                         (explain --uid 1000 --caps ...)
// - IdmappedMounts: the same kind of tree, bound at a second place with an
//   idmapping (mount_setattr(MOUNT_ATTR_IDMAP), "0 10000 1000": owner 0
//   shown as 10000, 1000 and 1001 unmapped), read-only queries through it
//   and through the plain tree and every query of QueryLines() through
//   it, as root, root without capabilities, uid 1000 and uid 10000 (0
//   through the mount), against ProbeHostChanging().

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pathwarden/errno.h"
#include "src/identity/identity.h"
#include "src/kernel/host_probe.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/scratch_host.h"
#include "src/query/explain.h"
#include "src/query/query.h"
#include "tests/host/host_tree.h"
#include "tests/host/scratch_fixture.h"

namespace pathwarden {
namespace {

using kernel_internal::EnterPrivateMountNamespace;
using kernel_internal::ProbeHere;
using kernel_internal::ProbeHost;
using kernel_internal::ProbeIdentity;
using query::Session;
using namespace host_test;

// Each query asked of `session` first, then made on the kernel here.
Outcome AskAndProbe(Session& session, const std::vector<std::string>& lines) {
  auto o = Compare(session, lines, [](std::span<const Request> r) { return ProbeHere(r, true); });
  if (o) return *o;
  Outcome failed;
  failed.failure = o.error();
  return failed;
}

// The outcome through a pipe, as lines.
void WriteOutcome(int fd, const Outcome& o) {
  std::string text = fmt::format("{} {} {} {}\n", o.queries, o.agree, o.unknown, o.denied_other_errno);
  auto line = [&](char tag, const std::string& s) {
    std::string flat = s;
    for (char& c : flat)
      if (c == '\n') c = ' ';
    text += fmt::format("{} {}\n", tag, flat);
  };
  for (const std::string& s : o.false_ok) line('F', s);
  for (const std::string& s : o.wrong) line('W', s);
  for (const std::string& s : o.unknowns) line('U', s);
  std::string errnos;
  for (int k : o.kernel) errnos += fmt::format("{} ", k);
  line('K', errnos);
  std::string asked;
  for (int k : o.as_userns) asked += fmt::format("{} ", k);
  line('N', asked);
  if (!o.failure.empty()) line('X', o.failure);
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

Outcome ReadOutcome(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  Outcome o;
  std::istringstream in(text);
  std::string first;
  if (!std::getline(in, first)) {
    o.failure = "the child reported nothing";
    return o;
  }
  std::istringstream counts(first);
  counts >> o.queries >> o.agree >> o.unknown >> o.denied_other_errno;
  for (std::string l; std::getline(in, l);) {
    if (l.size() < 2) continue;
    const std::string rest = l.substr(2);
    if (l[0] == 'F') o.false_ok.push_back(rest);
    if (l[0] == 'W') o.wrong.push_back(rest);
    if (l[0] == 'U') o.unknowns.push_back(rest);
    if (l[0] == 'K' || l[0] == 'N') {
      std::istringstream errnos(rest);
      for (int k; errnos >> k;) (l[0] == 'K' ? o.kernel : o.as_userns).push_back(k);
    }
    if (l[0] == 'X') o.failure = rest;
  }
  return o;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// A namespace to ask from: its maps, the groups its child keeps, and the
// identity explain is given there (none: the child's own).
struct NsCase {
  std::string name;
  std::string uid_map, gid_map;
  std::vector<gid_t> groups;  // set before entering it
  uid_t uid = 0;              // the ids it enters with
  gid_t gid = 0;
  identity::IdentityOptions who;
  std::string chown_self, chown_other;
  // The namespace maps neither overflow id: asked from inside, an owner
  // shown as one is known to be unmapped.
  bool exact_inside = false;
};

// A uid_map's text ("0 1000 1\n1 100000 65536\n") as --userns takes it
// ("0:1000:1,1:100000:65536").
std::string MapFlag(const std::string& map) {
  std::string out;
  std::istringstream lines(map);
  for (std::string inside, outside, count; lines >> inside >> outside >> count;)
    out += fmt::format("{}{}:{}:{}", out.empty() ? "" : ",", inside, outside, count);
  return out;
}

// "UID:GID" of the namespace's own ids in the initial namespace's terms,
// through `map` ("inside outside count" lines, the same for gids): an id
// without a mapping stays as it is, which `map` must not have as an
// outside id either (the call it stands for names an unmapped id).
std::string OutsideIds(const std::string& ids, const std::string& map) {
  auto one = [&](uint32_t id) {
    std::istringstream lines(map);
    for (uint32_t inside, outside, count; lines >> inside >> outside >> count;) {
      if (id >= inside && id - inside < count) return outside + (id - inside);
      EXPECT_FALSE(id >= outside && id - outside < count) << id << " in " << map;
    }
    return id;
  };
  const size_t colon = ids.find(':');
  return fmt::format("{}:{}", one(static_cast<uint32_t>(std::stoul(ids.substr(0, colon)))),
                     one(static_cast<uint32_t>(std::stoul(ids.substr(colon + 1)))));
}

// Each of `lines` asked of a session for `who`, read as explain reads the
// host (the scratch tree is this test's own: no process pathwarden cannot
// see runs a program from it).
Result<std::vector<Decision>, std::string> AskAll(identity::Identity who,
                                                  const std::vector<std::string>& lines) {
  who.assume_unseen_run_nothing = true;
  who.trusted_lsms = RootIdleModules();
  auto session = Session::Open(who, {});
  if (!session) return Unexpected(session.error());
  std::vector<Decision> out;
  for (const std::string& l : lines) {
    auto q = query::ParseQueryLine(l);
    if (!q) return Unexpected(fmt::format("{}: {}", l, q.error()));
    out.push_back((*session)->Ask(*q, false).decision);
  }
  return out;
}

// Asks `lines` as `explain --pid PID` (with the case's identity options)
// run here, in the initial namespace, would: the host and the process read
// from outside its namespace.
Result<std::vector<Decision>, std::string> AskFromOutside(const NsCase& c, pid_t pid,
                                                          const std::vector<std::string>& lines) {
  identity::IdentityOptions o = c.who;
  o.pid = pid;
  auto who = identity::ResolveIdentity(o);
  if (!who) return Unexpected(who.error());
  if (who->cred.InInitialUserNs())
    return Unexpected(std::string("the process was read as the initial namespace's"));
  if (who->cred.userns->reader_inside) return Unexpected(std::string("read as from inside"));
  return AskAll(*who, lines);
}

// Asks `lines` as `explain --userns MAP [--uid ...]` run by this process
// (in the initial namespace, with the ids and groups the child enters
// with) would, before it enters the namespace: the identity it will have
// there, from the map alone. Each answer's errno, -1 for unknown.
Result<std::vector<int>, std::string> AskAsNewUserNs(const NsCase& c,
                                                     const std::vector<std::string>& lines) {
  identity::IdentityOptions o;
  auto map = ParseIdMap(MapFlag(c.uid_map), "--userns");
  if (!map) return Unexpected(map.error());
  o.userns_uids = *map;
  o.uid = c.who.uid.value_or(0);
  o.gid = c.who.gid.value_or(0);
  o.groups = c.who.groups;  // none: the caller's own, kept across unshare()
  o.caps = c.who.caps;
  auto who = identity::ResolveIdentity(o);
  if (!who) return Unexpected(who.error());
  auto decisions = AskAll(*who, lines);
  if (!decisions) return Unexpected(decisions.error());
  std::vector<int> out;
  for (const Decision& d : *decisions) out.push_back(d.unknown() ? -1 : d.err());
  return out;
}

// Forks a child that enters a new user namespace with `c`'s maps, then
// asks and probes `lines` (AskAndProbe()); its outcome. Before the child
// changes anything, this process asks `outside_lines` (the same queries,
// their ids in its own terms) of it from outside (AskFromOutside()).
Outcome RunInUserNs(const NsCase& c, const std::vector<std::string>& lines,
                    const std::vector<std::string>& outside_lines,
                    std::vector<Decision>* outside) {
  int ready[2], go[2], out[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
    {
    Outcome o;
    o.failure = "pipe2";
    return o;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    Outcome o;
    o.failure = "fork";
    return o;
  }
  if (pid == 0) {
    close(ready[0]);
    close(go[1]);
    close(out[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    Outcome o;
    char b = 0;
    // Where ctest started it (the build tree) may be a directory the
    // namespace's ids cannot search (a clone under mktemp -d's 0700): the
    // queries name absolute paths, and the session starts at /.
    std::vector<int> as_userns;  // AskAndProbe() makes `o` afresh
    if (chdir("/") != 0) {
      o.failure = fmt::format("chdir /: {}", std::strerror(errno));
    } else if (setgroups(c.groups.size(), c.groups.data()) != 0) {
      o.failure = fmt::format("setgroups: {}", std::strerror(errno));
    } else if (setresgid(c.gid, c.gid, c.gid) != 0 || setresuid(c.uid, c.uid, c.uid) != 0) {
      o.failure = fmt::format("setresuid: {}", std::strerror(errno));
    } else if (auto asked = AskAsNewUserNs(c, outside_lines); !asked) {
      o.failure = "asking as --userns: " + asked.error();
    } else if (as_userns = std::move(*asked);
               prctl(PR_SET_DUMPABLE, 1) != 0 || unshare(CLONE_NEWUSER) != 0) {
      o.failure = fmt::format("unshare(CLONE_NEWUSER): {}", std::strerror(errno));
    }
    if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1) _exit(1);
    if (o.failure.empty() && b != 1) o.failure = "the parent could not write the maps";
    if (o.failure.empty()) {
      auto who = identity::ResolveIdentity(c.who);
      if (!who) {
        o.failure = who.error();
      } else if (who->cred.InInitialUserNs()) {
        o.failure = "the identity was read as the initial user namespace's";
      } else {
        // The scratch tree is this test's own (its private mount
        // namespace): no process unseen from inside runs a program there.
        who->assume_unseen_run_nothing = true;
        who->trusted_lsms = RootIdleModules();
        auto session = Session::Open(*who, {});
        if (!session) {
          o.failure = session.error();
        } else if (c.who.uid) {
          // explain --uid: the kernel's side takes that identity too, as
          // a capable user of the namespace (its ids are the namespace's).
          ProbeIdentity id{who->cred};
          auto compared = Compare(**session, lines, [&](std::span<const Request> r) {
            return kernel_internal::ProbeHostChanging(id, r, true);
          });
          if (compared) {
            o = *compared;
          } else {
            o = Outcome{};
            o.failure = compared.error();
          }
        } else {
          o = AskAndProbe(**session, lines);
        }
      }
    }
    o.as_userns = std::move(as_userns);
    WriteOutcome(out[1], o);
    _exit(0);
  }
  close(ready[1]);
  close(go[0]);
  close(out[1]);
  char b = 0;
  Outcome failed;
  if (read(ready[0], &b, 1) != 1) failed.failure = "the child did not get ready";
  b = WriteFile(fmt::format("/proc/{}/uid_map", pid), c.uid_map) &&
      WriteFile(fmt::format("/proc/{}/gid_map", pid), c.gid_map);
  if (b == 1) {
    auto asked = AskFromOutside(c, pid, outside_lines);
    if (!asked) failed.failure = "asking from outside: " + asked.error();
    if (asked) *outside = std::move(*asked);
  }
  if (write(go[1], &b, 1) != 1) failed.failure = "the child went away";
  Outcome o = ReadOutcome(out[0]);
  close(ready[0]);
  close(go[1]);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!failed.failure.empty()) return failed;
  return o;
}

class UserNsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "not root";
    if (std::string e = EnterPrivateMountNamespace(); !e.empty()) GTEST_SKIP() << e;
    ASSERT_EQ(scratch_.Make(), "");
    auto t = BuildTree(scratch_.dir());
    ASSERT_TRUE(t.has_value()) << t.error();
    tree_ = std::move(*t);
  }
  Scratch scratch_{"userns"};
  TreeSpec tree_;
};

// Copies used by one case are used up: each case gets a fresh tree.
TEST_F(UserNsTest, NeverAllowedWhereTheKernelRefuses) {
  identity::IdentityOptions capable;
  capable.uid = 1000;
  capable.gid = 1000;
  capable.groups = std::vector<uint32_t>{1000};
  capable.caps = CapBit(kCapDacReadSearch) | CapBit(kCapFowner) | CapBit(kCapChown);
  auto make = [](std::string name, std::string map, std::vector<gid_t> groups,
                 identity::IdentityOptions who, std::string self, std::string other, uid_t uid,
                 bool exact_inside) {
    NsCase c;
    c.exact_inside = exact_inside;
    c.name = std::move(name);
    c.uid_map = c.gid_map = std::move(map);
    c.groups = std::move(groups);
    c.who = std::move(who);
    c.chown_self = std::move(self);
    c.chown_other = std::move(other);
    c.uid = uid;
    c.gid = uid;
    return c;
  };
  const std::vector<NsCase> cases = {
      make("root as root (0 0 1)", "0 0 1\n", {0}, {}, "0:0", "1000:1000", 0, true),
      make("uid 1000 as root (0 1000 1, 1 100000 65536; groups 0 and 27 unmapped)",
           "0 1000 1\n1 100000 65536\n", {0, 27}, {}, "0:0", "1001:1001", 1000, false),
      make("a capable user (0 0 1, 1000 1000 1; uid 1000 with CAP_DAC_READ_SEARCH, CAP_FOWNER, "
           "CAP_CHOWN)",
           "0 0 1\n1000 1000 1\n", {0}, capable, "1000:1000", "0:0", 0, true),
  };

  (void)RootIdleModules();  // read as root, before the children drop it
  size_t total = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const NsCase& c = cases[i];
    // A fresh tree per case, below its own directory.
    const std::string root = fmt::format("{}/case{}", scratch_.dir(), i);
    ASSERT_TRUE(MakeNode(root, true, 0, 0, 0755));
    auto t = BuildTree(root);
    ASSERT_TRUE(t.has_value()) << t.error();
    const std::vector<std::string> lines = QueryLines(root, *t, c.chown_self, c.chown_other);
    const std::vector<std::string> outside_lines =
        QueryLines(root, *t, OutsideIds(c.chown_self, c.uid_map),
                   OutsideIds(c.chown_other, c.uid_map));
    std::vector<Decision> outside;
    const Outcome o = RunInUserNs(c, lines, outside_lines, &outside);
    ASSERT_EQ(o.failure, "") << c.name;
    ASSERT_EQ(o.kernel.size(), lines.size()) << c.name;
    ASSERT_EQ(outside.size(), lines.size()) << c.name;
    EXPECT_EQ(o.queries, lines.size()) << c.name;
    total += o.queries;
    std::string false_oks;
    for (const std::string& f : o.false_ok) false_oks += "\n  " + f;
    EXPECT_TRUE(o.false_ok.empty()) << c.name << ": " << o.false_ok.size()
                                    << " allowed where the kernel refuses:" << false_oks;
    std::string wrong;
    for (const std::string& w : o.wrong) wrong += "\n  " + w;
    EXPECT_TRUE(o.wrong.empty()) << c.name << ": " << o.wrong.size()
                                 << " denied with another errno than the kernel's:" << wrong;
    // Not everything is unknown: what the namespace cannot change is
    // answered (and agrees).
    EXPECT_GT(o.agree, o.queries / 4) << c.name << ": " << o.agree << " agree, " << o.unknown
                                      << " unknown of " << o.queries;
    // Where the namespace does not map the overflow ids, an owner shown
    // as them is known to be unmapped: the only unknowns left are the
    // file whose ACL names an id the namespace does not map (getxattr()
    // shows it as (uid_t)-1, which the decoder refuses as Linux would).
    if (c.exact_inside) {
      for (const std::string& u : o.unknowns)
        EXPECT_NE(u.find("/acl\""), std::string::npos) << c.name << ": unknown: " << u;
    }
    // explain --userns, asked before the child entered: the same.
    ASSERT_EQ(o.as_userns.size(), lines.size()) << c.name;
    size_t userns_agree = 0;
    for (size_t q = 0; q < lines.size(); ++q) {
      EXPECT_EQ(o.as_userns[q], o.kernel[q])
          << c.name << " (explain --userns " << MapFlag(c.uid_map) << "): " << outside_lines[q]
          << ": engine " << (o.as_userns[q] < 0 ? "unknown" : Name(o.as_userns[q]))
          << ", kernel " << Name(o.kernel[q]);
      userns_agree += o.as_userns[q] == o.kernel[q];
    }
    // From outside, with the kernel's own ids, everything is known and
    // the kernel's answer.
    Outcome from_outside;
    Tally(outside_lines, outside, o.kernel, from_outside);
    EXPECT_EQ(from_outside.agree, lines.size())
        << c.name << " (asked from outside): " << from_outside.unknown << " unknown, "
        << from_outside.false_ok.size() << " allowed where the kernel refuses, "
        << from_outside.wrong.size() << " with another errno";
    for (const auto* list : {&from_outside.false_ok, &from_outside.wrong, &from_outside.unknowns})
      for (const std::string& l : *list) ADD_FAILURE() << c.name << " (from outside): " << l;
    std::printf("%s: %zu queries; asked inside, %zu agree with the kernel, %zu unknown; asked "
                "from outside, explain --pid: %zu agree, %zu unknown; explain --userns: %zu "
                "agree\n",
                c.name.c_str(), o.queries, o.agree, o.unknown, from_outside.agree,
                from_outside.unknown, userns_agree);
  }
  EXPECT_GE(total, 200u);
}

// An idmapped mount of a tmpfs: an idmapping from a user namespace whose
// uid_map and gid_map are "0 10000 1000".
Result<void, std::string> IdmappedBind(const std::string& source, const std::string& target) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return Unexpected(std::string("pipe2"));
  const pid_t pid = fork();
  if (pid < 0) return Unexpected(std::string("fork"));
  if (pid == 0) {
    close(ready[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char b = unshare(CLONE_NEWUSER) == 0 ? 1 : 0;
    if (write(ready[1], &b, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char b = 0;
  const bool up = read(ready[0], &b, 1) == 1 && b == 1;
  close(ready[0]);
  std::string failure;
  int ns = -1, tree = -1;
  if (!up) {
    failure = "unshare(CLONE_NEWUSER) in the child";
  } else if (!WriteFile(fmt::format("/proc/{}/uid_map", pid), "0 10000 1000\n") ||
             !WriteFile(fmt::format("/proc/{}/gid_map", pid), "0 10000 1000\n")) {
    failure = "writing the child's maps";
  } else if ((ns = open(fmt::format("/proc/{}/ns/user", pid).c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
    failure = fmt::format("open ns/user: {}", std::strerror(errno));
  } else if ((tree = static_cast<int>(syscall(SYS_open_tree, AT_FDCWD, source.c_str(),
                                              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC))) < 0) {
    failure = fmt::format("open_tree: {}", std::strerror(errno));
  } else {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_IDMAP;
    attr.userns_fd = static_cast<uint64_t>(ns);
    if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
      failure = fmt::format("mount_setattr(MOUNT_ATTR_IDMAP): {}", std::strerror(errno));
    else if (syscall(SYS_move_mount, tree, "", AT_FDCWD, target.c_str(),
                     MOVE_MOUNT_F_EMPTY_PATH) != 0)
      failure = fmt::format("move_mount: {}", std::strerror(errno));
  }
  if (tree >= 0) close(tree);
  if (ns >= 0) close(ns);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  if (!failure.empty()) return Unexpected(failure);
  return {};
}

TEST_F(UserNsTest, AnIdmappedMountIsTheKernelsAnswer) {
  struct Who {
    const char* name;
    Cred cred;
    const char* chown_self;   // in the mount's terms
    const char* chown_other;
  };
  Cred none = Cred::ForUser(0, 0);
  none.cap_effective = none.cap_permitted = 0;
  Cred root = Cred::ForUser(0, 0);
  root.cap_effective = root.cap_permitted = kernel_internal::AvailableCaps();
  Cred user = Cred::ForUser(1000, 1000);
  user.SetGroups({1000});
  Cred mapped_user = Cred::ForUser(10000, 10000);
  mapped_user.SetGroups({10000});
  // uid 0 and 1000 map to no id of the tmpfs (creating there is
  // EOVERFLOW); 10000 is its owner 0 through the mount.
  const Who whos[] = {{"root", root, "10000:10000", "1000:1000"},
                      {"root without capabilities", none, "10000:10000", "1000:1000"},
                      {"uid 1000", user, "1000:1000", "10000:10000"},
                      {"uid 10000 (0 through the mount)", mapped_user, "10000:10000",
                       "10001:10001"}};
  size_t total = 0, mapped_queries = 0;
  for (size_t k = 0; k < std::size(whos); ++k) {
    const Who& w = whos[k];
    // A fresh tree per identity (the changing queries use up copies),
    // bound, idmapped, onto a directory of the scratch tmpfs (so nothing
    // of the host's is touched); mountinfo says so.
    const std::string plain = fmt::format("{}/case{}", scratch_.dir(), k);
    const std::string mapped = plain + ".idmapped";
    ASSERT_TRUE(MakeNode(plain, true, 0, 0, 0755));
    ASSERT_EQ(mkdir(mapped.c_str(), 0755), 0) << std::strerror(errno);
    auto t = BuildTree(plain);
    ASSERT_TRUE(t.has_value()) << t.error();
    auto bound = IdmappedBind(plain, mapped);
    if (!bound) GTEST_SKIP() << "no idmapped mount here: " << bound.error();
    scratch_.AddMount(mapped);
    std::ifstream mi("/proc/self/mountinfo");
    std::string line;
    bool listed = false;
    while (std::getline(mi, line))
      if (line.find(" " + mapped + " ") != std::string::npos && line.find("idmapped") != std::string::npos)
        listed = true;
    ASSERT_TRUE(listed) << "mountinfo does not list " << mapped << " as idmapped";
    // Read-only queries through both mounts, then every query through the
    // idmapped one.
    std::vector<std::string> lines;
    for (const std::string& base : {plain, mapped}) {
      for (const std::string& d : t->dirs) {
        for (const char* op : {"stat", "chdir", "access"})
          lines.push_back(fmt::format("{} {}", op, Q(base + "/" + d)));
        lines.push_back(fmt::format("open {} O_RDONLY|O_DIRECTORY", Q(base + "/" + d)));
      }
      for (const std::string& f : t->files) {
        for (const char* flags : {"O_RDONLY", "O_WRONLY"})
          lines.push_back(fmt::format("open {} {}", Q(base + "/" + f), flags));
        lines.push_back(fmt::format("access {} R_OK|AT_EACCESS", Q(base + "/" + f)));
      }
    }
    // An ACL naming an id the mount maps (0, shown as 10000) and one it
    // does not (1001): the unmapped entry matches no one.
    const std::string acl = plain + "/acl_mapped";
    ASSERT_TRUE(MakeNode(acl, false, 1001, 1001, 0660));
    // u::rw-, u:0:r--, u:1001:rw-, g::---, m::rw-, o::---
    const unsigned char v[] = {2, 0, 0, 0, 1,    0, 6, 0, 0, 0, 0, 0, 2, 0, 4, 0, 0, 0, 0, 0,
                               2, 0, 6, 0, 0xe9, 3, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 6, 0,
                               0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_EQ(setxattr(acl.c_str(), "system.posix_acl_access", v, sizeof v, 0), 0)
        << std::strerror(errno);
    for (const std::string& base : {plain, mapped})
      for (const char* how : {"open {} O_RDONLY", "open {} O_WRONLY", "access {} R_OK|AT_EACCESS"})
        lines.push_back(fmt::format(fmt::runtime(how), Q(base + "/acl_mapped")));
    const size_t read_only = lines.size();
    for (const std::string& l : QueryLines(mapped, *t, w.chown_self, w.chown_other))
      lines.push_back(l);
    auto compared = AskAndCompare(w.cred, {}, lines);
    ASSERT_TRUE(compared.has_value()) << w.name << ": " << compared.error();
    const Outcome& o = *compared;
    total += o.queries;
    mapped_queries += lines.size() - read_only / 2;
    // None unknown: an ACL entry naming an id the mount maps nowhere
    // (getxattr() shows it as (uid_t)-1) matches no one.
    ExpectAllAgree(o, lines.size(), w.name);
    std::printf("%s: %zu queries, %zu through the idmapped mount; %zu agree with the kernel, "
                "%zu unknown\n",
                w.name, lines.size(), lines.size() - read_only / 2, o.agree, o.unknown);
  }
  EXPECT_GE(total, 1000u);
  EXPECT_GT(mapped_queries, 500u);
}

}  // namespace
}  // namespace pathwarden
