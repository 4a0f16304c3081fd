// The kernel executor's entry points: availability, the session that holds
// the sysctl lock, and one forked supervisor per scenario.

#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>

#include "pathwarden/cred.h"
#include "pathwarden/errno.h"
#include "pathwarden/executor.h"
#include "src/kernel/kernel_server.h"
#include "src/kernel/kernel_session.h"
#include "src/kernel/landlock_uapi.h"
#include "src/kernel/supervisor.h"
#include "src/vfs/world.h"

namespace pathwarden {
namespace kernel_internal {
namespace {

// The device majors with a driver registered (/proc/devices), char and
// block.
struct RegisteredMajors {
  std::set<uint32_t> chr, blk;
};

RegisteredMajors ReadRegisteredMajors() {
  RegisteredMajors r;
  std::ifstream in("/proc/devices");
  std::string line;
  std::set<uint32_t>* section = nullptr;
  while (std::getline(in, line)) {
    if (line == "Character devices:") {
      section = &r.chr;
    } else if (line == "Block devices:") {
      section = &r.blk;
    } else if (section != nullptr) {
      unsigned major = 0;
      if (std::sscanf(line.c_str(), "%u", &major) == 1) section->insert(major);
    }
  }
  return r;
}

// Devices harmless to open and to ioctl: char 1:3, 1:5, 1:7 (null, zero,
// full), whose drivers the engine models, and any major no driver has
// registered, where an open can only fail with ENXIO -- provided the kernel
// cannot load a module for it (request_module() on open). Anything else
// might be a watchdog (this machine has one), a disk or a terminal.
bool SafeDevice(NodeType t, uint32_t major, uint32_t minor, bool modules,
                const RegisteredMajors& registered) {
  if (t != NodeType::kChar && t != NodeType::kBlock) return true;
  if (t == NodeType::kChar && major == 1 && (minor == 3 || minor == 5 || minor == 7))
    return true;
  if (modules) return false;
  return !(t == NodeType::kChar ? registered.chr : registered.blk).contains(major);
}

}  // namespace

uint64_t AvailableCaps() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return 0;
  return (uint64_t{data[1].permitted} << 32 | data[0].permitted) & kCapAll;
}

std::string KernelRulesSkipReason(const Scenario& s, const KernelRules& running) {
  for (size_t i = 0; i < std::size(kKernelRuleFields); ++i) {
    if (!s.kernel.named[i]) continue;
    const KernelRuleField& f = kKernelRuleFields[i];
    if (running.*f.value == EmptyFileCaps{})
      return fmt::format("written for [kernel] {} = \"{}\" ({}); whether this kernel does the "
                         "same could not be probed",
                         f.key, f.ValueName(s.kernel.rules), f.about);
    if (running.*f.value != s.kernel.rules.*f.value)
      return fmt::format("written for [kernel] {} = \"{}\" ({}); this kernel's is \"{}\" "
                         "(probed: pathwarden selftest)",
                         f.key, f.ValueName(s.kernel.rules), f.about, f.ValueName(running));
  }
  return "";
}

std::string SkipReason(const Scenario& s, int abi, uint64_t caps_available) {
  if (s.abi != abi)
    return fmt::format("needs Landlock ABI {}, this kernel has {}", s.abi, abi);
  if (std::string why = KernelRulesSkipReason(s, RunningKernelRules()); !why.empty()) return why;
  for (const ProcessSpec& p : s.processes) {
    uint64_t missing = p.caps.value_or(0) & ~caps_available;
    for (int cap = 0; cap <= kCapLast; ++cap)
      if (missing & CapBit(cap))
        return fmt::format("{}: process \"{}\" needs {}, which this machine cannot grant",
                           s.Where(p.loc), p.name, CapName(cap));
  }
  auto unsafe = [&](const SourceLoc& loc, uint32_t major, uint32_t minor) {
    return fmt::format("{}: device {}:{} is not null, zero or full and has (or could "
                       "load) a driver on this machine; opening it could reach it",
                       s.Where(loc), major, minor);
  };
  // CONFIG_MODULES=n kernels have no kernel.modprobe.
  const bool modules = access("/proc/sys/kernel/modprobe", F_OK) == 0;
  static const RegisteredMajors registered = ReadRegisteredMajors();
  for (const NodeSpec& n : s.nodes)
    if (!SafeDevice(n.type, n.rdev_major, n.rdev_minor, modules, registered))
      return unsafe(n.loc, n.rdev_major, n.rdev_minor);
  for (const StepSpec& st : s.steps)
    if (st.op == Op::kMknod &&
        !SafeDevice(st.mknod_type, st.rdev_major, st.rdev_minor, modules, registered))
      return unsafe(st.loc, st.rdev_major, st.rdev_minor);
  // The engine models fs.mount-max at the kernel's default; the machine's
  // may differ (it is global: never changed here).
  static const std::string mount_max = [] {
    std::ifstream in("/proc/sys/fs/mount-max");
    std::string v;
    in >> v;
    return v;
  }();
  if (mount_max != std::to_string(vfs::kMountMaxDefault))
    for (const StepSpec& st : s.steps)
      if (st.op == Op::kMountTmpfs || st.op == Op::kBindMount)
        return fmt::format("{}: fs.mount-max is {} on this machine; scenarios model the "
                           "kernel's default, {}",
                           s.Where(st.loc), mount_max, vfs::kMountMaxDefault);
  return "";
}

Result<std::unique_ptr<KernelSession>, std::string> KernelSession::Open(Launch launch) {
  if (std::string why = KernelUnavailableReason(); !why.empty()) return Unexpected(why);
  SupervisorParams params;
  params.mount_dir = fmt::format("{}/root", kStateDir);
  params.caps_available = AvailableCaps();
  auto guard = SysctlGuard::Acquire();
  if (!guard) return Unexpected(guard.error());
  if (mkdir(params.mount_dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Unexpected(fmt::format("mkdir {}: {}", params.mount_dir, ErrnoName(errno)));
  return std::unique_ptr<KernelSession>(
      new KernelSession(std::move(*guard), std::move(params), KernelAbi(), launch));
}

KernelSession::~KernelSession() = default;

RunResult KernelSession::Run(const Scenario& s, const KernelOptions& options) {
  if (std::string why = SkipReason(s, abi_, params_.caps_available); !why.empty())
    return Skipped(why);
  if (launch_ == Launch::kServer && (server_ == nullptr || !server_->ok())) {
    server_.reset();
    auto server = KernelServer::Spawn();
    if (server) {
      server_ = std::move(*server);
    } else {
      // Slower for a large caller, the same answers.
      launch_ = Launch::kDirect;
      fallback_reason_ = server.error();
    }
  }
  if (std::string e = sysctl_->Set(s.sysctl); !e.empty())
    return Failed(fmt::format("{}: internal: sysctl: {}", s.file, e));
  if (launch_ == Launch::kServer) return server_->Run(s, options, params_);
  return RunSupervised(s, options, params_, /*wait_for_teardown=*/true);
}

}  // namespace kernel_internal

std::string KernelUnavailableReason() {
  if (geteuid() != 0) return "not root (the kernel executor needs namespaces, mounts and setuid)";
  int abi = KernelAbi();
  if (abi < 0) return fmt::format("Landlock is not available: {}", ErrnoName(-abi));
  return "";
}

int KernelAbi() {
  int abi = kernel_internal::LandlockCreateRuleset(nullptr, 0, landlock::kCreateRulesetVersion);
  return abi < 0 ? -errno : abi;
}

RunResult RunInKernel(const Scenario& s, const KernelOptions& options) {
  using kernel_internal::Failed;
  using kernel_internal::Skipped;
  if (std::string why = KernelUnavailableReason(); !why.empty())
    return Skipped(why);
  // Skips need no lock: decide them before waiting for one.
  if (std::string why = kernel_internal::SkipReason(s, KernelAbi(), kernel_internal::AvailableCaps());
      !why.empty())
    return Skipped(why);
  // One scenario: forking the supervisor from here beats starting a server.
  auto session = kernel_internal::KernelSession::Open(kernel_internal::KernelSession::Launch::kDirect);
  if (!session)
    return Failed(fmt::format("{}: internal: {}", s.file, session.error()));
  return (*session)->Run(s, options);
}

}  // namespace pathwarden
