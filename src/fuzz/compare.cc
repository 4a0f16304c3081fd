// The fuzzer's comparator: first disagreement of an engine run and a
// kernel run, its one-line summary and its signature.

#include "src/fuzz/compare.h"

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/scenario/tree_diff.h"

namespace pathwarden::fuzz {
namespace {

// What differs first between two trees (in path order): the first field
// of the first object both have that differs in one of the fields below,
// or "presence" (an object only one has, before it or none).
std::string FirstTreeField(const std::vector<TreeEntry>& engine, const std::vector<TreeEntry>& kernel) {
  std::vector<internal::TreeDifference> diffs;
  if (!internal::TreeDifferences(engine, kernel, &diffs)) return "presence";
  for (const internal::TreeDifference& d : diffs) {
    if (d.engine < 0 || d.kernel < 0) return "presence";
    const TreeEntry& a = engine[d.engine];
    const TreeEntry& b = kernel[d.kernel];
    if (a.type != b.type) return "type";
    if (a.mode != b.mode) return "mode";
    if (a.uid != b.uid || a.gid != b.gid) return "owner";
    if (a.nlink != b.nlink) return "nlink";
    if (a.size != b.size) return "size";
    if (a.target != b.target) return "target";
    if (a.rdev_major != b.rdev_major || a.rdev_minor != b.rdev_minor) return "rdev";
    if (a.acl != b.acl) return "acl";
    if (a.default_acl != b.default_acl) return "default_acl";
  }
  return "presence";
}

}  // namespace


std::string Disagreement::Summary(const Scenario& s) const {
  switch (kind) {
    case Kind::kNone: return "no disagreement";
    case Kind::kStep:
      return fmt::format("engine {}, kernel {} at step {} ({}{})", ErrnoName(engine_err),
                         ErrnoName(kernel_err), step + 1,
                         s.steps[step].as == "root" ? "" : s.steps[step].as + ": ",
                         DescribeStep(s.steps[step], 60));
    case Kind::kTree:
      return fmt::format("final trees differ: {}{}", details.empty() ? "" : details[0],
                         tree_differences > 1 ? fmt::format(" (and {} more)", tree_differences - 1)
                                              : "");
    case Kind::kBuild:
      return fmt::format("builds differ: {}", details.empty() ? "" : details[0]);
  }
  return "";
}

std::string Disagreement::Signature() const {
  switch (kind) {
    case Kind::kNone: return "none";
    case Kind::kStep:
      return fmt::format("step {} {}/{}", OpName(op), ErrnoName(engine_err), ErrnoName(kernel_err));
    case Kind::kTree: return "tree " + tree_field;
    case Kind::kBuild: return "build";
  }
  return "";
}

Disagreement Compare(const Scenario& s, const RunResult& engine, const RunResult& kernel) {
  using Status = RunResult::Status;
  Disagreement d;
  if (kernel.status == Status::kSkipped) return d;
  if (engine.status == Status::kError || kernel.status == Status::kError) {
    if (engine.status == kernel.status) return d;  // both refuse the file
    d.kind = Disagreement::Kind::kBuild;
    d.details.push_back(engine.status == Status::kError ? "engine: " + engine.message
                                                        : "kernel: " + kernel.message);
    return d;
  }
  for (size_t i = 0; i < s.steps.size() && i < engine.steps.size() && i < kernel.steps.size(); ++i) {
    if (engine.steps[i].err == kernel.steps[i].err) continue;
    d.kind = Disagreement::Kind::kStep;
    d.step = i;
    d.op = s.steps[i].op;
    d.engine_err = engine.steps[i].err;
    d.kernel_err = kernel.steps[i].err;
    d.engine_reason = engine.steps[i].reason;
    return d;
  }
  d.details = DiffTrees(engine.tree, kernel.tree, Disagreement::kMaxTreeDetails, &d.tree_differences);
  if (!d.details.empty()) {
    d.kind = Disagreement::Kind::kTree;
    d.tree_field = FirstTreeField(engine.tree, kernel.tree);
  }
  return d;
}

bool HasDisagreement(const Scenario& s, const RunResult& engine, const RunResult& kernel,
                     const std::string& signature) {
  const Disagreement d = Compare(s, engine, kernel);
  return d && d.Signature() == signature;
}

}  // namespace pathwarden::fuzz
