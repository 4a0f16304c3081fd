// Delta debugging of scenarios: removals first (steps, processes, nodes,
// layers, rules), then simplifications of what is left, until a whole
// round changes nothing or the budget is spent.

#include "src/fuzz/shrinker.h"

#include <bit>
#include <optional>
#include <set>
#include <utility>

namespace pathwarden::fuzz {
namespace {

class Shrinker {
 public:
  Shrinker(const Scenario& s, const std::function<bool(const Scenario&)>& keep,
           const ShrinkOptions& options, ShrinkStats* stats)
      : best_(s), keep_(keep), options_(options), stats_(stats) {}

  Scenario Run() {
    bool progress = true;
    while (progress && Left()) {
      progress = false;
      progress |= ReduceSteps();
      progress |= RemoveProcesses();
      progress |= ReduceNodes();
      progress |= RemoveLayersAndRules();
      progress |= Simplify();
    }
    return std::move(best_);
  }

 private:
  bool Left() const { return tries_ < options_.max_tries; }

  // Adopts `c` when it keeps the property.
  bool Try(Scenario c) {
    if (!Left()) return false;
    ++tries_;
    if (stats_) ++stats_->tries;
    if (!keep_(c)) return false;
    if (stats_) ++stats_->accepted;
    best_ = std::move(c);
    return true;
  }

  // Removes chunks of a list, halving the chunk size: ddmin's complement
  // step, which is what shrinks long lists fast.
  template <typename Get>
  bool ReduceList(Get get) {
    bool progress = false;
    size_t chunk = std::max<size_t>(1, get(best_).size() / 2);
    while (chunk >= 1 && Left()) {
      for (size_t i = 0; i < get(best_).size() && Left();) {
        Scenario c = best_;
        auto& v = get(c);
        const size_t end = std::min(v.size(), i + chunk);
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(i), v.begin() + static_cast<std::ptrdiff_t>(end));
        if (Try(std::move(c))) {
          progress = true;
        } else {
          i += chunk;
        }
      }
      if (chunk == 1) break;
      chunk /= 2;
    }
    return progress;
  }

  bool ReduceSteps() {
    return ReduceList([](Scenario& s) -> std::vector<StepSpec>& { return s.steps; });
  }
  bool ReduceNodes() {
    return ReduceList([](Scenario& s) -> std::vector<NodeSpec>& { return s.nodes; });
  }

  // Removes a process with its children and every step by or aimed at
  // one of them.
  static void RemoveProcess(Scenario& s, const std::string& name) {
    std::set<std::string> gone{name};
    for (const ProcessSpec& p : s.processes)
      if (gone.contains(p.parent)) gone.insert(p.name);
    std::erase_if(s.processes, [&](const ProcessSpec& p) { return gone.contains(p.name); });
    std::erase_if(s.steps, [&](const StepSpec& st) {
      const bool aimed = st.op == Op::kSignal || st.op == Op::kConnectAbstract || st.op == Op::kSendFd;
      return gone.contains(st.as) || (aimed && gone.contains(st.target));
    });
  }

  bool RemoveProcesses() {
    bool progress = false;
    for (size_t i = best_.processes.size(); i-- > 0 && Left();) {
      if (i >= best_.processes.size()) continue;
      Scenario c = best_;
      RemoveProcess(c, best_.processes[i].name);
      progress |= Try(std::move(c));
    }
    return progress;
  }

  bool RemoveLayersAndRules() {
    bool progress = false;
    for (size_t p = 0; p < best_.processes.size() && Left(); ++p) {
      for (size_t l = best_.processes[p].layers.size(); l-- > 0 && Left();) {
        Scenario c = best_;
        auto& layers = c.processes[p].layers;
        layers.erase(layers.begin() + static_cast<std::ptrdiff_t>(l));
        progress |= Try(std::move(c));
      }
      for (size_t l = 0; l < best_.processes[p].layers.size() && Left(); ++l)
        progress |= ReduceList([p, l](Scenario& s) -> std::vector<RuleSpec>& {
          return s.processes[p].layers[l].rules;
        });
    }
    for (size_t i = 0; i < best_.steps.size() && Left(); ++i)
      if (best_.steps[i].layer)
        progress |= ReduceList([i](Scenario& s) -> std::vector<RuleSpec>& { return s.steps[i].layer->rules; });
    return progress;
  }

