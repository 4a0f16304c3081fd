// The live host's security modules (host_modules.h), and what each could
// refuse of what the model answers.

#include "src/security/host_modules.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pathwarden/errno.h"

namespace pathwarden {
namespace security {
namespace {

// lsm_list_modules(2), Linux 6.8; the number every architecture shares
// since the unified table (asm-generic/unistd.h).
constexpr long kSysLsmListModules = 461;

// A small file of /sys or /proc, read whole (one line, at most 4 KiB), the
// trailing newline dropped; or why not.
std::optional<std::string> ReadSmall(const std::string& path, std::string* why) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *why = fmt::format("{}: {}", path, std::strerror(errno));
    return std::nullopt;
  }
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof buf);
  const int err = errno;
  close(fd);
  if (n < 0) {
    *why = fmt::format("{}: {}", path, std::strerror(err));
    return std::nullopt;
  }
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    if (comma != 0) out.emplace_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

// The active modules: the system call, then securityfs where it is
// mounted (a stand-in root: its file only).
void ReadNames(const SecurityModuleSources& from, ModuleFacts* f) {
  if (from.root.empty()) {
    uint64_t ids[64];
    uint32_t size = sizeof ids;
    const long n = syscall(kSysLsmListModules, ids, &size, 0u);
    if (n >= 0) {
      std::vector<std::string> names;
      for (long i = 0; i < n && i < 64; ++i) names.push_back(LsmName(ids[i]));
      f->names = std::move(names);
      return;
    }
    if (errno != ENOSYS) {
      f->names_why = fmt::format("lsm_list_modules(): {}", std::strerror(errno));
      return;
    }
  }
  const std::string path = from.root + "/sys/kernel/security/lsm";
  std::string why;
  if (auto text = ReadSmall(path, &why)) {
    f->names = SplitCommas(*text);
    return;
  }
  f->names_why = fmt::format(
      "the kernel has no lsm_list_modules() (Linux 6.8) and securityfs's list cannot be read "
      "({}; nothing is mounted to read it)",
      why);
}

std::string ProcDir(const SecurityModuleSources& from) {
  return from.root + (from.pid > 0 ? fmt::format("/proc/{}", from.pid) : std::string("/proc/self"));
}

// bpf(2) with `attr`; its result, or -1 with errno.
long Bpf(int cmd, union bpf_attr* attr) { return syscall(SYS_bpf, cmd, attr, sizeof *attr); }

// The info of the BPF object (a link or a program) with id `id`, opened
// by `get` (BPF_LINK_GET_FD_BY_ID or BPF_PROG_GET_FD_BY_ID: the id is the
// same field of bpf_attr for both), the descriptor closed at once. False
// with `why` empty when it went meanwhile (ENOENT), set on another error.
template <typename Info>
bool InfoById(int get, const char* get_name, uint32_t id, Info* info, std::string* why) {
  union bpf_attr a {};
  a.prog_id = id;
  const int fd = static_cast<int>(Bpf(get, &a));
  if (fd < 0) {
    if (errno != ENOENT) *why = fmt::format("bpf({}, {}): {}", get_name, id, ErrnoName(errno));
    return false;
  }
  union bpf_attr q {};
  q.info.bpf_fd = static_cast<uint32_t>(fd);
  q.info.info_len = sizeof *info;
  q.info.info = reinterpret_cast<uint64_t>(info);
  const long r = Bpf(BPF_OBJ_GET_INFO_BY_FD, &q);
  const int err = errno;
  close(fd);
  if (r < 0) *why = fmt::format("bpf(BPF_OBJ_GET_INFO_BY_FD) of {} {}: {}", get_name, id, ErrnoName(err));
  return r >= 0;
}

// The names of the LSM programs that BPF links attach (a program loaded
// but not attached runs for no hook), or why they cannot be read.
std::optional<std::vector<std::string>> ReadBpfLsmPrograms(std::string* why) {
  std::vector<std::string> names;
  uint32_t link_id = 0;
  for (;;) {
    union bpf_attr a {};
    a.start_id = link_id;
    if (Bpf(BPF_LINK_GET_NEXT_ID, &a) < 0) {
      if (errno == ENOENT) break;
      *why = errno == EPERM ? std::string("reading which are attached takes CAP_SYS_ADMIN")
                            : fmt::format("bpf(BPF_LINK_GET_NEXT_ID): {}", ErrnoName(errno));
      return std::nullopt;
    }
    link_id = a.next_id;
    struct bpf_link_info link {};
    struct bpf_prog_info prog {};
    if (!InfoById(BPF_LINK_GET_FD_BY_ID, "BPF_LINK_GET_FD_BY_ID", link_id, &link, why) ||
        !InfoById(BPF_PROG_GET_FD_BY_ID, "BPF_PROG_GET_FD_BY_ID", link.prog_id, &prog, why)) {
      if (why->empty()) continue;  // gone meanwhile
      return std::nullopt;
    }
    if (prog.type == BPF_PROG_TYPE_LSM)
      names.push_back(fmt::format("{} (program {}, link {})",
                                  prog.name[0] != '\0' ? prog.name : "unnamed", link.prog_id,
                                  link_id));
  }
  return names;
}

bool Has(const std::vector<std::string>& names, std::string_view n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

using Refuses = SecurityModule::Refuses;

// One module's Refuses and state from the facts.
SecurityModule Assess(const std::string& name, const ModuleFacts& f) {
  SecurityModule m{name, Refuses::kAny, {}};
  auto never = [&](std::string why) {
    m.refuses = Refuses::kNever;
    m.state = std::move(why);
    return m;
  };
  auto may = [&](std::string why) {
    m.state = std::move(why);
    return m;
  };
  if (name == "capability" || name == "landlock") return never("modelled");
  if (Has(f.trusted, name)) return never("taken to refuse nothing (--trust-lsm)");
  // Hooks on calls or objects the model does not answer "allowed": /dev/mem,
  // /dev/kmem, /dev/port (drivers without a model), debugfs, tracefs,
  // /proc/kcore (not modelled), module loading, kexec, ioctls past the
  // model's verdict. Linux: security/lockdown/lockdown.c, the
  // security_locked_down() callers.
  if (name == "lockdown")
    return never("its refusals (/dev/mem, debugfs, tracefs, /proc/kcore, module loading, "
                 "kexec) are of calls the model does not answer");
  // ptrace attachment only (security/yama/yama_lsm.c).
  if (name == "yama") return never("it decides ptrace only");
  // Reading kernel files, modules and firmware (security/loadpin/).
  if (name == "loadpin") return never("it decides the kernel's own file reads only");
  // setuid()/setgid() transitions (security/safesetid/).
  if (name == "safesetid") return never("it decides id changes only");
  if (name == "selinux") {
    if (!f.selinux_enforce) return may(fmt::format("its mode is not known ({})", f.selinux_why));
    // Permissive: every denial is logged, none enforced (avc_denied()).
    if (*f.selinux_enforce == "0") return never("permissive");
    return may(*f.selinux_enforce == "1"
                   ? std::string("enforcing")
                   : fmt::format("enforce reads \"{}\"", *f.selinux_enforce));
  }
  if (name == "apparmor") {
    if (!f.apparmor_label)
      return may(fmt::format("the process's profile is not known ({})", f.apparmor_why));
    if (*f.apparmor_label == "unconfined" && !f.labels_change) return never("unconfined");
    return may(*f.apparmor_label == "unconfined"
                   ? std::string("unconfined, but a program it runs may be confined")
                   : fmt::format("profile {}", *f.apparmor_label));
  }
  if (name == "bpf") {
    if (!f.bpf_lsm_programs) return may(fmt::format("LSM programs not known: {}", f.bpf_why));
    if (f.bpf_lsm_programs->empty()) return never("no LSM program attached");
    return may(fmt::format("LSM programs attached: {}", fmt::join(*f.bpf_lsm_programs, ", ")));
  }
  // Integrity policy enforcement decides executions (and mmap/mprotect
  // for execution, kernel file reads): of the modelled calls, exec_check
  // (security/ipe/hooks.c ipe_bprm_check_security()).
  if (name == "ipe") {
    m.refuses = Refuses::kExec;
    return may("its policy is not modelled");
  }
  if (name == "smack" || name == "tomoyo" || name == "ima" || name == "evm")
    return may("its policy is not modelled");
  return may("a module the library does not know");
}

}  // namespace

std::string LsmName(uint64_t id) {
  // include/uapi/linux/lsm.h: LSM_ID_CAPABILITY (100) to LSM_ID_IPE (113).
  const std::vector<std::string>& names = SecurityModuleNames();
  if (id >= 100 && id < 100 + names.size()) return names[id - 100];
  return fmt::format("lsm {}", id);
}

ModuleFacts ReadModuleFacts(const SecurityModuleSources& from) {
  ModuleFacts f;
  f.trusted = from.trusted;
  f.labels_change = from.labels_change;
  ReadNames(from, &f);
  if (!f.names) return f;
  if (Has(*f.names, "selinux"))
    f.selinux_enforce = ReadSmall(from.root + "/sys/fs/selinux/enforce", &f.selinux_why);
  if (Has(*f.names, "apparmor")) {
    // The stacking-safe file first (Linux 5.1), then the shared one.
    std::string why;
    f.apparmor_label = ReadSmall(ProcDir(from) + "/attr/apparmor/current", &why);
    if (!f.apparmor_label) f.apparmor_label = ReadSmall(ProcDir(from) + "/attr/current", &f.apparmor_why);
  }
  if (Has(*f.names, "bpf")) {
    if (from.root.empty())
      f.bpf_lsm_programs = ReadBpfLsmPrograms(&f.bpf_why);
    else
      f.bpf_why = "BPF programs are not read under a stand-in root";
  }
  return f;
}

SecurityModules AssessModules(const ModuleFacts& f) {
  SecurityModules s;
  if (f.names)
    for (const std::string& n : *f.names) s.active.push_back(Assess(n, f));
  else
    s.unknown = f.names_why;
  return s;
}

}  // namespace security

