// The fuzzer's comparator: first disagreement of an engine run and a
// kernel run, its one-line summary and its signature.

#include "src/fuzz/compare.h"

#include <fmt/format.h>

#include "pathwarden/errno.h"

namespace pathwarden::fuzz {
namespace {

std::string Short(const std::string& path) {
  if (path.size() <= 60) return path;
  return path.substr(0, 28) + "..." + path.substr(path.size() - 28);
}

// What differs first between two trees (sorted by path).
std::string FirstTreeField(const std::vector<TreeEntry>& engine, const std::vector<TreeEntry>& kernel) {
  size_t i = 0, j = 0;
  for (; i < engine.size() && j < kernel.size(); ++i, ++j) {
    const TreeEntry& a = engine[i];
    const TreeEntry& b = kernel[j];
    if (a.path != b.path) return "presence";
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


std::string DescribeStep(const StepSpec& st) {
  std::string s(OpName(st.op));
  if (!st.fd.empty() && st.op != Op::kOpen) s += " fd " + st.fd;
  if (!st.dirfd.empty()) s += " at " + st.dirfd;
  switch (st.op) {
    case Op::kClose:
    case Op::kFtruncate:
    case Op::kFchdir:
    case Op::kBindTcp:
    case Op::kConnectTcp:
    case Op::kRestrict: break;
    case Op::kSignal:
    case Op::kConnectAbstract:
    case Op::kSendFd: s += " to " + st.target; break;
    case Op::kIoctl: s += " " + st.cmd_text; break;
    default: s += " " + (st.path.empty() ? std::string("\"\"") : Short(st.path));
  }
  if (st.op == Op::kLink || st.op == Op::kRename || st.op == Op::kBindMount) s += " " + Short(st.path2);
  if (st.op == Op::kSymlink) s += " -> " + Short(st.target);
  if (st.op == Op::kBindTcp || st.op == Op::kConnectTcp) s += fmt::format(" port {}", st.port);
  if (st.op == Op::kChmod || st.op == Op::kMkdir || st.op == Op::kMknod ||
      (st.op == Op::kOpen && (st.flags & 0100)))
    s += fmt::format(" 0o{:o}", st.mode);
  if (st.op == Op::kChown || st.op == Op::kLchown) s += fmt::format(" {}:{}", st.uid, st.gid);
  std::string flags = FormatStepFlags(st);
  if (!flags.empty() && (st.flags != 0 || st.access_mode != 0 || st.op == Op::kOpen)) s += " " + flags;
  if (st.op == Op::kOpen && !st.fd.empty()) s += " as " + st.fd;
  return s;
}

std::string Disagreement::Summary(const Scenario& s) const {
  switch (kind) {
    case Kind::kNone: return "no disagreement";
    case Kind::kStep:
      return fmt::format("engine {}, kernel {} at step {} ({}{})", ErrnoName(engine_err),
                         ErrnoName(kernel_err), step + 1,
                         s.steps[step].as == "root" ? "" : s.steps[step].as + ": ",
                         DescribeStep(s.steps[step]));
    case Kind::kTree:
      return fmt::format("final trees differ: {}{}", details.empty() ? "" : details[0],
                         details.size() > 1 ? fmt::format(" (and {} more)", details.size() - 1) : "");
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
  d.details = DiffTrees(engine.tree, kernel.tree);
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