  // Tries `change` on a copy; `change` returns false when it has nothing
  // to simplify (no call to the predicate then).
  template <typename Change>
  bool Attempt(Change change) {
    if (!Left()) return false;
    Scenario c = best_;
    if (!change(c)) return false;
    return Try(std::move(c));
  }

  // Clears each set bit of a mask in turn.
  template <typename Mask>
  bool ClearBits(Mask mask) {
    bool progress = false;
    for (int bit = 0; bit < 64 && Left(); ++bit) {
      const uint64_t m = uint64_t{1} << bit;
      progress |= Attempt([&](Scenario& c) {
        auto& v = mask(c);
        if (!(static_cast<uint64_t>(v) & m)) return false;
        v = static_cast<std::remove_reference_t<decltype(v)>>(static_cast<uint64_t>(v) & ~m);
        return true;
      });
    }
    return progress;
  }

  bool SimplifyLayer(std::function<LayerSpec&(Scenario&)> layer) {
    bool progress = false;
    // A right the layer stops handling goes from its rules too.
    for (int bit = 0; bit < landlock::kNumFsRights && Left(); ++bit) {
      const landlock::AccessMask m = 1u << bit;
      progress |= Attempt([&](Scenario& c) {
        LayerSpec& l = layer(c);
        if (!(l.handled_fs & m)) return false;
        l.handled_fs &= ~m;
        for (RuleSpec& r : l.rules)
          if (!r.is_port) r.access &= ~m;
        std::erase_if(l.rules, [](const RuleSpec& r) { return !r.is_port && r.access == 0; });
        return true;
      });
    }
    progress |= ClearBits([&](Scenario& c) -> landlock::AccessMask& { return layer(c).scoped; });
    progress |= ClearBits([&](Scenario& c) -> landlock::AccessMask& { return layer(c).handled_net; });
    for (size_t r = 0; r < layer(best_).rules.size() && Left(); ++r)
      progress |= ClearBits([&](Scenario& c) -> landlock::AccessMask& {
        static landlock::AccessMask none = 0;
        LayerSpec& l = layer(c);
        if (r >= l.rules.size()) return none = 0;
        return l.rules[r].access;
      });
    return progress;
  }

  static std::optional<std::string> SimplerPath(const std::string& p) {
    std::string q = p;
    for (size_t at; (at = q.find("//")) != std::string::npos;) q.erase(at, 1);
    for (size_t at; (at = q.find("/./")) != std::string::npos;) q.erase(at, 2);
    if (q.size() > 1 && q.back() == '/') q.pop_back();
    if (q == p) return std::nullopt;
    return q;
  }

