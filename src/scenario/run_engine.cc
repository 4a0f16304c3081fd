// The engine as an executor of scenario files: a scenario's tree and
// processes built with the Model's builder, each step a typed request.

#include "src/scenario/run_engine.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include "pathwarden/errno.h"
#include "src/api/model_impl.h"
#include "src/task/request_fields.h"

namespace pathwarden {

namespace {

NodeAttrs AttrsOf(const NodeSpec& n) {
  NodeAttrs a;
  a.mode = n.EffectiveMode();
  a.uid = n.uid;
  a.gid = n.gid;
  a.acl = n.acl;
  a.default_acl = n.default_acl;
  return a;
}

FileType FileTypeOf(NodeType t) {
  switch (t) {
    case NodeType::kFile:
      return FileType::kRegular;
    case NodeType::kDir:
    case NodeType::kTmpfs:
    case NodeType::kBind:
      return FileType::kDirectory;
    case NodeType::kSymlink:
      return FileType::kSymlink;
    case NodeType::kFifo:
      return FileType::kFifo;
    case NodeType::kSocket:
      return FileType::kSocket;
    case NodeType::kChar:
      return FileType::kChar;
    case NodeType::kBlock:
      return FileType::kBlock;
  }
  return FileType::kRegular;
}

bool IsDir(const Model& m, Node n) {
  return m.TypeOf(n).value_or(FileType::kRegular) == FileType::kDirectory;
}
bool IsSymlink(const Model& m, Node n) {
  return m.TypeOf(n).value_or(FileType::kRegular) == FileType::kSymlink;
}

// The parent of a normalised absolute path ("/a/b" -> "/a", "/a" -> "/").
std::string_view Dirname(std::string_view p) {
  const size_t slash = p.rfind('/');
  return slash == 0 ? std::string_view("/") : p.substr(0, slash);
}
std::string_view Basename(std::string_view p) { return p.substr(p.rfind('/') + 1); }

LandlockRuleset RulesetOf(const LayerSpec& l) {
  LandlockRuleset rs;
  rs.handled_access_fs = l.handled_fs;
  rs.handled_access_net = l.handled_net;
  rs.scoped = l.scoped;
  for (const RuleSpec& r : l.rules) {
    if (r.is_port) {
      rs.AllowPort(r.port, r.access);
    } else {
      rs.AllowPath(r.path, r.access, r.nofollow);
    }
  }
  return rs;
}

}  // namespace

ScenarioModel::ScenarioModel(const EngineOptions& options) : model_(NewModel(options)) {
  processes_.emplace("root", model_.Init());
  fd_names_.resize(1);
}

Engine& ScenarioModel::engine() { return EngineOf(model_); }

Result<void, std::string> ScenarioModel::Build(const Scenario& s) {
  model_ = NewModel(EngineOf(model_).options(), s.abi);
  processes_.clear();
  processes_.emplace("root", model_.Init());
  fd_names_.assign(1, FdNames{});
  model_.SetSysctls(s.sysctl);
  model_.SetKernelRules(s.kernel.Over(RunningKernelRules()));
  for (const NodeSpec& n : s.nodes)
    if (auto r = BuildNode(s, n); !r) return r;
  // Attributes, then mount flags, once the whole tree is built.
  for (const NodeSpec& n : s.nodes) {
    if (!n.attrs) continue;
    if (auto at = model_.Lookup(n.path, false)) (void)model_.SetInodeFlags(*at, n.attrs);
  }
  for (const NodeSpec& n : s.nodes) {
    if ((n.type != NodeType::kTmpfs && n.type != NodeType::kBind) || !n.mount_flags) continue;
    auto at = model_.Lookup(n.path, true);
    if (!at) continue;
    if (n.type == NodeType::kTmpfs) {
      // MS_REMOUNT|MS_RDONLY: the superblock and the mount.
      if (n.mount_flags & kMountRdonly) (void)model_.Remount(*at, n.mount_flags, true);
    } else {
      // MS_BIND|MS_REMOUNT sets the mount's flags to exactly these.
      (void)model_.Remount(*at, n.mount_flags, false);
    }
  }
  for (const ProcessSpec& ps : s.processes)
    if (auto r = StartProcess(s, ps); !r) return r;
  // The counters are the steps': building walks too, but is not asked.
  engine().stats() = EngineStats{};
  return {};
}

Result<void, std::string> ScenarioModel::BuildNode(const Scenario& s, const NodeSpec& n) {
  auto fail = [&](std::string msg) {
    return Unexpected(fmt::format("{}: {}", s.Where(n.loc), msg));
  };
  auto mkdir_plain = [&](std::string_view path) -> Result<Node, std::string> {
    auto parent = model_.Lookup(Dirname(path), true);
    Result<Node, int> made = parent ? model_.Mkdir(*parent, Basename(path), NodeAttrs{.mode = 0755})
                                    : Result<Node, int>(Unexpected(parent.error()));
    if (!made)
      return Unexpected(fmt::format("cannot create \"{}\": {}", path, ErrnoName(made.error())));
    return *made;
  };
  auto create = [&](std::string_view path, const NodeKind& kind,
                    const NodeAttrs& attrs) -> Result<Node, std::string> {
    auto parent = model_.Lookup(Dirname(path), true);
    Result<Node, int> made = parent ? model_.Create(*parent, Basename(path), kind, attrs)
                                    : Result<Node, int>(Unexpected(parent.error()));
    if (!made)
      return Unexpected(fmt::format("cannot create \"{}\": {}", path, ErrnoName(made.error())));
    return *made;
  };

  if (n.path == "/") {
    (void)model_.SetAttrs(model_.Root(), AttrsOf(n));
    return {};
  }
  // Missing parents, as mkdir -p would make them.
  for (size_t i = 1; i < n.path.size(); ++i) {
    if (n.path[i] != '/') continue;
    std::string_view prefix(n.path.data(), i);
    // Each prefix is looked at without following it: a symlink among the
    // parents is an error, as is any other non-directory.
    auto at = model_.Lookup(prefix, false);
    if (!at && at.error() == ENOENT) {
      if (auto made = mkdir_plain(prefix); !made) return fail(made.error());
    } else if (!at) {
      return fail(
          fmt::format("parent \"{}\" cannot be reached: {}", prefix, ErrnoName(at.error())));
    } else if (IsSymlink(model_, *at)) {
      return fail(fmt::format("parent \"{}\" is a symlink", prefix));
    } else if (!IsDir(model_, *at)) {
      return fail(fmt::format("parent \"{}\" is not a directory", prefix));
    }
  }
  auto existing = model_.Lookup(n.path, false);
  if (!existing && existing.error() != ENOENT)
    return fail(fmt::format("\"{}\" cannot be reached: {}", n.path, ErrnoName(existing.error())));
  const bool exists = existing.has_value();
  const bool exists_dir = exists && IsDir(model_, *existing);

  switch (n.type) {
    case NodeType::kDir:
      if (exists) {
        if (!exists_dir)
          return fail(fmt::format("\"{}\" already exists and is not a directory", n.path));
        (void)model_.SetAttrs(*existing, AttrsOf(n));
        return {};
      }
      break;
    case NodeType::kTmpfs:
    case NodeType::kBind:
      if (exists && n.type == NodeType::kTmpfs && !exists_dir)
        return fail(fmt::format("\"{}\" already exists and is not a directory", n.path));
      break;
    default:
      if (exists) return fail(fmt::format("\"{}\" already exists", n.path));
      break;
  }

  if (n.type == NodeType::kTmpfs || n.type == NodeType::kBind) {
    Node src;
    bool src_dir = true;
    if (n.type == NodeType::kBind) {
      auto found = model_.Lookup(n.source, true);
      if (!found)
        return fail(fmt::format("bind source \"{}\" cannot be reached: {}", n.source,
                                ErrnoName(found.error())));
      src = *found;
      src_dir = IsDir(model_, src);
    }
    if (!exists) {
      if (src_dir) {
        if (auto made = mkdir_plain(n.path); !made) return fail(made.error());
      } else if (auto made = create(n.path, NodeKind{}, NodeAttrs{.mode = 0644}); !made) {
        return fail(made.error());
      }
    }
    auto mp = model_.Lookup(n.path, true);
    if (!mp)
      return fail(
          fmt::format("mount point \"{}\" cannot be reached: {}", n.path, ErrnoName(mp.error())));
    if (n.type == NodeType::kTmpfs) {
      NodeAttrs root = AttrsOf(n);
      (void)model_.MountTmpfs(*mp, root, n.mount_flags & ~kMountRdonly);
    } else if (auto bound = model_.BindMount(src, *mp); !bound) {
      return fail(fmt::format("bind of \"{}\" on \"{}\": one is a directory, the other not",
                              n.source, n.path));
    }
    return {};
  }

  NodeKind kind;
  kind.type = FileTypeOf(n.type);
  kind.target = n.target;
  kind.content = n.content;
  kind.rdev_major = n.rdev_major;
  kind.rdev_minor = n.rdev_minor;
  if (auto made = create(n.path, kind, AttrsOf(n)); !made) return fail(made.error());
  return {};
}

Result<void, std::string> ScenarioModel::StartProcess(const Scenario& s, const ProcessSpec& ps) {
  // Until the process takes its own credentials it acts as its launcher:
  // root, or the parent it is forked from.
  const Process parent = ps.parent.empty() ? model_.Init() : ProcessOf(ps.parent);
  const Process p = model_.Fork(parent, ps.name);
  processes_[ps.name] = p;
  fd_names_.resize(static_cast<size_t>(p.index) + 1);
  auto fail = [&](const SourceLoc& loc, std::string msg) {
    return Unexpected(fmt::format("{}: {}", s.Where(loc), msg));
  };
  if (ps.cwd) {
    const Decision d = model_.Apply(p, Chdir{.path = *ps.cwd});
    if (d.err())
      return fail(ps.loc, fmt::format("cwd \"{}\" cannot be entered: {} ({})", *ps.cwd,
                                      ErrnoName(d.err()), d.ToText()));
  }
  // Resolve every starting rule as the launcher, from the new cwd.
  std::vector<LandlockRuleset> layers;
  for (const LayerSpec& l : ps.layers) {
    LandlockRuleset rs = RulesetOf(l);
    for (LandlockRule& rule : rs.rules) {
      if (rule.type != landlock::kRulePathBeneath) continue;
      auto at = model_.Resolve(p, rule.path, !rule.nofollow);
      if (!at) {
        const size_t i = static_cast<size_t>(&rule - rs.rules.data());
        return fail(l.rules[i].loc,
                    fmt::format("rule path \"{}\" does not resolve: {} ({})", rule.path,
                                ErrnoName(at.error().err()), at.error().ToText()));
      }
      rule.parent = *at;  // `path` stays as written, for reasons
    }
    layers.push_back(std::move(rs));
  }
  Cred cred = model_.cred(p);
  if (ps.parent.empty()) {
    cred = Cred::ForUser(ps.uid, ps.gid);
    cred.SetGroups(ps.groups);
    cred.cap_effective = cred.cap_permitted = ps.EffectiveCaps();
    cred.umask = 022;
    cred.userns = ps.UserNs();
  }
  if (ps.umask) cred.umask = *ps.umask;
  if (ps.parent.empty() || ps.umask) (void)model_.SetCred(p, cred);
  for (size_t li = 0; li < layers.size(); ++li) {
    const LayerSpec& l = ps.layers[li];
    const Decision d = model_.Apply(p, Restrict{.ruleset = std::move(layers[li])});
    if (!d.err()) continue;
    const std::optional<RestrictFailure>& f = d.reason().restrict_failure;
    const std::string why = f ? f->why : d.ToText();
    if (f && f->call == RestrictFailure::Call::kAddRule && f->rule >= 0)
      return fail(l.rules[static_cast<size_t>(f->rule)].loc,
                  fmt::format("the kernel refuses this rule: {} ({})", ErrnoName(d.err()), why));
    return fail(l.loc,
                fmt::format("the kernel refuses this layer: {} ({})", ErrnoName(d.err()), why));
  }
  (void)model_.Listen(p);
  return {};
}

Process ScenarioModel::ProcessOf(std::string_view name) const {
  auto it = processes_.find(name);
  return it == processes_.end() ? Process{} : it->second;
}

Fd ScenarioModel::FdOf(Process p, std::string_view name) {
  FdNames& names = fd_names_[static_cast<size_t>(p.index)];
  auto it = names.bound.find(name);
  if (it != names.bound.end()) return Fd{it->second};
  // A name never opened: a number no fd has, that reasons call by name.
  const int fd = next_unbound_++;
  names.bound.emplace(std::string(name), fd);
  (void)model_.NameFd(p, Fd{fd}, std::string(name));
  return Fd{fd};
}

void ScenarioModel::Bind(Process p, const std::string& name, int fd) {
  Unbind(p, name);
  fd_names_[static_cast<size_t>(p.index)].bound[name] = fd;
  (void)model_.NameFd(p, Fd{fd}, name);
}

void ScenarioModel::Unbind(Process p, const std::string& name) {
  FdNames& names = fd_names_[static_cast<size_t>(p.index)];
  auto it = names.bound.find(name);
  if (it == names.bound.end()) return;
  // The fd the name held closes (a replaced fd), and the name now holds
  // nothing.
  if (it->second < kUnboundFd)
    (void)model_.Apply(p, Close{Fd{it->second}}, Model::Detail::kVerdictOnly);
  names.bound.erase(it);
}

pathwarden::Request ScenarioModel::RequestOf(const StepSpec& st) {
  const Process p = ProcessOf(st.as);
  pathwarden::Request out = Stat{};
  // Each member from the step's field of its name; the step names its
  // descriptors, processes and layer, which this model resolves.
  WithRequestType(st.op, [&](auto r) {
    using T = decltype(r);
    CopyFieldsToRequest(st, r);
    if constexpr (requires { r.dirfd; })
      r.dirfd = st.dirfd.empty() || !p.valid() ? kAtFdcwd : FdOf(p, st.dirfd);
    if constexpr (requires { r.fd; }) r.fd = p.valid() ? FdOf(p, st.fd) : Fd{-1};
    if constexpr (requires { r.target.index; }) r.target = ProcessOf(st.target);
    if constexpr (std::is_same_v<T, Mknod>) r.type = FileTypeBits(st.mknod_type);
    if constexpr (std::is_same_v<T, Fallocate>) r.mode = static_cast<uint32_t>(st.flags);
    if constexpr (std::is_same_v<T, Restrict>)
      r.ruleset = st.layer ? RulesetOf(*st.layer) : LandlockRuleset{};
    out = std::move(r);
  });
  return out;
}

Decision ScenarioModel::Evaluate(const StepSpec& st, Model::Detail detail) {
  const Process p = ProcessOf(st.as);
  if (!p.valid()) return Decision(Verdict::kDenied, ESRCH, Reason{});
  if (st.op == Op::kRestrict && !st.layer) return Decision(Verdict::kDenied, EINVAL, Reason{});
  return model_.Evaluate(p, RequestOf(st), detail);
}

Decision ScenarioModel::Step(const StepSpec& st, Model::Detail detail) {
  const Process p = ProcessOf(st.as);
  if (!p.valid()) return Decision(Verdict::kDenied, ESRCH, Reason{});
  if (st.op == Op::kRestrict && !st.layer) return Decision(Verdict::kDenied, EINVAL, Reason{});
  Decision d = model_.Apply(p, RequestOf(st), detail);
  switch (st.op) {
    case Op::kOpen:
      if (st.fd.empty()) {
        if (d.fd().num >= 0) (void)model_.Apply(p, Close{d.fd()}, Model::Detail::kVerdictOnly);
      } else if (d.fd().num >= 0) {
        Bind(p, st.fd, d.fd().num);
      } else if (d.err()) {
        // A failed open leaves the name closed, like any fd it replaced
        // (docs/scenario-format.md).
        Unbind(p, st.fd);
      }
      break;
    case Op::kClose:
      if (!d.err()) fd_names_[static_cast<size_t>(p.index)].bound.erase(st.fd);
      break;
    case Op::kSendFd:
      if (d.fd().num >= 0) Bind(ProcessOf(st.target), st.fd, d.fd().num);
      break;
    default:
      break;
  }
  return d;
}

std::string EngineBuildError(const Scenario& s) {
  ScenarioModel m(EngineOptions{});
  auto built = m.Build(s);
  return built ? std::string() : built.error();
}

RunResult RunInEngine(const Scenario& s, const EngineOptions& options, EngineStats* stats) {
  RunResult r;
  ScenarioModel m(options);
  if (auto built = m.Build(s); !built) {
    r.status = RunResult::Status::kError;
    r.message = built.error();
    return r;
  }
  const Model::Detail full =
      options.explain ? Model::Detail::kReason : Model::Detail::kVerdictOnly;
  r.steps.reserve(s.steps.size());
  const StepSpec* previous = nullptr;
  // World::Verify() reads the whole world. After every step while the
  // world is small (every suite and fuzz case), then once its objects
  // outnumber kVerifyEach times the steps since the last check: a long
  // run's checking costs in proportion to its steps (a 100,000-deep chain
  // checked after every step was quadratic). A cache left stale is still
  // found at the next check, and the last step is always checked.
  constexpr size_t kVerifySmall = 512, kVerifyEach = 64;
  size_t unverified = 0;
  for (const StepSpec& st : s.steps) {
    StepResult sr;
    Model::Detail detail = full;
    const bool mismatches_only = options.explain && options.explain_mismatches_only;
    // With the prefix memo, the walk remembers the last name it walked:
    // the previous step's first, so that this one's dry run may resume
    // where their names part (no write comes between).
    const bool prefix_check = options.verify && options.prefix_memo;
    if (prefix_check && previous != nullptr)
      (void)m.Evaluate(*previous, Model::Detail::kVerdictOnly);
    previous = &st;
    if (options.verify || mismatches_only) {
      // A dry run (what readers get) must answer as the step will; it
      // also says whether the step needs a reason.
      const Decision dry = m.Evaluate(st, options.verify ? full : Model::Detail::kVerdictOnly);
      if (prefix_check) {
        // The same again (the memo now holds this very name), and without
        // the memo: the same answer and reason, word for word.
        const Decision again = m.Evaluate(st, full);
        SetPrefixMemo(m.model(), false);
        const Decision plain = m.Evaluate(st, full);
        SetPrefixMemo(m.model(), true);
        for (const Decision* d : {&dry, &again}) {
          if (d->err() == plain.err() && d->ToText() == plain.ToText()) continue;
          r.status = RunResult::Status::kError;
          r.message = fmt::format(
              "{}: internal inconsistency: a dry run with the prefix memo answers {} (\"{}\"), "
              "without it {} (\"{}\")",
              s.Where(st.loc), ErrnoName(d->err()), d->ToText(), ErrnoName(plain.err()),
              plain.ToText());
          return r;
        }
      }
      if (mismatches_only && dry.err() == st.expect) detail = Model::Detail::kVerdictOnly;
      const Decision d = m.Step(st, detail);
      sr.err = d.err();
      sr.reason = d.ToText();
      if (options.verify && dry.err() != sr.err) {
        r.status = RunResult::Status::kError;
        r.message = fmt::format(
            "{}: internal inconsistency: a dry run answers {} (\"{}\"), "
            "the step {} (\"{}\")",
            s.Where(st.loc), ErrnoName(dry.err()), dry.ToText(), ErrnoName(sr.err), sr.reason);
        return r;
      }
    } else {
      const Decision d = m.Step(st, detail);
      sr.err = d.err();
      sr.reason = d.ToText();
    }
    r.steps.push_back(std::move(sr));
    const vfs::World& w = m.engine().world();
    const size_t objects = size_t{w.dentry_end()} + w.mount_end();
    ++unverified;
    if (options.verify && (objects <= kVerifySmall || unverified * kVerifyEach >= objects ||
                           &st == &s.steps.back())) {
      unverified = 0;
      if (std::string bad = w.Verify(); !bad.empty()) {
        r.status = RunResult::Status::kError;
        r.message =
            fmt::format("{}: internal inconsistency after this step: {}", s.Where(st.loc), bad);
        return r;
      }
    }
  }
  if (options.capture_tree) r.tree = m.model().Snapshot();
  if (stats) *stats = m.engine().stats();
  return r;
}

}  // namespace pathwarden