namespace {

using Refuses = SecurityModule::Refuses;

bool HasHook(Op op) { return op != Op::kClose && op != Op::kRestrict; }

}  // namespace

std::string SecurityModules::WhyUnknown(Op op) const {
  if (!HasHook(op)) return {};
  if (!unknown.empty())
    return fmt::format("which security modules are active is not known ({}): one may refuse",
                       unknown);
  std::string why;
  for (const SecurityModule& m : active) {
    if (m.refuses == Refuses::kNever) continue;
    if (m.refuses == Refuses::kExec && op != Op::kExecCheck) continue;
    why += fmt::format("{}{} ({}) also decides", why.empty() ? "" : "; ", m.name, m.state);
  }
  return why.empty() ? why : why + "; not modelled";
}

std::vector<std::string> SecurityModules::Describe() const {
  if (!unknown.empty()) return {fmt::format("security modules: not known ({})", unknown)};
  std::vector<std::string> out;
  for (const SecurityModule& m : active)
    out.push_back(fmt::format("{}: {}: {}", m.name, m.state,
                              m.refuses == Refuses::kNever  ? "refuses nothing the model answers"
                              : m.refuses == Refuses::kExec ? "may refuse an execution"
                                                            : "may refuse (not modelled)"));
  return out;
}

SecurityModules ReadSecurityModules(const SecurityModuleSources& from) {
  if (!from.read) return {};
  return security::AssessModules(security::ReadModuleFacts(from));
}

const std::vector<std::string>& SecurityModuleNames() {
  static const std::vector<std::string> kNames = {
      "capability", "selinux",  "smack", "tomoyo",   "apparmor", "yama", "loadpin",
      "safesetid",  "lockdown", "bpf",   "landlock", "ima",      "evm",  "ipe"};
  return kNames;
}

bool SecurityModules::MayRefuse() const {
  if (!unknown.empty()) return true;
  return std::any_of(active.begin(), active.end(),
                     [](const SecurityModule& m) { return m.refuses != Refuses::kNever; });
}

}  // namespace pathwarden
