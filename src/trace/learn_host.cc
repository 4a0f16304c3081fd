// Learning a policy for this machine (learn_host.h).

#include "src/trace/learn_host.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "pathwarden/landlock.h"
#include "src/sandbox/run.h"

namespace pathwarden::trace {
namespace {

// The directory entries beneath `dir` (at most `cap`, symlinks not
// followed, unreadable directories skipped).
uint64_t EntriesBeneath(const std::string& dir, uint64_t cap) {
  std::error_code ec;
  uint64_t n = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator() && n < cap; it.increment(ec))
    ++n;
  return n;
}

}  // namespace

LearnOptions HostLearnOptions() {
  LearnOptions o;
  const int abi = sandbox::ProbeAbi();
  // A kernel newer than the rights known here: the policy says what it
  // can, at the latest ABI known.
  o.abi = abi > 0 ? std::min(abi, landlock::kAbiLatest) : landlock::kAbiLatest;
  if (const char* home = std::getenv("HOME"); home && home[0] == '/' && std::string(home) != "/")
    o.home = std::filesystem::path(home).lexically_normal().string();
  if (o.home.size() > 1 && o.home.back() == '/') o.home.pop_back();
  o.never_widen = {"/dev"};
  return o;
}

Result<LearnReport, std::string> LearnOnHost(std::span<const Need> needs,
                                             const LearnOptions& options) {
  Learner learner;
  std::vector<std::string> warnings;
  std::set<std::string> refused;
  for (const Need& n : needs) {
    auto r = learner.Add(n);
    if (r) continue;
    const std::string key = n.kind == Need::Kind::kNet ? fmt::format("port {}", n.port) : n.path;
    if (refused.insert(key).second) warnings.push_back("not learnt: " + r.error());
  }
  auto learnt = LearnOnHost(learner, options);
  if (learnt) learnt->warnings = std::move(warnings);
  return learnt;
}

Result<LearnReport, std::string> LearnOnHost(const Learner& learner, const LearnOptions& options) {
  LearnReport report;
  auto learnt = learner.Learn(options);
  if (!learnt) return Unexpected(learnt.error());
  report.policy = std::move(*learnt);
  for (const LearntRule& r : report.policy.paths) {
    if (!r.widened || !r.directory) continue;
    constexpr uint64_t kCap = 100000;
    const uint64_t all = EntriesBeneath(r.path, kCap);
    std::string names;
    for (const std::string& n : FsRightNames(r.widened, true, report.policy.abi))
      names += (names.empty() ? "" : ",") + n;
    report.beyond.push_back(fmt::format("{} on all {}{} entries beneath {} (the run used {} of them)",
                                        names, all >= kCap ? "at least " : "", all, r.path,
                                        r.widened_entries));
  }
  return report;
}

}  // namespace pathwarden::trace
