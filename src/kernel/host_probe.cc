// Read-only requests on the host's paths as the real kernel answers them,
// in one child per identity that reports over a pipe.

#include "src/kernel/host_probe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/layer.h"
#include "src/kernel/probe_child.h"
#include "src/kernel/process_server.h"
#include "src/scenario/op_codec.h"
#include "src/task/request_fields.h"

namespace pathwarden::kernel_internal {
namespace {

using scenario_internal::Effect;

// A request as the step step_runner.cc runs, or why it is refused. (In
// this namespace a bare Request is the supervisor's wire message.)
Result<StepSpec, std::string> StepOf(const pathwarden::Request& request, bool changes) {
  auto at_cwd = [](const Fd& dirfd) -> Result<void, std::string> {
    if (dirfd.at_cwd()) return {};
    return Unexpected(fmt::format("dirfd {} is not AT_FDCWD (the probe has no descriptors)",
                                  dirfd.num));
  };
  StepSpec st;
  Result<void, std::string> ok;
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        // What the call changes is its codec row's (Effect): one that
        // reads runs anywhere, one that changes names only with `changes`
        // (inside a scratch directory), no other ever.
        const scenario_internal::OpCodec& c = scenario_internal::CodecOf(T::kOp);
        if (c.effect == Effect::kOther || (c.effect == Effect::kNames && !changes)) {
          ok = Unexpected(fmt::format("{} is not a read-only request the probe runs",
                                      OpName(T::kOp)));
          return;
        }
        // Each member into the step's field of its name, as the engine's
        // OpArgs takes them; a dirfd only AT_FDCWD (the step's is text).
        st.op = T::kOp;
        CopyRequestFields(r, st);
        if constexpr (requires { r.dirfd; }) ok = at_cwd(r.dirfd);
        if constexpr (requires { r.flags; r.path; }) {
          if (!changes && !scenario_internal::ChangesNothing(c, r.flags))
            ok = Unexpected(fmt::format(
                "{} of {} with O_CREAT, O_TRUNC or O_TMPFILE is refused: it changes the host",
                OpName(T::kOp), r.path));
        }
        if constexpr (std::is_same_v<T, Mknod>) {
          // A regular file, FIFO or socket, given exactly; anything else
          // (a device above all) is refused.
          const NodeType t = NodeTypeOf(r.type);
          if (FileTypeBits(t) == r.type &&
              (t == NodeType::kFile || t == NodeType::kFifo || t == NodeType::kSocket)) {
            st.mknod_type = t;
          } else {
            ok = Unexpected(std::string("mknod of a device is refused: it could reach a driver"));
          }
        }
      },
      request);
  if (!ok) return Unexpected(std::move(ok).error());
  return st;
}

std::string_view KindOfMode(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
  }
  return "a file of unknown type";
}

std::string Describe(const ChildMessage& m, const ProbeIdentity& who,
                     std::span<const LayerSpec> layers, std::span<const StepSpec> steps) {
  const auto at = [](int32_t i) { return static_cast<size_t>(i); };
  switch (m.kind) {
    case ChildMessage::kRefused:
      return fmt::format("request {}: open of {} {} is refused: it would reach a driver or a peer",
                         m.index, KindOfMode(m.mode), steps[at(m.index)].path);
    case ChildMessage::kRestoreCwd:
      return fmt::format("request {}: back to the working directory after chdir {}: fchdir: {}",
                         m.index, steps[at(m.index)].path, ErrnoName(m.err));
    case ChildMessage::kRulePath:
      return fmt::format("layer {}: rule path \"{}\" does not resolve: {}", m.index,
                         layers[at(m.index)].rules[at(m.rule)].path, ErrnoName(m.err));
    case ChildMessage::kCred:
      return fmt::format("taking the identity: {}: {}", m.call, ErrnoName(m.err));
    case ChildMessage::kSetup: {
      const std::string_view call = m.call;
      const std::string* dir = call == "chroot" ? &who.root : call == "chdir" ? &who.cwd : nullptr;
      return fmt::format("child setup: {}{}: {}", call, dir ? " " + *dir : "", ErrnoName(m.err));
    }
    case ChildMessage::kLayer: {
      LayerFailure f{static_cast<LayerFailure::Stage>(m.stage), at(m.rule)};
      return fmt::format("layer {}: {}", m.index, DescribeFailure(layers[at(m.index)], f, m.err));
    }
  }
  return fmt::format("child message of unknown kind {}", m.kind);
}

Result<LayerSpec, std::string> LayerOf(const LandlockRuleset& rs, size_t index) {
  LayerSpec layer;
  layer.handled_fs = rs.handled_access_fs;
  layer.handled_net = rs.handled_access_net;
  layer.scoped = rs.scoped;
  for (size_t i = 0; i < rs.rules.size(); ++i) {
    const LandlockRule& r = rs.rules[i];
    RuleSpec rule;
    rule.access = r.allowed_access;
    if (r.type == landlock::kRuleNetPort) {
      rule.is_port = true;
      rule.port = r.port;
    } else if (r.type == landlock::kRulePathBeneath && !r.parent.valid() && !r.path.empty()) {
      rule.path = r.path;
      rule.nofollow = r.nofollow;
    } else {
      return Unexpected(fmt::format(
          "layer {} rule {}: only path-beneath rules by path and port rules reach the host",
          index, i));
    }
    layer.rules.push_back(std::move(rule));
  }
  return layer;
}

