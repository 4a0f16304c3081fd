// Benchmark 1: the Landlock worst case of "landlock: Refactor layer masks"
// -- a chain of D directories with one rule each, an open denied after
// walking to the root -- in the engine (by-access, by-layer, memoized) and
// on the kernel, in the same run.

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/fixtures.h"

namespace pathwarden::bench {

namespace {

// Instructions per check of both layouts (and the memoized evaluator) at
// every depth and layer count, and the by-access/by-layer ratio.
void Instructions(const Options& o, const std::vector<int>& depths, Reporter& r) {
  std::vector<nlohmann::json> ratios;  // after the counts, as a table of their own
  for (int depth : depths) {
    for (int layers : {1, 4, 16}) {
      if (layers != 1 && (o.smoke || o.quick)) continue;
      double by[2] = {-1, -1};
      for (const char* variant : {"by-access", "by-layer", "memoized"}) {
        if (layers != 1 && std::string(variant) == "memoized") continue;
        const int n = std::max(10, 20000 / depth);
        std::string why;
        const double ins = InstructionsPerCheck(
            {"landlock", variant, std::to_string(depth), std::to_string(layers), std::to_string(n)},
            n, &why);
        if (ins < 0) {
          r.Note("instructions: " + why);
          for (nlohmann::json& m : ratios) r.Add(std::move(m));
          return;
        }
        r.Add({{"bench", "landlock"}, {"variant", variant}, {"depth", depth}, {"layers", layers},
               {"instructions_per_check", ins}, {"instructions_per_level", ins / depth}});
        if (std::string(variant) != "memoized") by[std::string(variant) == "by-layer"] = ins;
      }
      ratios.push_back({{"bench", "landlock"}, {"depth", depth}, {"layers", layers},
                        {"instructions_by_access_over_by_layer", by[0] / by[1]}});
    }
  }
  for (nlohmann::json& m : ratios) r.Add(std::move(m));
}

}  // namespace

void RunLandlock(const Options& o, Reporter& r) {
  std::vector<int> depths = {10, 100, 1000, 10000};
  if (o.quick) depths = {10, 100, 1000};
  if (o.smoke) depths = {10};
  const double seconds = o.smoke ? 0.002 : o.quick ? 0.05 : 0.3;
  struct Variant {
    const char* name;
    LayerLayout layout;
    bool memo;
  };
  const Variant variants[] = {{"by-access", LayerLayout::kByAccess, false},
                              {"by-layer", LayerLayout::kByLayer, false},
                              {"memoized", LayerLayout::kByLayer, true}};
  for (int depth : depths) {
    double kernel_ns = -1;
    if (o.kernel) {
      std::string why;
      const int iterations = std::max(20, (o.smoke ? 2000 : o.quick ? 20000 : 200000) / depth);
      kernel_ns = KernelLandlockNs(depth, iterations, &why);
      if (kernel_ns < 0) {
        r.Note("kernel: " + why);
      } else {
        r.Add({{"bench", "landlock"}, {"variant", "kernel"}, {"depth", depth}, {"layers", 1},
               {"ns_per_check", kernel_ns}, {"ns_per_level", kernel_ns / depth}});
      }
    }
    for (int layers : {1, 4, 16}) {
      if (layers != 1 && (o.smoke || (o.quick && depth > 100))) continue;
      for (const Variant& v : variants) {
        if (layers != 1 && v.memo) continue;
        EngineOptions eo;
        eo.layout = v.layout;
        eo.memo = v.memo;
        auto c = ChainModel(depth, layers, eo);
        if (!c) {
          r.Note(fmt::format("cannot build the chain of {}", depth));
          continue;
        }
        const Request req = ChainRequest(*c);
        constexpr Model::Detail kQuiet = Model::Detail::kVerdictOnly;
        const int err = c->model.Evaluate(c->sb, req, kQuiet).err();
        if (err != EACCES) r.Note(fmt::format("unexpected result {} at depth {}", err, depth));
        const double ns = NsPerOp([&] { (void)c->model.Evaluate(c->sb, req, kQuiet); }, seconds);
        nlohmann::json m = {{"bench", "landlock"}, {"variant", v.name},    {"depth", depth},
                            {"layers", layers},    {"ns_per_check", ns},  {"ns_per_level", ns / depth}};
        if (kernel_ns > 0 && layers == 1) m["kernel_over_engine"] = kernel_ns / ns;
        r.Add(std::move(m));
      }
    }
  }
  if (o.instructions) Instructions(o, depths, r);
}

}  // namespace pathwarden::bench
