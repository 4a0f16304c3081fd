// pathwarden: the command line. Thin: parse flags, call the library, print.

#include <CLI/CLI.hpp>

#include <iostream>

#include "pathwarden/scenario.h"

int main(int argc, char** argv) {
  CLI::App app{"pathwarden: what Linux answers when a process touches a path, and why"};
  app.require_subcommand(1);
  auto* check = app.add_subcommand("check", "run scenario files");
  std::vector<std::string> files;
  check->add_option("FILE", files, "scenario files")->required();
  CLI11_PARSE(app, argc, argv);
  int status = 0;
  for (const auto& f : files) {
    auto s = pathwarden::LoadScenarioFile(f);
    if (!s) {
      std::cerr << s.error() << "\n";
      status = 2;
    }
  }
  return status;
}
