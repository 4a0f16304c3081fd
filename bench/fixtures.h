// Worlds the benchmarks measure.

#ifndef PATHWARDEN_BENCH_FIXTURES_H_
#define PATHWARDEN_BENCH_FIXTURES_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/engine/engine.h"
#include "src/vfs/import.h"

namespace pathwarden::bench {

// ChainEngine()
//
// The seed patch's worst case: `depth` nested directories with one rule
// each (ioctl_dev) in `layers` identical layers handling
// ioctl_dev|write_file|make_reg, and process "sb" holding an O_PATH fd
// "inner" to the innermost directory. Null when it cannot be built.
std::unique_ptr<Engine> ChainEngine(int depth, int layers, const EngineOptions& options);

// ChainStep()
//
// open("file.txt" at "inner", O_CREAT|O_TRUNC|O_WRONLY): Landlock denies
// make_reg after walking to the root.
StepSpec ChainStep();

// UsrEngine()
//
// A world with the host tree `usr` imported at /usr, processes "user"
// (uid 1000) and "sb" (uid 1000, one layer handling read_file and
// read_dir, granting read_file under /usr/include).
std::unique_ptr<Engine> UsrEngine(const std::string& usr, const EngineOptions& options,
                                  vfs::ImportStats* stats, double* seconds, std::string* why);

// PathsBelow()
//
// Every position below `top` (itself included, depth first) with its path
// spelled from `prefix`: what the lookup and threads benchmarks resolve.
// Mounts are not entered (a snapshot has none).
std::vector<std::pair<std::string, vfs::DentryId>> PathsBelow(const vfs::World& w,
                                                              vfs::DentryId top,
                                                              const std::string& prefix);

}  // namespace pathwarden::bench

#endif  // PATHWARDEN_BENCH_FIXTURES_H_
