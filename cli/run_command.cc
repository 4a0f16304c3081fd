// `pathwarden run`: policies loaded, then src/sandbox's enforcement.

#include "cli/run_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <iostream>

#include "src/policy/policy.h"
#include "src/sandbox/run.h"

namespace pathwarden::cli {
namespace {

// LoadPolicyFile()
//
// A landlockconfig file or directory, as one layer.
Result<policy::Policy, std::string> LoadPolicyFile(const std::string& file,
                                                   const std::string& cwd) {
  return policy::LoadPolicy(file, cwd);
}

}  // namespace

int RunRunCommand(const RunCommandOptions& options) {
  sandbox::RunOptions run;
  run.compat = options.hard ? sandbox::Compat::kHard : sandbox::Compat::kBestEffort;
  run.dry_run = options.dry_run;
  run.verbose = options.verbose;
  run.pretend_abi = options.pretend_abi;
  run.argv = options.argv;
  if (options.policies.empty() && !options.from_env) {
    std::cerr << "pathwarden run: nothing to enforce: give --policy FILE or --from-env\n";
    return sandbox::kExitOwnError;
  }
  std::string cwd;
  if (!options.policies.empty()) {
    char* dir = getcwd(nullptr, 0);
    if (dir == nullptr) {
      std::cerr << "pathwarden run: cannot read the working directory\n";
      return sandbox::kExitOwnError;
    }
    cwd = dir;
    std::free(dir);
  }
  for (const std::string& file : options.policies) {
    auto p = LoadPolicyFile(file, cwd);
    if (!p) {
      std::cerr << "pathwarden run: " << p.error() << "\n";
      return sandbox::kExitOwnError;
    }
    run.layers.push_back(std::move(*p));
  }
  if (options.from_env) {
    // The sandboxer's variables at the running kernel's ABI, as it reads
    // them (without Landlock: the latest, all of it dropped later).
    int abi = sandbox::ProbeAbi();
    // Relative paths stay as written: run opens them from here, as the
    // sandboxer does (and --dry-run shows them so).
    auto p = policy::PolicyFromEnv([](const char* name) { return std::getenv(name); },
                                   abi > 0 ? abi : landlock::kAbiLatest, "");
    if (!p) {
      std::cerr << "pathwarden run: --from-env: " << p.error() << "\n";
      return sandbox::kExitOwnError;
    }
    // Stacked where --from-env stood among the --policy options.
    const size_t at = std::min(options.from_env_at, run.layers.size());
    run.layers.insert(run.layers.begin() + static_cast<std::ptrdiff_t>(at), std::move(*p));
    // As the sandboxer does: a sandboxer run inside does not apply them again.
    for (const char* name : {"LL_FS_RO", "LL_FS_RW", "LL_TCP_BIND", "LL_TCP_CONNECT", "LL_SCOPED"}) {
      unsetenv(name);
    }
  }
  const int rc = sandbox::RunConfined(run, std::cout, std::cerr);
  // 126 and 127 come after the layers were enforced and the exec failed:
  // this process is confined by them now, so nothing more runs in it, not
  // even exit handlers (which may reach for what the layers deny: a
  // sanitizer's leak scan reads /proc).
  if (rc == sandbox::kExitNotFound || rc == sandbox::kExitCannotExecute) {
    std::cout.flush();
    std::cerr.flush();
    _exit(rc);
  }
  return rc;
}

}  // namespace pathwarden::cli
