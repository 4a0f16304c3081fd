// Steps in a few words, for reports.

#include <fmt/format.h>

#include "pathwarden/landlock.h"
#include "pathwarden/scenario.h"
#include "src/scenario/names.h"

namespace pathwarden {
namespace {

std::string Names(landlock::AccessMask m, int n, std::string_view (*name)(int)) {
  return fmt::format("{}", fmt::join(scenario_internal::RightNames(m, n, name), ","));
}

}  // namespace

std::string ShownStepFlags(const StepSpec& st) {
  if (st.flags == 0 && st.access_mode == 0 && st.op != Op::kOpen) return "";
  return FormatStepFlags(st);
}

std::string DescribeStep(const StepSpec& step, size_t max_path) {
  StepSpec st = step;
  auto shorten = [&](std::string& p) {
    if (max_path > 8 && p.size() > max_path)
      p = p.substr(0, max_path / 2 - 2) + "..." + p.substr(p.size() - (max_path / 2 - 1));
  };
  shorten(st.path);
  shorten(st.path2);
  shorten(st.target);
  std::string op(OpName(st.op));
  const std::string flags = ShownStepFlags(st);
  auto with_flags = [&](std::string s) {
    if (!flags.empty()) s += " " + flags;
    return s;
  };
  std::string at = st.dirfd.empty() ? "" : fmt::format(" (at fd {})", st.dirfd);
  switch (st.op) {
    case Op::kClose:
    case Op::kFtruncate:
    case Op::kFchdir: return fmt::format("{} fd {}", op, st.fd);
    case Op::kFchmod: return fmt::format("fchmod fd {} 0o{:o}", st.fd, st.mode);
    case Op::kFchown: return fmt::format("fchown fd {} {}:{}", st.fd, st.uid, st.gid);
    case Op::kFutimens: return fmt::format("futimens fd {}", st.fd);
    case Op::kFallocate:
      return with_flags(fmt::format("fallocate fd {} {}+{}", st.fd, st.offset, st.len));
    case Op::kGetxattr:
    case Op::kRemovexattr:
      return with_flags(fmt::format("{} {}{} {}", op, st.path, at, st.xattr_name));
    case Op::kSetxattr:
      return with_flags(fmt::format("setxattr {}{} {} ({} bytes)", st.path, at, st.xattr_name,
                                    st.xattr_value.size()));
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
      return fmt::format("mknod {}{} {} 0o{:o}", st.path, at, NodeTypeName(st.mknod_type),
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

}  // namespace pathwarden
