// Worlds the benchmarks measure.

#ifndef PATHWARDEN_BENCH_FIXTURES_H_
#define PATHWARDEN_BENCH_FIXTURES_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench.h"
#include "pathwarden/model.h"
#include "src/api/model_impl.h"

namespace pathwarden::bench {

// ChainWorld, ChainModel()
//
// The seed patch's worst case: `depth` nested directories with one rule
// each (ioctl_dev) in `layers` identical layers handling
// ioctl_dev|write_file|make_reg, and process `sb` holding an O_PATH fd
// `inner` to the innermost directory. Null when it cannot be built.
struct ChainWorld {
  Model model;
  Process sb;
  Fd inner;
};
std::unique_ptr<ChainWorld> ChainModel(int depth, int layers, const EngineOptions& options);

// ChainRequest()
//
// open("file.txt" at inner, O_CREAT|O_TRUNC|O_WRONLY): Landlock denies
// make_reg after walking to the root.
Request ChainRequest(const ChainWorld& c);

// BenchHostOptions()
//
// The host read as the benchmarks read it: without the security modules
// (HostOptions::lsm), so that what is measured is the engine's Unix and
// Landlock evaluation wherever it runs (under valgrind, which does not
// know lsm_list_modules(), their list would be unknown and every answer
// with it).
inline HostOptions BenchHostOptions() {
  HostOptions o;
  o.lsm.read = false;
  return o;
}

// UsrWorld, UsrModel()
//
// The host (Model::FromHost(), kSnapshot) with everything below host
// directory `usr` preloaded (Model::Preload(), ACLs included), processes
// `user` (uid 1000) and `sb` (uid 1000, one layer handling read_file and
// read_dir, granting read_file under /usr/include). The engine runs with
// `options`. With `progress`, the preload draws a ProgressLine on stderr
// (on a terminal only). Null with the reason in *why when it cannot be
// built.
struct UsrWorld {
  Model model;
  Process user, sb;
  Node usr;
  uint64_t entries = 0;  // what Preload() filled (the top directory included)
  double seconds = 0;    // how long it took
};
std::unique_ptr<UsrWorld> UsrModel(const std::string& usr, const EngineOptions& options,
                                   bool progress, std::string* why);

// UsrModelOrNote()
//
// UsrModel() of `o.usr` with the default options for benchmark `name`,
// or nullptr with the reason as a note in `r` ("lookup: ..."): the
// benchmark is then left out.
std::unique_ptr<UsrWorld> UsrModelOrNote(const Options& o, Reporter& r, std::string_view name,
                                         bool progress = false);

// PathsBelow()
//
// Every position below `top` (itself included, depth first) with its path
// spelled from `prefix`: what the lookup and threads benchmarks resolve.
// Mounts are not entered, nor negative entries listed.
std::vector<std::pair<std::string, vfs::DentryId>> PathsBelow(const vfs::World& w,
                                                              vfs::DentryId top,
                                                              const std::string& prefix);

}  // namespace pathwarden::bench

#endif  // PATHWARDEN_BENCH_FIXTURES_H_
