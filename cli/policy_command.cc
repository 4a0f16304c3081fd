// `pathwarden policy check|print`.

#include "cli/policy_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "src/policy/policy.h"

namespace pathwarden::cli {
namespace {

std::string Cwd() {
  std::string buf(4096, '\0');
  while (getcwd(buf.data(), buf.size()) == nullptr) {
    if (errno != ERANGE) return ".";
    buf.resize(buf.size() * 2);
  }
  return std::string(buf.c_str());
}

}  // namespace

void AddPolicyCommand(CLI::App& app, PolicyCommand& pc) {
  pc.policy = app.add_subcommand("policy", "landlockconfig policies (JSON or TOML; a file or a "
                                           "directory of them)");
  pc.policy->require_subcommand(1);
  pc.check = pc.policy->add_subcommand("check", "validate policies (exit 0, or 2 with the errors)");
  pc.check->add_option("FILE", pc.check_files, "policy files (*.json, *.toml) or directories")
      ->required();
  pc.print = pc.policy->add_subcommand("print", "print the resolved policy");
  pc.print->add_option("FILE", pc.print_file, "a policy file (*.json, *.toml) or a directory")
      ->required();
  auto* json = pc.print->add_flag("--json", pc.json,
                                  "as a landlockconfig JSON file that reads back to it");
  pc.print->add_flag("--toml", pc.toml, "as a landlockconfig TOML file that reads back to it")
      ->excludes(json);
}

int RunPolicyCommand(const PolicyCommand& pc) {
  const std::string cwd = Cwd();
  if (pc.check->parsed()) {
    int status = 0;
    for (const std::string& f : pc.check_files) {
      auto p = policy::LoadPolicy(f, cwd);
      if (!p) {
        std::fprintf(stderr, "%s\n", p.error().c_str());
        status = 2;
      }
    }
    return status;
  }
  auto p = policy::LoadPolicy(pc.print_file, cwd);
  if (!p) {
    std::fprintf(stderr, "%s\n", p.error().c_str());
    return 2;
  }
  const std::string out = pc.json ? policy::ToJson(*p) : pc.toml ? policy::ToToml(*p)
                                                                  : policy::ToText(*p);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace pathwarden::cli
