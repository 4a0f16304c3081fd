// `pathwarden help [COMMAND...]` (a command's --help, or the overview) and
// `pathwarden completion bash` (bash completion of every command and flag,
// generated from the same CLI11 definitions as --help, so the two cannot
// drift apart).

#ifndef PATHWARDEN_CLI_HELP_COMMAND_H_
#define PATHWARDEN_CLI_HELP_COMMAND_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pathwarden::cli {

// RunHelp()
//
// Prints the help of the command named by `words` ("policy check": a
// subcommand's), or of `app` when empty. Exit 0, or 2 with a message on
// stderr for a command that does not exist.
int RunHelp(CLI::App& app, const std::vector<std::string>& words);

// BashCompletion()
//
// A bash completion script for `app`: its commands (nested), and each
// command's options, but the hidden ones.
std::string BashCompletion(CLI::App& app);

// VersionText()
//
// "pathwarden 0.1.0 (22f7333abcde 2026-12-01)": what --version prints.
std::string VersionText();

}  // namespace pathwarden::cli

#endif  // PATHWARDEN_CLI_HELP_COMMAND_H_