std::string CapNames(uint64_t caps) {
  std::string out;
  for (int cap = 0; cap < 64; ++cap)
    if (caps & (uint64_t{1} << cap)) out += (out.empty() ? "" : ", ") + CapName(cap);
  return out;
}

// capset() refuses both with EPERM; saying which capabilities is kinder.
std::string CapsReason(const Cred& cred) {
  if (uint64_t extra = cred.cap_effective & ~cred.cap_permitted; extra != 0)
    return fmt::format("effective capabilities beyond the permitted set: {}", CapNames(extra));
  if (uint64_t missing = cred.cap_permitted & ~AvailableCaps(); missing != 0)
    return fmt::format("capabilities this process cannot grant (not in its permitted set): {}",
                       CapNames(missing));
  return "";
}

}  // namespace

Result<std::vector<int>, std::string> ProbeHost(const ProbeIdentity& who,
                                                std::span<const pathwarden::Request> requests) {
  return ProbeHostChanging(who, requests, false);
}

Result<std::vector<int>, std::string> ProbeHere(std::span<const pathwarden::Request> requests,
                                                bool changes) {
  std::vector<StepSpec> steps;
  steps.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    auto st = StepOf(requests[i], changes);
    if (!st) return Unexpected(fmt::format("request {}: {}", i, st.error()));
    uint32_t mode = 0;
    if (st->op == Op::kOpen && OpensSpecialFile(*st, &mode))
      return Unexpected(fmt::format("request {}: opening a {} is refused", i, KindOfMode(mode)));
    steps.push_back(std::move(*st));
  }
  const int start = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (start < 0) return Unexpected(fmt::format("open .: {}", ErrnoName(errno)));
  const ProcessTable no_peers;
  FdTable fds;
  std::vector<int> errs;
  std::string failure;
  for (const StepSpec& st : steps) {
    const int err = RunStep(no_peers, st, kernel_internal::Request{}, &fds);
    errs.push_back(err);
    if (st.op == Op::kChdir && err == 0 && fchdir(start) != 0) {
      failure = fmt::format("back to the working directory: {}", ErrnoName(errno));
      break;
    }
  }
  close(start);
  if (!failure.empty()) return Unexpected(failure);
  return errs;
}

Result<std::vector<int>, std::string> ProbeHostChanging(
    const ProbeIdentity& who, std::span<const pathwarden::Request> requests, bool changes) {
  if (std::string why = CapsReason(who.cred); !why.empty())
    return Unexpected("the identity: " + why);
  std::vector<StepSpec> steps;
  steps.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    auto st = StepOf(requests[i], changes);
    if (!st) return Unexpected(fmt::format("request {}: {}", i, st.error()));
    steps.push_back(std::move(*st));
  }
  ProbeJob job{.cred = who.cred,
               .groups = {who.cred.groups().begin(), who.cred.groups().end()},
               .root = who.root,
               .cwd = who.cwd,
               .layers = {},
               .steps = std::move(steps)};
  for (size_t l = 0; l < who.layers.size(); ++l) {
    auto layer = LayerOf(who.layers[l], l);
    if (!layer) return Unexpected(std::move(layer).error());
    job.layers.push_back(std::move(*layer));
  }
  auto child = ProbeChild::Start(job);
  if (!child) return Unexpected(std::move(child).error());
  std::vector<int> errs;
  std::string failure;
  ChildMessage m;
  size_t got = 0;
  for (;;) {
    ssize_t n = read(child->out(), reinterpret_cast<char*>(&m) + got, sizeof(m) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
    if (got < sizeof(m)) continue;
    got = 0;
    if (m.kind == ChildMessage::kAnswer && static_cast<size_t>(m.index) == errs.size() &&
        errs.size() < job.steps.size()) {
      errs.push_back(m.err);
    } else if (failure.empty()) {
      failure = m.kind == ChildMessage::kAnswer
                    ? fmt::format("answer for request {} out of order", m.index)
                    : Describe(m, who, job.layers, job.steps);
    }
  }
  auto waited = child->Wait();
  if (!waited) return Unexpected(std::move(waited).error());
  const int status = *waited;
  if (!failure.empty()) return Unexpected(failure);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || errs.size() != job.steps.size())
    return Unexpected(fmt::format("the probe child ended ({}) after {} of {} answers",
                                  WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                                                      : fmt::format("exit {}", WEXITSTATUS(status)),
                                  errs.size(), job.steps.size()));
  return errs;
}

}  // namespace pathwarden::kernel_internal