  bool Simplify() {
    bool progress = false;
    for (const SysctlField& f : kSysctlFields)
      progress |= Attempt([&](Scenario& c) { return std::exchange(c.sysctl.*f.value, 0) != 0; });
    for (size_t n = 0; n < best_.nodes.size() && Left(); ++n) {
      progress |= Attempt([&](Scenario& c) { return std::exchange(c.nodes[n].mode, std::nullopt).has_value(); });
      progress |= Attempt([&](Scenario& c) { return std::exchange(c.nodes[n].acl, std::nullopt).has_value(); });
      progress |= Attempt([&](Scenario& c) { return std::exchange(c.nodes[n].default_acl, std::nullopt).has_value(); });
      progress |= Attempt([&](Scenario& c) { return std::exchange(c.nodes[n].attrs, 0u) != 0; });
      progress |= Attempt([&](Scenario& c) { return !std::exchange(c.nodes[n].content, "").empty(); });
      progress |= Attempt([&](Scenario& c) {
        NodeSpec& x = c.nodes[n];
        if (!x.has_owner) return false;
        x.has_owner = false;
        x.uid = x.gid = 0;
        return true;
      });
      progress |= ClearBits([&](Scenario& c) -> uint32_t& { return c.nodes[n].mount_flags; });
    }
    for (size_t p = 0; p < best_.processes.size() && Left(); ++p) {
      progress |= Attempt([&](Scenario& c) { return !std::exchange(c.processes[p].groups, {}).empty(); });
      progress |= Attempt([&](Scenario& c) { return std::exchange(c.processes[p].umask, std::nullopt).has_value(); });
      progress |= Attempt([&](Scenario& c) { return std::exchange(c.processes[p].cwd, std::nullopt).has_value(); });
      if (best_.processes[p].caps)
        progress |= ClearBits([&](Scenario& c) -> uint64_t& {
          static uint64_t none = 0;
          return c.processes[p].caps ? *c.processes[p].caps : none = 0;
        });
      for (size_t l = 0; l < best_.processes[p].layers.size() && Left(); ++l)
        progress |= SimplifyLayer([p, l](Scenario& c) -> LayerSpec& { return c.processes[p].layers[l]; });
    }
    for (size_t i = 0; i < best_.steps.size() && Left(); ++i) {
      const Op op = best_.steps[i].op;
      progress |= ClearBits([&](Scenario& c) -> uint64_t& { return c.steps[i].flags; });
      progress |= ClearBits([&](Scenario& c) -> uint32_t& { return c.steps[i].access_mode; });
      progress |= Attempt([&](Scenario& c) { return std::exchange(c.steps[i].times, std::nullopt).has_value(); });
      if (op == Op::kOpen || op == Op::kMknod || op == Op::kMkdir) {
        const uint32_t plain = op == Op::kMkdir ? 0755 : 0644;
        progress |= Attempt([&](Scenario& c) { return std::exchange(c.steps[i].mode, plain) != plain; });
      }
      if (op == Op::kOpen)
        progress |= Attempt([&](Scenario& c) { return !std::exchange(c.steps[i].fd, "").empty(); });
      progress |= Attempt([&](Scenario& c) {
        auto q = SimplerPath(c.steps[i].path);
        if (q) c.steps[i].path = *q;
        return q.has_value();
      });
      progress |= Attempt([&](Scenario& c) {
        auto q = SimplerPath(c.steps[i].path2);
        if (q) c.steps[i].path2 = *q;
        return q.has_value();
      });
      if (best_.steps[i].layer)
        progress |= SimplifyLayer([i](Scenario& c) -> LayerSpec& { return *c.steps[i].layer; });
    }
    return progress;
  }

  Scenario best_;
  const std::function<bool(const Scenario&)>& keep_;
  ShrinkOptions options_;
  ShrinkStats* stats_;
  int tries_ = 0;
};

}  // namespace

Scenario Shrink(const Scenario& s, const std::function<bool(const Scenario&)>& keep,
                const ShrinkOptions& options, ShrinkStats* stats) {
  return Shrinker(s, keep, options, stats).Run();
}

uint64_t ScenarioSize(const Scenario& s) {
  uint64_t n = 0;
  for (const SysctlField& f : kSysctlFields) n += s.sysctl.*f.value != 0;
  auto layer = [&](const LayerSpec& l) {
    n += 1 + std::popcount(l.handled_fs) + std::popcount(l.handled_net) + std::popcount(l.scoped);
    for (const RuleSpec& r : l.rules) n += 1 + std::popcount(r.access) + r.path.size();
  };
  for (const NodeSpec& x : s.nodes)
    n += 1 + x.mode.has_value() + x.acl.has_value() + x.default_acl.has_value() + (x.attrs != 0) +
         x.has_owner + x.content.size() + std::popcount(x.mount_flags);
  for (const ProcessSpec& p : s.processes) {
    n += 1 + p.groups.size() + p.umask.has_value() + p.cwd.has_value();
    if (p.caps) n += std::popcount(*p.caps);
    for (const LayerSpec& l : p.layers) layer(l);
  }
  for (const StepSpec& st : s.steps) {
    n += 1 + std::popcount(st.flags) + std::popcount(st.access_mode) + st.path.size() + st.path2.size();
    if (st.layer) layer(*st.layer);
  }
  return n;
}

}  // namespace pathwarden::fuzz
