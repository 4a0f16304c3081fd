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

// The next id after `id` of `cmd`'s objects (BPF_PROG_GET_NEXT_ID,
// BPF_LINK_GET_NEXT_ID); 0 at the end; nullopt with `why` on an error.
std::optional<uint32_t> NextId(int cmd, const char* cmd_name, uint32_t id, std::string* why) {
  union bpf_attr a {};
  a.start_id = id;
  if (Bpf(cmd, &a) == 0) return a.next_id;
  if (errno == ENOENT) return 0;
  *why = errno == EPERM ? std::string("reading which are attached takes CAP_SYS_ADMIN")
                        : fmt::format("bpf({}): {}", cmd_name, ErrnoName(errno));
  return std::nullopt;
}

// Calls `each(id, info)` for every BPF object of one kind (programs or
// links: `next` and `get` their commands), in id order; false with `why`
// on an error (one gone meanwhile is skipped).
template <typename Info, typename Each>
bool ForEachBpf(int next, const char* next_name, int get, const char* get_name, std::string* why,
                Each each) {
  for (uint32_t id = 0;;) {
    const std::optional<uint32_t> n = NextId(next, next_name, id, why);
    if (!n) return false;
    if (*n == 0) return true;
    id = *n;
    Info info{};
    if (InfoById(get, get_name, id, &info, why)) each(id, info);
    else if (!why->empty()) return false;
  }
}

// The BPF programs that can make a security hook refuse: every loaded
// program of type LSM (attached through a link, or to cgroups with
// BPF_PROG_ATTACH, which leaves no link: a loaded one is taken to run),
// and every program attached to override a function's return (fmod_ret:
// on a security_*() function it refuses too); or why they cannot be read.
std::optional<std::vector<std::string>> ReadBpfLsmPrograms(std::string* why) {
  std::vector<std::string> names;
  const bool ok =
      ForEachBpf<bpf_prog_info>(
          BPF_PROG_GET_NEXT_ID, "BPF_PROG_GET_NEXT_ID", BPF_PROG_GET_FD_BY_ID,
          "BPF_PROG_GET_FD_BY_ID", why,
          [&](uint32_t id, const bpf_prog_info& prog) {
            if (prog.type == BPF_PROG_TYPE_LSM)
              names.push_back(fmt::format("{} (program {})",
                                          prog.name[0] != '\0' ? prog.name : "unnamed", id));
          }) &&
      ForEachBpf<bpf_link_info>(
          BPF_LINK_GET_NEXT_ID, "BPF_LINK_GET_NEXT_ID", BPF_LINK_GET_FD_BY_ID,
          "BPF_LINK_GET_FD_BY_ID", why, [&](uint32_t id, const bpf_link_info& link) {
            if (link.type == BPF_LINK_TYPE_TRACING && link.tracing.attach_type == BPF_MODIFY_RETURN)
              names.push_back(fmt::format(
                  "a function's return overridden (fmod_ret program {}, link {})", link.prog_id, id));
          });
  if (!ok) return std::nullopt;
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
    if (*f.apparmor_label != "unconfined") return may(fmt::format("profile {}", *f.apparmor_label));
    if (f.labels_change) return may("unconfined, but a program it runs may be confined");
    // Shown relative to the reader's policy namespace (a container's).
    if (!f.apparmor_ns_level)
      return may(fmt::format("unconfined in a policy namespace whose level is not known ({})",
                             f.apparmor_ns_why));
    if (*f.apparmor_ns_level != "0")
      return may(fmt::format("unconfined in a policy namespace at level {}, which an outer "
                             "profile may confine",
                             *f.apparmor_ns_level));
    return never("unconfined");
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
    f.apparmor_ns_level =
        ReadSmall(from.root + "/sys/kernel/security/apparmor/.ns_level", &f.apparmor_ns_why);
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

// close() asks no module; landlock_restrict_self() does when it needs
// CAP_SYS_ADMIN (no no_new_privs: security_capable()).
bool HasHook(Op op) { return op != Op::kClose; }

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

Decision UnknownWhereModulesMayRefuse(const SecurityModules& m, Op op, Decision d) {
  if (d.unknown() || (d.denied() && d.err() == EACCES)) return d;
  std::string why = m.WhyUnknown(op);
  if (why.empty()) return d;
  Reason reason = d.reason();
  if (d.denied()) {
    if (!reason.text.empty())
      reason.text += fmt::format(" (the errno may be a security module's that refused first: {})",
                                 why);
    return Decision(Verdict::kDenied, d.err(), std::move(reason), d.fd());
  }
  reason.unknown_why = std::move(why);
  reason.stage = Stage::kNone;
  reason.text = fmt::format("unknown: {} (Unix and Landlock allow it{}{})", reason.unknown_why,
                            d.reason().text.empty() ? "" : ": ", d.reason().text);
  return Decision(Verdict::kUnknown, -1, std::move(reason), d.fd());
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
