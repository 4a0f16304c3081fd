// `pathwarden run`: layers built on this host, enforced, then exec.
// Linux: samples/landlock/sandboxer.c, security/landlock/syscalls.c @v6.18

#include "src/sandbox/run.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "src/kernel/landlock_uapi.h"
#include "src/kernel/layer.h"

namespace pathwarden::sandbox {
namespace {

using landlock::AccessMask;

std::string Where(const std::vector<policy::Origin>& origins) {
  std::string s;
  for (const policy::Origin& o : origins) {
    if (!s.empty()) s += ", ";
    s += o.file;
    if (o.line > 0) s += fmt::format(":{}:{}", o.line, o.col);
  }
  return s;
}

std::string Names(AccessMask fs, AccessMask net, AccessMask scoped) {
  std::string s;
  for (const std::string& part : {landlock::FsAuditNames(fs), landlock::NetAuditNames(net),
                                  landlock::ScopeAuditNames(scoped)}) {
    if (part.empty()) continue;
    if (!s.empty()) s += ",";
    s += part;
  }
  return s.empty() ? "(none)" : s;
}

std::string LayerName(size_t i, const HostLayer& layer) {
  return fmt::format("layer {} ({})", i + 1, layer.source);
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

int ProbeAbi(std::string* why) {
  int abi = kernel_internal::LandlockCreateRuleset(nullptr, 0, landlock::kCreateRulesetVersion);
  if (abi >= 0) return abi;
  if (why != nullptr) {
    *why = errno == ENOSYS       ? "Landlock is not supported by this kernel (ENOSYS)"
           : errno == EOPNOTSUPP ? "Landlock is disabled on this kernel (EOPNOTSUPP)"
                                 : "Landlock's ABI probe failed: " + ErrnoName(errno);
  }
  return 0;
}

HostLayer BuildHostLayer(const policy::Policy& p, int abi) {
  const landlock::AbiRights known =
      abi <= 0 ? landlock::AbiRights{0, 0, 0} : landlock::RightsForAbi(abi);
  HostLayer layer;
  layer.source = p.source;
  // A policy's `abi` above the kernel's is clamped to it, as explain
  // clamps it to the model's (src/policy/build.cc): what that ABI lacks is
  // dropped below (or refused under --hard).
  if (p.abi && abi > 0 && *p.abi > abi)
    layer.warnings.push_back(fmt::format("policy ABI {} is above the kernel's ({}): clamped to {}",
                                         *p.abi, abi, abi));
  layer.handled_fs = p.handled_fs & known.fs;
  layer.handled_net = p.handled_net & known.net;
  layer.scoped = p.scoped & known.scoped;
  layer.dropped_fs = p.handled_fs & ~known.fs;
  layer.dropped_net = p.handled_net & ~known.net;
  layer.dropped_scoped = p.scoped & ~known.scoped;

  for (const policy::PathRule& r : p.paths) {
    AccessMask access = r.access & layer.handled_fs;
    if (access == 0) continue;  // every right it granted was dropped
    std::string where = Where(r.origins);
    // As the sandboxer and landlockconfig open them: following symlinks.
    UniqueFd fd(open(r.path.c_str(), O_PATH | O_CLOEXEC));
    if (fd.get() < 0) {
      layer.warnings.push_back(fmt::format("{}: cannot open \"{}\": {}: rule skipped", where,
                                           r.path, std::strerror(errno)));
      continue;
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0) {
      layer.warnings.push_back(fmt::format("{}: cannot stat \"{}\": {}: rule skipped", where,
                                           r.path, std::strerror(errno)));
      continue;
    }
    bool directory = S_ISDIR(st.st_mode);
    if (!directory && (access & ~landlock::kFsFileRights) != 0) {
      AccessMask kept = access & landlock::kFsFileRights;
      layer.warnings.push_back(fmt::format(
          "{}: \"{}\" is not a directory: {} dropped{}", where, r.path,
          landlock::FsAuditNames(access & ~landlock::kFsFileRights),
          kept == 0 ? ", nothing left: rule skipped" : ""));
      access = kept;
      if (access == 0) continue;
    }
    HostRule rule;
    rule.path = r.path;
    rule.directory = directory;
    rule.fd = std::move(fd);
    rule.access = access;
    rule.origins = r.origins;
    layer.rules.push_back(std::move(rule));
  }
  for (const policy::PortRule& r : p.ports) {
    AccessMask access = r.access & layer.handled_net;
    if (access == 0) continue;
    HostRule rule;
    rule.is_port = true;
    rule.port = r.port;
    rule.access = access;
    rule.origins = r.origins;
    layer.rules.push_back(std::move(rule));
  }
  return layer;
}

std::string DroppedRights(const HostLayer& layer) {
  if (!layer.Dropped()) return "";
  return Names(layer.dropped_fs, layer.dropped_net, layer.dropped_scoped);
}

std::string DescribeLayers(const std::vector<HostLayer>& layers, int abi) {
  std::string s = fmt::format("Landlock ABI {}: {} layer{}\n", abi, layers.size(),
                              layers.size() == 1 ? "" : "s");
  for (size_t i = 0; i < layers.size(); ++i) {
    const HostLayer& l = layers[i];
    s += LayerName(i, l) + (l.Enforceable() ? "" : ": nothing to enforce, skipped") + "\n";
    if (!l.Enforceable()) continue;
    s += fmt::format("  handled_access_fs: {}\n", Names(l.handled_fs, 0, 0));
    s += fmt::format("  handled_access_net: {}\n", Names(0, l.handled_net, 0));
    s += fmt::format("  scoped: {}\n", Names(0, 0, l.scoped));
    for (const HostRule& r : l.rules) {
      if (r.is_port) {
        s += fmt::format("  net_port {}: {}  [{}]\n", r.port, Names(0, r.access, 0),
                         Where(r.origins));
      } else {
        s += fmt::format("  path_beneath \"{}\" ({}): {}  [{}]\n", r.path,
                         r.directory ? "directory" : "file", Names(r.access, 0, 0),
                         Where(r.origins));
      }
    }
  }
  return s;
}

Result<void, std::string> EnforceLayers(const std::vector<HostLayer>& layers) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return Unexpected("cannot set no_new_privs: " + ErrnoName(errno));
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    const HostLayer& l = layers[i];
    if (!l.Enforceable()) continue;
    LayerSpec spec;
    spec.handled_fs = l.handled_fs;
    spec.handled_net = l.handled_net;
    spec.scoped = l.scoped;
    std::vector<int> fds;
    for (const HostRule& r : l.rules) {
      RuleSpec rule;
      rule.is_port = r.is_port;
      rule.path = r.path;
      rule.port = r.port;
      rule.access = r.access;
      spec.rules.push_back(std::move(rule));
      fds.push_back(r.is_port ? -1 : r.fd.get());
    }
    kernel_internal::LayerFailure failure;
    // With no rules an empty span would mean "open each path yourself":
    // there is nothing to open then, so it is the same.
    int err = kernel_internal::EnforceLayer(spec, fds, &failure);
    if (err != 0) {
      std::string what = kernel_internal::DescribeFailure(spec, failure, err);
      if (failure.stage == kernel_internal::LayerFailure::Stage::kAddRule) {
        const HostRule& r = l.rules[failure.rule];
        what += r.is_port ? fmt::format(" (port {})", r.port)
                          : fmt::format(" (\"{}\")", r.path);
      }
      return Unexpected(LayerName(i, l) + ": " + what);
    }
  }
  return {};
}

int RunConfined(const RunOptions& options, std::ostream& out, std::ostream& err) {
  const char* self = "pathwarden run: ";
  if (options.argv.empty() && !options.dry_run) {
    err << self << "no command given (pathwarden run [options] -- CMD ARGS...)\n";
    return kExitOwnError;
  }
  if (options.layers.size() > static_cast<size_t>(landlock::kMaxLayers)) {
    err << self << options.layers.size() << " layers: Landlock stacks at most "
        << landlock::kMaxLayers << "\n";
    return kExitOwnError;
  }
  std::string why;
  int kernel_abi = ProbeAbi(&why);
  int abi = kernel_abi;
  if (options.pretend_abi && *options.pretend_abi < abi) abi = std::max(*options.pretend_abi, 0);
  if (kernel_abi == 0) {
    if (options.compat == Compat::kHard) {
      err << self << "--hard: " << why << ": not running\n";
      return kExitOwnError;
    }
    err << self << why << ": every right is dropped, the command runs unconfined\n";
  } else if (options.verbose) {
    err << self << "Landlock ABI " << kernel_abi;
    if (abi != kernel_abi) err << " (pretending " << abi << ")";
    err << "\n";
  }

  std::vector<HostLayer> layers;
  bool refused = false;
  for (size_t i = 0; i < options.layers.size(); ++i) {
    layers.push_back(BuildHostLayer(options.layers[i], abi));
    const HostLayer& l = layers.back();
    for (const std::string& w : l.warnings) err << self << LayerName(i, l) << ": " << w << "\n";
    if (!l.Dropped()) continue;
    if (options.compat == Compat::kHard) {
      err << self << "--hard: " << LayerName(i, l) << " needs " << DroppedRights(l)
          << ", which Landlock ABI " << abi << " lacks: not running\n";
      refused = true;
    } else {
      err << self << LayerName(i, l) << ": Landlock ABI " << abi << " lacks "
          << DroppedRights(l) << ": dropped"
          << (l.Enforceable() ? "" : ", nothing left to enforce: layer skipped") << "\n";
    }
  }
  if (refused) return kExitOwnError;
  if (options.dry_run) {
    out << DescribeLayers(layers, abi);
    return 0;
  }
  if (options.verbose) {
    for (size_t i = 0; i < layers.size(); ++i) {
      err << self << LayerName(i, layers[i]) << ": " << layers[i].rules.size() << " rules, "
          << (layers[i].Enforceable() ? "enforced" : "skipped") << "\n";
    }
  }
  if (auto r = EnforceLayers(layers); !r) {
    err << self << r.error() << "\n";
    return kExitOwnError;
  }
  layers.clear();  // the rule descriptors are not the command's

  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  out.flush();
  err.flush();
  execvp(argv[0], argv.data());
  int e = errno;
  if (e == ENOENT) {
    err << self << options.argv[0] << ": command not found\n";
    return kExitNotFound;
  }
  err << self << "cannot execute " << options.argv[0] << ": " << std::strerror(e) << "\n";
  if (!options.layers.empty() && e == EACCES) {
    err << self << "(under Landlock: the binary, its interpreter or its shared libraries may be "
                   "denied)\n";
  }
  return kExitCannotExecute;
}

}  // namespace pathwarden::sandbox
