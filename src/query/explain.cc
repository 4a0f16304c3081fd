// `pathwarden explain`: the session on the live machine, and rendering.

#include "src/query/explain.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pathwarden/errno.h"
#include "src/explain/explain.h"
#include "src/api/model_impl.h"
#include "src/input/text_quote.h"
#include "src/kernel/host_probe.h"
#include "src/query/scratch.h"
#include "src/scenario/op_codec.h"

namespace pathwarden::query {
namespace {

using namespace ansi;

std::string ModeText(const PermVerdict& v) {
  return ModeString(v.mode) + (v.has_acl ? "+" : "");
}

}  // namespace

namespace {

// The file:line of every policy line that wrote the first rule of layer
// `layer` that `match` accepts, ", "-joined; "" when there is none.
template <typename Match>
std::string OriginOfRule(const LayerOrigins& o, int layer, Match match) {
  if (layer < 1 || static_cast<size_t>(layer) > o.layers.size()) return "";
  const policy::HostLayer& l = o.layers[static_cast<size_t>(layer) - 1];
  for (size_t i = 0; i < l.ruleset.rules.size() && i < l.origins.size(); ++i) {
    if (!match(l.ruleset.rules[i])) continue;
    std::string out;
    for (const policy::Origin& og : l.origins[i]) {
      if (!out.empty()) out += ", ";
      out += og.line > 0 ? fmt::format("{}:{}", og.file, og.line) : og.file;
    }
    return out;
  }
  return "";
}

}  // namespace

std::string OriginOf(const LayerOrigins& o, int layer, const std::string& path) {
  return OriginOfRule(o, layer, [&](const LandlockRule& r) { return r.path == path; });
}

std::string OriginOf(const LayerOrigins& o, const RuleGrant& g) {
  if (g.port < 0) return OriginOf(o, g.layer, g.path);
  return OriginOfRule(o, g.layer, [&](const LandlockRule& r) {
    return r.type == landlock::kRuleNetPort && r.port == static_cast<uint64_t>(g.port);
  });
}

std::string LayerSource(const LayerOrigins& o, int layer) {
  if (layer < 1 || static_cast<size_t>(layer) > o.policies.size()) return "";
  return o.policies[static_cast<size_t>(layer) - 1].source;
}

namespace {

std::vector<std::string> Names(const LayerVerdict& v, landlock::AccessMask m, bool audit) {
  std::vector<std::string> out;
  const char* prefix = v.kind == LayerVerdict::Kind::kFs    ? "fs."
                       : v.kind == LayerVerdict::Kind::kNet ? "net."
                                                            : "scope.";
  const int n = v.kind == LayerVerdict::Kind::kFs ? landlock::kNumFsRights : 16;
  for (int b = 0; b < n; ++b) {
    if (!(m & (1u << b))) continue;
    std::string_view name = v.kind == LayerVerdict::Kind::kFs    ? landlock::FsRightName(b)
                            : v.kind == LayerVerdict::Kind::kNet ? landlock::NetRightName(b)
                                                                 : landlock::ScopeName(b);
    if (name.empty()) continue;
    out.push_back(audit ? prefix + std::string(name) : std::string(name));
  }
  return out;
}

std::string Join(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string out;
  for (const std::string& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// A changing query on the kernel, inside the scratch directory, which is
// put back after, also when this process dies meanwhile (a ScratchGuard).
std::optional<int> VerifyChanging(const kernel_internal::ProbeIdentity& who, const Query& q,
                                  ScratchGuard& guard, std::string* why) {
  // Besides the containment checks, the child may change nothing outside
  // the scratch directory (Landlock: every right beneath it, reading and
  // executing elsewhere).
  kernel_internal::ProbeIdentity id = who;
  LandlockRuleset fence;
  fence.handled_access_fs = landlock::kFsAll;
  fence.AllowPath(guard.root(), landlock::kFsAll);
  fence.AllowPath("/", landlock::kFsReadFile | landlock::kFsReadDir | landlock::kFsExecute);
  id.layers.push_back(fence);
  const Request reqs[] = {q.request};
  std::string probe_error;
  auto r = guard.Change([&]() -> Result<int, std::string> {
    auto errs = kernel_internal::ProbeHostChanging(id, reqs, true);
    if (!errs) return Unexpected(probe_error = errs.error());
    return (*errs)[0];
  });
  if (!r) {
    *why = r.error() == probe_error ? probe_error : "--scratch: " + r.error();
    return std::nullopt;
  }
  return *r;
}

}  // namespace

std::string Paint(bool colour, const char* code, std::string_view text) {
  if (!colour) return std::string(text);
  return fmt::format("{}{}{}", code, text, kReset);
}

std::string DecidedBy(const PermVerdict& v, bool fast) {
  if (fast) return "anyone may search (fast path)";
  switch (v.decided_by) {
    case PermClass::kOwner: return fmt::format("owner {}", v.uid);
    case PermClass::kAclUser: return fmt::format("ACL entry user:{}", v.acl_id);
    case PermClass::kGroup: return fmt::format("group {}", v.gid);
    case PermClass::kAclGroup:
      return v.acl_id ? fmt::format("ACL entry group:{}", v.acl_id) : "ACL owning group";
    case PermClass::kOther: return "other";
    case PermClass::kAclOther: return "ACL other";
    case PermClass::kAllHave: return "every class has it";
    case PermClass::kCapability:
      return v.capability >= 0 ? CapName(v.capability) : std::string("a capability");
    case PermClass::kReadonly: return "read-only filesystem";
    case PermClass::kImmutable: return "immutable";
    case PermClass::kFastSearch: return "anyone may search (fast path)";
    case PermClass::kUnknown: return "not known (above: why)";
    case PermClass::kUnmappedId: return "owner or group unmapped by the idmapped mount";
    case PermClass::kFuseMounterOnly: return "the FUSE mount admits only its mounter";
    case PermClass::kNone: break;
  }
  return "";
}

std::string ResultName(const Decision& d) {
  if (d.unknown()) return "unknown";
  if (d.err() == 0) return "ok";
  return ErrnoName(d.err());
}

namespace {

// The colour of a result: green allowed, yellow unknown, red denied.
const char* ResultColour(const Decision& d) {
  return d.allowed() ? kGreen : d.unknown() ? kYellow : kRed;
}

// "unknown", then the lines of 0 ("ok") up to EHWPOISON (133) and of
// any errno glibc names after it.
const std::vector<ResultLines::Line>& ResultLineTable() {
  static const std::vector<ResultLines::Line> kLines = [] {
    std::vector<ResultLines::Line> lines;
    auto add = [&](std::string_view name) {
      ResultLines::Line l{};
      if (name.size() < sizeof l.text) {
        std::memcpy(l.text, name.data(), name.size());
        l.text[name.size()] = '\n';
        l.size = static_cast<uint8_t>(name.size() + 1);
      }
      lines.push_back(l);
    };
    add("unknown");
    for (int e = 0; e <= EHWPOISON || strerrorname_np(e) != nullptr; ++e) add(ErrnoName(e));
    return lines;
  }();
  return kLines;
}

}  // namespace

ResultLines::ResultLines(bool colour)
    : colour_(colour), lines_(ResultLineTable().data()), rows_(ResultLineTable().size()) {}

void ResultLines::Grow(size_t more) {
  buf_.resize(std::max<size_t>(2 * buf_.size(), std::max<size_t>(size_ + more, 4096)));
}

void ResultLines::AddSlow(const Decision& d) {
  const std::string line = Paint(colour_, ResultColour(d), ResultName(d)) + "\n";
  if (buf_.size() - size_ < line.size()) Grow(line.size());
  std::memcpy(buf_.data() + size_, line.data(), line.size());
  size_ += line.size();
}

std::vector<std::string> BlockerNames(const LayerVerdict& v, landlock::AccessMask m) {
  return Names(v, m, true);
}

Result<std::unique_ptr<Session>, std::string> Session::Open(const identity::Identity& who,
                                                            std::vector<policy::Policy> layers) {
  HostOptions o;
  o.mountinfo = who.mountinfo;
  o.root_dir = who.host_root;
  o.overflow = identity::HostOverflowFor(who.cred);
  o.assume_unseen_run_nothing = who.assume_unseen_run_nothing;
  o.askers_share_sysctl_namespaces = who.shares_sysctl_namespaces;
  o.lsm.pid = who.pid;
  o.lsm.trusted = who.trusted_lsms;
  o.lsm.root = who.lsm_root;
  auto m = Model::FromHost(o);
  if (!m) return Unexpected(m.error());
  std::unique_ptr<Session> s(new Session(std::move(*m), who));
  Model& model = s->model_;
  // A session asks many queries, which share directory prefixes.
  SetPrefixMemo(model, true);
  Process setup = model.Spawn("setup", Cred::ForUser(0, 0));
  if (who.root != "/") {
    const Decision d = model.Apply(setup, Chroot{.path = who.root});
    if (!d.allowed())
      return Unexpected(fmt::format("root {}: {}", who.root, d.ToText()));
  }
  if (who.cwd != "/") {
    const Decision d = model.Apply(setup, Chdir{.path = who.cwd});
    if (!d.allowed())
      return Unexpected(fmt::format("working directory {}: {}", who.cwd, d.ToText()));
  }
  s->asker_ = model.Spawn("asker", who.cred, setup);
  (void)model.SetControllingTty(s->asker_, who.ctty);
  // The layers, built on this host as landlockconfig builds them.
  // Rule paths are opened by the process that builds the layer, with its
  // own credentials (as landlockconfig and the sandboxer open them).
  for (size_t i = 0; i < layers.size(); ++i) {
    policy::HostLayer l = policy::BuildLayerOn(layers[i], model, s->asker_);
    const Decision d = model.Apply(s->asker_, Restrict{l.ruleset});
    if (!d.allowed())
      return Unexpected(fmt::format("layer {} ({}): {}", i + 1, layers[i].source, d.ToText()));
    s->built_.push_back(std::move(l));
  }
  s->policies_ = std::move(layers);
  return s;
}

std::vector<std::string> Session::warnings() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < built_.size(); ++i)
    for (const std::string& w : built_[i].warnings)
      out.push_back(fmt::format("layer {} ({}): {}", i + 1, policies_[i].source, w));
  return out;
}

Session::Session(Model m, identity::Identity who) : model_(std::move(m)), who_(std::move(who)) {}

Session::~Session() = default;

// The kernel's answer (ProbeHost), or why not.
std::optional<int> Session::Verify(const Query& q, const std::string& scratch, std::string* why) {
  kernel_internal::ProbeIdentity id{who_.cred, {}};
  for (const policy::HostLayer& l : built_) id.layers.push_back(l.ruleset);
  if (!q.read_only) {
    // Mounts, sockets and the like: not even a scratch directory holds
    // what they change (src/scenario/op_codec.cc, Effect).
    if (scenario_internal::CodecOf(OpOf(q.request)).effect == scenario_internal::Effect::kOther) {
      *why = fmt::format("{} is not run on the kernel here: it changes more than the files of a "
                         "scratch directory",
                         q.op);
      return std::nullopt;
    }
    if (scratch.empty()) {
      *why = "changes the host: run only inside a directory given with --scratch";
      return std::nullopt;
    }
    if (std::string out = Contained(q, scratch, who_.cwd); !out.empty()) {
      *why = out;
      return std::nullopt;
    }
    if (who_.cwd != "/" && !q.path.starts_with('/')) {
      *why = "a relative path with a working directory other than /: not run on the kernel";
      return std::nullopt;
    }
    char* real = realpath(scratch.c_str(), nullptr);
    if (real == nullptr) {
      *why = fmt::format("--scratch {}: {}", scratch, std::strerror(errno));
      return std::nullopt;
    }
    const std::string dir = real;
    std::free(real);
    // One guard for the session's changing queries; another directory
    // (a caller may change it between queries) gets a guard of its own.
    if (scratch_ && scratch_->root() != dir) scratch_.reset();
    if (!scratch_) {
      auto g = ScratchGuard::Open(dir);
      if (!g) {
        *why = "--scratch: " + g.error();
        return std::nullopt;
      }
      scratch_ = std::move(*g);
    }
    return VerifyChanging(id, q, *scratch_, why);
  }
  // The child takes the asker's root and working directory, as the
  // session's model does: a relative path starts where the model's does.
  id.root = who_.host_root.empty() ? who_.root : who_.host_root;
  id.cwd = who_.cwd;
  const Request reqs[] = {q.request};
  auto r = kernel_internal::ProbeHost(id, reqs);
  if (!r) {
    *why = r.error();
    return std::nullopt;
  }
  return (*r)[0];
}

Answer Session::Ask(const Query& q, bool verify, const std::string& scratch) {
  Answer a{q, model_.Evaluate(asker_, q.request, Model::Detail::kTrace), std::nullopt, {}};
  if (verify) a.kernel_err = Verify(q, scratch, &a.unverified);
  return a;
}

Decision Session::AskQuiet(const Query& q) {
  return model_.Evaluate(asker_, q.request, Model::Detail::kVerdictOnly);
}

std::vector<LayerVerdict> LayersOf(const Reason& r) {
  std::vector<LayerVerdict> out = r.layers;
  for (const ReferSide& side : r.refer) {
    for (const LayerVerdict& v : side.layers) {
      auto same = std::find_if(out.begin(), out.end(), [&](const LayerVerdict& o) {
        return o.layer == v.layer && o.kind == v.kind;
      });
      if (same == out.end()) {
        out.push_back(v);
        continue;
      }
      same->requested |= v.requested;
      same->missing |= v.missing;
      same->grants.insert(same->grants.end(), v.grants.begin(), v.grants.end());
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const LayerVerdict& x, const LayerVerdict& y) { return x.layer < y.layer; });
  return out;
}

Verdict VerdictOf(const Answer& a) {
  Verdict v;
  if (!a.kernel_err) {
    v.why = a.unverified;
    return v;
  }
  v.kernel = *a.kernel_err == 0 ? std::string("ok") : ErrnoName(*a.kernel_err);
  if (a.decision.unknown()) {
    v.kind = Verdict::Kind::kNotCompared;
    v.why = "the model's answer is unknown";
  } else {
    v.kind = *a.kernel_err == a.decision.err() ? Verdict::Kind::kAgrees
                                               : Verdict::Kind::kDisagrees;
  }
  return v;
}

namespace {

// The operation and its paths, each as it could be written again:
// "rename /a \"b c\"".
std::string QueryText(const Query& q) {
  std::string what = q.op + " " + input::QuoteName(q.path);
  if (!q.path2.empty()) what += " " + input::QuoteName(q.path2);
  return what;
}

}  // namespace

std::string RenderLine(const Answer& a, bool colour) {
  const Decision& d = a.decision;
  std::string out = QueryText(a.query) + ": " + Paint(colour, ResultColour(d), ResultName(d));
  if (!d.ToText().empty()) out += " " + input::EscapeText(d.ToText());
  const Verdict v = VerdictOf(a);
  switch (v.kind) {
    case Verdict::Kind::kAgrees: out += " " + Paint(colour, kGreen, "[kernel agrees]"); break;
    case Verdict::Kind::kDisagrees:
      out += " " + Paint(colour, kRed, fmt::format("[kernel DISAGREES: {}]", v.kernel));
      break;
    case Verdict::Kind::kNotCompared:
      out += " " + Paint(colour, kYellow,
                         fmt::format("[kernel: {}, not compared: {}]", v.kernel, v.why));
      break;
    case Verdict::Kind::kUnverified:
      if (!v.why.empty())
        out += " " + Paint(colour, kYellow, fmt::format("[unverified: {}]", input::EscapeText(v.why)));
      break;
  }
  return out;
}

std::string RenderText(const Session& s, const Answer& a, bool colour) {
  const LayerOrigins origins{s.policies(), s.layers()};
  const Decision& d = a.decision;
  std::string out;
  std::string result = ResultName(d);
  if (d.err() > 0) result += fmt::format(" ({})", std::strerror(d.err()));
  out += fmt::format("{}: {}\n", Paint(colour, kBold, QueryText(a.query)),
                     Paint(colour, ResultColour(d), result));
  out += fmt::format("  as {}\n", input::EscapeText(s.who().Describe()));
  if (!d.ToText().empty()) out += fmt::format("  {}\n", input::EscapeText(d.ToText()));
  const Reason& r = d.reason();
  // The walk: each directory searched, then the object's own check; on
  // an overlay, a column says which layers hold each object.
  std::vector<std::array<std::string, 8>> rows;
  bool stacked = false;
  // For an asker in a user namespace (read from outside it), each owner
  // and group also as the namespace has it: "1000 (0)", "0 (-)" where it
  // does not map.
  const Cred& cred = s.who().cred;
  const bool ns = cred.userns && !cred.userns->reader_inside && !cred.userns->overflow_shown;
  auto id = [&](uint32_t v, bool gid) {
    if (!ns) return std::to_string(v);
    const auto in = IdInside(gid ? cred.userns->gid_map : cred.userns->uid_map, v);
    return in ? fmt::format("{} ({})", v, *in) : fmt::format("{} (-)", v);
  };
  auto row = [&](const PermVerdict& v, bool fast) {
    stacked |= !v.layer.empty();
    rows.push_back({input::QuoteName(v.path), std::string(TypeName(v.mode)), ModeText(v),
                    id(v.uid, false), id(v.gid, true), v.layer, WantString(v.want),
                    DecidedBy(v, fast) +
                        (v.granted || v.decided_by == PermClass::kUnknown ? "" : " — refused")});
  };
  for (const ComponentVerdict& cv : r.components) row(cv.check, cv.fast);
  if (r.dac) row(*r.dac, false);
  if (!rows.empty()) {
    std::array<size_t, 8> w{};
    const std::array<std::string, 8> head{"path",  "type",  "mode",  "owner",
                                          "group", "layer", "check", "decided by"};
    for (size_t k = 0; k < 8; ++k) w[k] = head[k].size();
    for (const auto& rw : rows)
      for (size_t k = 0; k < 8; ++k) w[k] = std::max(w[k], rw[k].size());
    auto line = [&](const std::array<std::string, 8>& rw, const char* code) {
      std::string l = "   ";
      for (size_t k = 0; k < 8; ++k) {
        if (k == 5 && !stacked) continue;
        l += " " + (k == 7 ? rw[k] : fmt::format("{:<{}}", rw[k], w[k]));
      }
      return Paint(colour && code != nullptr, code ? code : "", l) + "\n";
    };
    out += "\n" + line(head, kDim);
    for (size_t i = 0; i < rows.size(); ++i) {
      const bool refused = rows[i][7].ends_with("refused");
      out += line(rows[i], refused ? kRed : nullptr);
    }
    if (ns)
      out += "    (owner and group: this machine's ids, and in parentheses the user namespace's, "
             "- where they do not map into it)\n";
    if (stacked)
      out += "    (overlay: each object is checked for the caller as shown, then its real inode, "
             "the upper layer's or else the topmost lower's, for the overlay's mounter, root of "
             "the initial namespace, which passes; a write to a lower file copies it up)\n";
  }
  // Landlock, per layer (a rename's or link's two sides merged), then each
  // side of a rename or link across directories.
  auto layers = [&](const std::vector<LayerVerdict>& lv, const std::string& side) {
    for (const LayerVerdict& v : lv) {
      std::string src = LayerSource(origins, v.layer);
      std::string l = fmt::format("  landlock layer {}{}{}: asked {}", v.layer,
                                  src.empty() ? "" : " (" + input::QuoteName(src) + ")", side,
                                  Join(Names(v, v.requested, false)));
      for (const RuleGrant& g : v.grants) {
        std::string origin = input::EscapeText(OriginOf(origins, g));
        l += fmt::format("; {} granted by the rule on {}{}", Join(Names(v, g.granted, false)),
                         g.port >= 0 ? fmt::format("port {}", g.port) : input::QuoteName(g.path),
                         origin.empty() ? "" : " (" + origin + ")");
      }
      if (v.missing)
        l += "; " + Paint(colour, kRed,
                          fmt::format("missing {} (no rule on the walk grants it)",
                                      Join(BlockerNames(v, v.missing))));
      out += l + "\n";
    }
  };
  const std::vector<LayerVerdict> merged = LayersOf(r);
  if (!merged.empty()) out += "\n";
  layers(merged, "");
  for (const ReferSide& side : r.refer)
    layers(side.layers,
           fmt::format(", {} {}", side.source ? "from" : "to", input::QuoteName(side.path)));
  const Verdict v = VerdictOf(a);
  switch (v.kind) {
    case Verdict::Kind::kAgrees:
    case Verdict::Kind::kDisagrees: {
      const bool agree = v.kind == Verdict::Kind::kAgrees;
      out += fmt::format("\n  kernel: {} — {}\n", v.kernel,
                         Paint(colour, agree ? kGreen : kRed, agree ? "agrees" : "DISAGREES"));
      break;
    }
    case Verdict::Kind::kNotCompared:
      out += fmt::format("\n  kernel: {} — {}\n", v.kernel,
                         Paint(colour, kYellow, "not compared (" + v.why + ")"));
      break;
    case Verdict::Kind::kUnverified:
      if (!v.why.empty())
        out += fmt::format("\n  kernel: unverified ({})\n", input::EscapeText(v.why));
      break;
  }
  return out;
}

nlohmann::json RenderJson(const Session& s, const Answer& a) {
  return RenderJson(LayerOrigins{s.policies(), s.layers()}, a);
}

nlohmann::json RenderJson(const LayerOrigins& s, const Answer& a) {
  using nlohmann::json;
  const Decision& d = a.decision;
  json j;
  j["op"] = a.query.op;
  j["path"] = a.query.path;
  if (!a.query.path2.empty()) j["path2"] = a.query.path2;
  j["result"] = ResultName(d);
  j["errno"] = d.unknown() ? json(nullptr) : json(d.err());
  j["reason"] = d.ToText();
  if (d.unknown()) j["unknown_why"] = d.reason().unknown_why;
  const Reason& r = d.reason();
  j["stage"] = std::string(StageName(r.stage));
  // Objects are filled key by key and moved into their arrays: an
  // initializer list of pairs builds each pair as a two-element array
  // first, then copies it (with it, building and dumping an answer took
  // 431,000 instructions; 235,000 so). The keys come out sorted either
  // way.
  auto perm = [&](const PermVerdict& v, bool fast) {
    json p = json::object();
    p["path"] = v.path;
    p["type"] = TypeName(v.mode);
    p["mode"] = ModeText(v);
    p["uid"] = v.uid;
    p["gid"] = v.gid;
    p["acl"] = v.has_acl;
    if (!v.layer.empty()) p["layer"] = v.layer;
    p["check"] = WantString(v.want);
    // null: the check is outside the model, neither granted nor refused.
    if (v.decided_by == PermClass::kUnknown) {
      p["granted"] = nullptr;
    } else {
      p["granted"] = v.granted;
    }
    p["decided_by"] = DecidedBy(v, fast);
    p["fast"] = fast;
    return p;
  };
  json& walk = j["walk"] = json::array();
  for (const ComponentVerdict& cv : r.components) walk.push_back(perm(cv.check, cv.fast));
  if (r.dac) j["dac"] = perm(*r.dac, false);
  auto layers = [&](const std::vector<LayerVerdict>& lv) {
    json arr = json::array();
    for (const LayerVerdict& v : lv) {
      json l = json::object();
      l["layer"] = v.layer;
      l["policy"] = LayerSource(s, v.layer);
      l["kind"] = v.kind == LayerVerdict::Kind::kFs    ? "fs"
                  : v.kind == LayerVerdict::Kind::kNet ? "net"
                                                       : "scope";
      l["requested"] = Names(v, v.requested, false);
      l["missing"] = BlockerNames(v, v.missing);
      json& grants = l["grants"] = json::array();
      for (const RuleGrant& g : v.grants) {
        json gj = json::object();
        gj["rights"] = Names(v, g.granted, false);
        gj["origin"] = OriginOf(s, g);
        if (g.port >= 0) {
          gj["port"] = g.port;
        } else {
          gj["rule"] = g.path;
        }
        grants.push_back(std::move(gj));
      }
      arr.push_back(std::move(l));
    }
    return arr;
  };
  j["layers"] = layers(LayersOf(r));
  if (!r.refer.empty()) {
    json refer = json::array();
    for (const ReferSide& side : r.refer)
      refer.push_back({{"path", side.path}, {"source", side.source}, {"layers", layers(side.layers)}});
    j["refer"] = refer;
  }
  const Verdict v = VerdictOf(a);
  switch (v.kind) {
    case Verdict::Kind::kAgrees:
    case Verdict::Kind::kDisagrees:
      j["verified"] = {{"kernel", v.kernel}, {"agrees", v.kind == Verdict::Kind::kAgrees}};
      break;
    case Verdict::Kind::kNotCompared:
      j["verified"] = {{"kernel", v.kernel}, {"agrees", nullptr}, {"why", "not compared: " + v.why}};
      break;
    case Verdict::Kind::kUnverified:
      if (!v.why.empty()) j["verified"] = {{"kernel", nullptr}, {"why", v.why}};
      break;
  }
  return j;
}

}  // namespace pathwarden::query
