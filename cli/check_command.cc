// `pathwarden check`: run scenario files in the engine, on the kernel, or
// both, and report every step with its result, expectation and reason.

#include "cli/check_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"

namespace pathwarden::cli {
namespace {

std::string Names(landlock::AccessMask m, int n, std::string_view (*name)(int)) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (!(m & (1u << i))) continue;
    if (!s.empty()) s += ',';
    s += name(i);
  }
  return s;
}

// A short rendering of what a step does: "open /a O_WRONLY".
std::string DescribeStep(const StepSpec& st) {
  std::string op(OpName(st.op));
  std::string flags = FormatStepFlags(st);
  auto with_flags = [&](std::string s) {
    if (!flags.empty() && (st.flags != 0 || st.access_mode != 0 || st.op == Op::kOpen))
      s += " " + flags;
    return s;
  };
  std::string at = st.dirfd.empty() ? "" : fmt::format(" (at fd {})", st.dirfd);
  switch (st.op) {
    case Op::kClose:
    case Op::kFtruncate:
    case Op::kFchdir: return fmt::format("{} fd {}", op, st.fd);
    case Op::kIoctl: return fmt::format("ioctl fd {} {}", st.fd, st.cmd_text);
    case Op::kSymlink: return fmt::format("symlink {}{} -> \"{}\"", st.path, at, st.target);
    case Op::kLink:
    case Op::kRename:
    case Op::kBindMount: return with_flags(fmt::format("{} {}{} {}", op, st.path, at, st.path2));
    case Op::kSignal:
    case Op::kConnectAbstract: return fmt::format("{} {}", op, st.target);
    case Op::kSendFd: return fmt::format("send_fd {} to {}", st.fd, st.target);
    case Op::kBindTcp:
    case Op::kConnectTcp: return fmt::format("{} port {}", op, st.port);
    case Op::kChmod: return with_flags(fmt::format("chmod {}{} 0o{:o}", st.path, at, st.mode));
    case Op::kChown:
    case Op::kLchown: return with_flags(fmt::format("{} {}{} {}:{}", op, st.path, at, st.uid, st.gid));
    case Op::kMkdir: return fmt::format("mkdir {}{} 0o{:o}", st.path, at, st.mode);
    case Op::kMknod:
      return fmt::format("mknod {}{} {} 0o{:o}", st.path, at,
                         st.mknod_type == NodeType::kDir ? "dir" : NodeTypeName(st.mknod_type),
                         st.mode);
    case Op::kRestrict:
      if (!st.layer) return "restrict";
      return fmt::format("restrict (fs: {}; net: {}; scoped: {}; {} rules)",
                         Names(st.layer->handled_fs, landlock::kNumFsRights, landlock::FsRightName),
                         Names(st.layer->handled_net, landlock::kNumNetRights, landlock::NetRightName),
                         Names(st.layer->scoped, landlock::kNumScopes, landlock::ScopeName),
                         st.layer->rules.size());
    default: return with_flags(fmt::format("{} {}{}", op, st.path, at));
  }
}

struct Loaded {
  Scenario s;
  std::string build_error;
};

}  // namespace

int RunCheck(const CheckOptions& o) {
  // Parse and build everything first: a file with an error runs nothing,
  // and then no file runs.
  std::vector<Loaded> files;
  bool any_error = false;
  for (const std::string& f : o.files) {
    auto s = LoadScenarioFile(f);
    if (!s) {
      std::cerr << s.error() << "\n";
      any_error = true;
      continue;
    }
    std::string err = EngineBuildError(*s);
    if (!err.empty()) {
      std::cerr << err << "\n";
      any_error = true;
      continue;
    }
    files.push_back({std::move(*s), {}});
  }
  if (any_error) return 2;

  const bool color = !o.json && isatty(STDOUT_FILENO);
  auto paint = [&](std::string_view text, const char* code) {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  };
  uint64_t steps = 0, failed = 0, skipped_files = 0;
  EngineStats total;
  for (const Loaded& l : files) {
    const Scenario& s = l.s;
    EngineStats stats;
    RunResult engine = RunInEngine(s, o.engine, &stats);
    total.components += stats.components;
    total.fast_components += stats.fast_components;
    if (engine.status == RunResult::Status::kError) {
      std::cerr << engine.message << "\n";
      return 2;
    }
    if (o.cross_check) {
      // Every variant must give the same result and the same reason.
      for (bool fast : {true, false}) {
        for (LayerLayout layout : {LayerLayout::kByLayer, LayerLayout::kByAccess}) {
          EngineOptions v = o.engine;
          v.fast_search = fast;
          v.layout = layout;
          RunResult other = RunInEngine(s, v);
          const std::string name = fmt::format(
              "{}, {}", fast ? "fast search" : "no fast search",
              layout == LayerLayout::kByLayer ? "by-layer" : "by-access");
          for (size_t i = 0; i < s.steps.size() && i < other.steps.size(); ++i) {
            const StepResult& a = engine.steps[i];
            const StepResult& b = other.steps[i];
            if (a.err == b.err && a.reason == b.reason) continue;
            ++failed;
            fmt::print("FAIL {}:{} variants differ ({}): {} \"{}\" vs {} \"{}\"\n", s.file,
                       i + 1, name, ErrnoName(a.err), a.reason, ErrnoName(b.err), b.reason);
          }
        }
      }
    }
    if (!o.json && !o.quiet && !s.description.empty())
      fmt::print("{} -- {}\n", s.file, s.description);
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const StepSpec& st = s.steps[i];
      const StepResult& r = engine.steps[i];
      const bool pass = r.err == st.expect;
      ++steps;
      if (!pass) ++failed;
      if (o.json) {
        nlohmann::json j = {{"file", s.file},          {"step", i + 1},
                            {"op", OpName(st.op)},     {"as", st.as},
                            {"expect", ErrnoName(st.expect)}, {"got", ErrnoName(r.err)},
                            {"pass", pass},            {"reason", r.reason}};
        std::cout << j.dump() << "\n";
        continue;
      }
      if (o.quiet && pass) continue;
      fmt::print("{} {}:{} [{}] {} = {} (expect {}): {}\n",
                 pass ? paint("PASS", "32") : paint("FAIL", "1;31"), s.file, i + 1, st.as,
                 DescribeStep(st), ErrnoName(r.err), ErrnoName(st.expect),
                 r.reason.empty() ? "ok" : r.reason);
    }
  }
  if (!o.json) {
    fmt::print("check: {} file{}, {} steps, {} passed, {} failed{}\n", files.size(),
               files.size() == 1 ? "" : "s", steps, steps - failed, failed,
               skipped_files ? fmt::format(", {} skipped", skipped_files) : "");
    if (!o.quiet && total.components)
      fmt::print("fast search: {} of {} components searched took the fast path ({:.1f}%){}\n",
                 total.fast_components, total.components,
                 100.0 * total.fast_components / total.components,
                 o.engine.fast_search ? "" : " -- switched off");
  }
  if (failed) return 1;
  if (!files.empty() && skipped_files == files.size()) return 77;
  return 0;
}

}  // namespace pathwarden::cli
