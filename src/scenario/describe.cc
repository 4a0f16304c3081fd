// Steps in a few words, for reports: in the form of the operation's
// codec row (op_codec.h).

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
  using scenario_internal::StepForm;
  switch (scenario_internal::CodecOf(st.op).form) {
    case StepForm::kFd: return fmt::format("{} fd {}", op, st.fd);
    case StepForm::kFdMode: return fmt::format("{} fd {} 0o{:o}", op, st.fd, st.mode);
    case StepForm::kFdOwner: return fmt::format("{} fd {} {}:{}", op, st.fd, st.uid, st.gid);
    case StepForm::kFdRange:
      return with_flags(fmt::format("{} fd {} {}+{}", op, st.fd, st.offset, st.len));
    case StepForm::kFdCmd: return fmt::format("{} fd {} {}", op, st.fd, st.cmd_text);
    case StepForm::kFdToTarget: return fmt::format("{} {} to {}", op, st.fd, st.target);
    case StepForm::kPathMode:
      return with_flags(fmt::format("{} {}{} 0o{:o}", op, st.path, at, st.mode));
    case StepForm::kPathModeOnly: return fmt::format("{} {}{} 0o{:o}", op, st.path, at, st.mode);
    case StepForm::kPathOwner:
      return with_flags(fmt::format("{} {}{} {}:{}", op, st.path, at, st.uid, st.gid));
    case StepForm::kPathName:
      return with_flags(fmt::format("{} {}{} {}", op, st.path, at, st.xattr_name));
    case StepForm::kPathNameValue:
      return with_flags(fmt::format("{} {}{} {} ({} bytes)", op, st.path, at, st.xattr_name,
                                    st.xattr_value.size()));
    case StepForm::kPathTarget: return fmt::format("{} {}{} -> \"{}\"", op, st.path, at, st.target);
    case StepForm::kTwoPaths: return with_flags(fmt::format("{} {}{} {}", op, st.path, at, st.path2));
    case StepForm::kMknod:
      return fmt::format("{} {}{} {} 0o{:o}", op, st.path, at, NodeTypeName(st.mknod_type),
                         st.mode);
    case StepForm::kTarget: return fmt::format("{} {}", op, st.target);
    case StepForm::kPort: return fmt::format("{} port {}", op, st.port);
    case StepForm::kRestrict:
      if (!st.layer) return std::string(op);
      return fmt::format("{} (fs: {}; net: {}; scoped: {}; {} rules)", op,
                         Names(st.layer->handled_fs, landlock::kNumFsRights, landlock::FsRightName),
                         Names(st.layer->handled_net, landlock::kNumNetRights, landlock::NetRightName),
                         Names(st.layer->scoped, landlock::kNumScopes, landlock::ScopeName),
                         st.layer->rules.size());
    case StepForm::kPathAttrs: {
      std::string s = fmt::format("{} {}{}", op, st.path, at);
      if (st.attr_set) s += " set " + scenario_internal::MountAttrText(st.attr_set);
      if (st.attr_clr) s += " clear " + scenario_internal::MountAttrText(st.attr_clr);
      return with_flags(std::move(s));
    }
    case StepForm::kPath: break;
  }
  return with_flags(fmt::format("{} {}{}", op, st.path, at));
}

}  // namespace pathwarden
