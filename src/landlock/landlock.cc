// Landlock in the engine: objects, layers, and the checks behind the hooks.
// Linux: security/landlock/syscalls.c (landlock_create_ruleset,
// add_rule_path_beneath, add_rule_net_port, landlock_restrict_self),
// fs.c (hook_file_open, hook_file_truncate, hook_file_ioctl_common,
// current_check_access_path, current_check_refer_path, hook_sb_mount),
// net.c (current_check_access_socket), task.c (hook_task_kill,
// hook_unix_stream_connect), audit.c (get_denied_layer)

#include "src/landlock/landlock.h"

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include <fmt/format.h>

#include "src/base/check.h"
#include "src/landlock/fs_walk.h"
#include "src/landlock/layer_masks.h"
#include "src/landlock/memo.h"

namespace pathwarden::landlock {
namespace {

constexpr uint32_t kFsIocGetFsUuid = 0x80111500;
constexpr uint32_t kFsIocGetFsSysfsPath = 0x80811501;

// The youngest layer denying part of `request` (1-based; 0 when none) and
// what it denies (audit's get_denied_layer()).
template <class M>
std::pair<int, AccessMask> YoungestDenying(const M& m, AccessMask request) {
  for (int i = m.num_layers() - 1; i >= 0; --i) {
    AccessMask d = m.LayerDenies(i) & request;
    if (d) return {i + 1, d};
  }
  return {0, 0};
}

std::string It(AccessMask m) { return (m & (m - 1)) ? "them" : "it"; }

// "layer 1 rule on /srv/www (fs.read_file,fs.read_dir)" for each grant.
std::string DescribeGrants(const OpCtx& ctx, const Domain& d, const FsTrace& t,
                           AccessMask request) {
  std::string s;
  for (const Grant& g : t.grants) {
    AccessMask r = g.rights & request;
    if (!r) continue;
    if (!s.empty()) s += "; ";
    s += fmt::format("layer {} rule on {} grants {}", g.level, ctx.PathOf(g.where),
                     FsAuditNames(r));
    if (const std::string* src = d.SourceOf(g.object, g.level)) {
      if (*src != ctx.PathOf(g.where)) s += fmt::format(" (rule written as \"{}\")", *src);
    }
  }
  return s;
}

// The verdict of every layer on a filesystem request: what it asked of
// the layer (the rights the layer handles), what is still missing after
// the walk, and the rules that granted the rest.
template <class M>
std::vector<LayerVerdict> FsLayerVerdicts(const OpCtx& ctx, const Domain& d, const M& m,
                                          AccessMask request, const FsTrace& t) {
  std::vector<LayerVerdict> out;
  for (int i = 0; i < d.num_layers(); ++i) {
    LayerVerdict v;
    v.kind = LayerVerdict::Kind::kFs;
    v.layer = i + 1;
    v.requested = request & d.FsMaskForCheck(i);
    v.missing = m.LayerDenies(i) & request;
    for (const Grant& g : t.grants) {
      if (g.level != i + 1 || !(g.rights & request)) continue;
      const std::string* src = d.SourceOf(g.object, g.level);
      v.grants.push_back({src ? *src : ctx.PathOf(g.where), g.level, g.rights & request, -1});
    }
    out.push_back(std::move(v));
  }
  return out;
}

template <class M>
std::string DescribeFsDenial(const OpCtx& ctx, const Domain& d, const M& m, AccessMask request,
                             const FsTrace& t, std::string_view what, vfs::PathPos path) {
  auto [layer, blockers] = YoungestDenying(m, request);
  std::string s = fmt::format("layer {} of {} denies {} {} {}: no rule of layer {} on the walk "
                              "from {} to {} grants {}",
                              layer, d.num_layers(), FsAuditNames(blockers), what,
                              ctx.PathOf(path), layer, ctx.PathOf(t.start), ctx.PathOf(t.end),
                              It(blockers));
  std::string grants = DescribeGrants(ctx, d, t, request);
  if (!grants.empty()) s += " (" + grants + ")";
  return s;
}

template <class M>
std::string DescribeFsAllowed(const OpCtx& ctx, const Domain& d, AccessMask request,
                              AccessMask handled, const FsTrace& t) {
  std::string s = fmt::format("allowed by all {} layer{}", d.num_layers(),
                              d.num_layers() == 1 ? "" : "s");
  std::string grants = DescribeGrants(ctx, d, t, request);
  if (!grants.empty()) s += ": " + grants;
  const AccessMask unhandled = request & ~handled;
  if (unhandled) s += fmt::format("; no layer handles {}", FsAuditNames(unhandled));
  return s;
}

// Applicability (landlock_get_applicable_subject()): some layer's stored
// masks intersect the request.
bool HandlesFs(const Domain* d, AccessMask request) {
  return d != nullptr && (d->UnionFs() & request) != 0;
}

template <class M>
int CheckPathT(OpCtx& ctx, const Domain& d, vfs::PathPos path, AccessMask request,
               std::string_view what, bool explain_allowed) {
  M m;
  const AccessMask handled = m.Init(d, request, true);
  FsTrace trace;
  FsTrace* t = ctx.explain() ? &trace : nullptr;
  const bool allowed = IsAccessToPathsAllowed<M>(ctx.w, d, path, handled, &m, vfs::kNone, 0,
                                                 nullptr, vfs::kNone, t);
  if (t) ctx.ex->Layers(FsLayerVerdicts(ctx, d, m, handled, trace));
  if (allowed) {
    if (explain_allowed && t)
      ctx.Ok(Stage::kLandlock, [&] {
        return fmt::format("{} {}: {}", FsAuditNames(request), ctx.PathOf(path),
                           DescribeFsAllowed<M>(ctx, d, request, handled, trace));
      });
    return 0;
  }
  if (t)
    ctx.Fail(Stage::kLandlock,
             [&] { return DescribeFsDenial(ctx, d, m, handled, trace, what, path); });
  return EACCES;
}

template <class M>
int CheckReferT(OpCtx& ctx, const Domain& d, vfs::PathPos old, vfs::PathPos new_dir,
                vfs::DentryId new_dentry, bool removable, bool exchange, bool explain_allowed) {
  FsTrace t1, t2;
  const bool ex = ctx.explain();
  ReferResult<M> r = CheckReferPath<M>(ctx.w, d, old, new_dir, new_dentry, removable, exchange,
                                       ex ? &t1 : nullptr, ex ? &t2 : nullptr);
  if (!ex) return r.err;
  const vfs::PathPos old_parent{old.mnt, ctx.w.dentry(old.dentry).parent};
  if (r.same_dir) {
    ctx.ex->Layers(FsLayerVerdicts(ctx, d, r.m1, r.req1, t1));
  } else {
    ctx.ex->Refer({ctx.PathOf(old_parent), true, FsLayerVerdicts(ctx, d, r.m1, r.req1, t1)});
    ctx.ex->Refer({ctx.PathOf(new_dir), false, FsLayerVerdicts(ctx, d, r.m2, r.req2, t2)});
  }
  if (r.err == 0) {
    if (explain_allowed)
      ctx.Ok(Stage::kLandlock, [&] {
        return r.same_dir ? fmt::format("same-directory {}: no refer needed; {}",
                                        removable ? "rename" : "link",
                                        DescribeFsAllowed<M>(ctx, d, r.req1, r.req1, t1))
                          : fmt::format("reparenting {} allowed: {}", ctx.PathOf(old),
                                        DescribeGrants(ctx, d, t1, kFsAll) + "; " +
                                            DescribeGrants(ctx, d, t2, kFsAll));
      });
    return 0;
  }
  if (r.same_dir) {
    ctx.Fail(Stage::kLandlock,
             [&] { return DescribeFsDenial(ctx, d, r.m1, r.req1, t1, "in", new_dir); });
    return r.err;
  }
  // Both sides, as audit logs them: the source's parent and the
  // destination directory.
  std::string s;
  auto side = [&](const M& m, AccessMask req, const FsTrace& t, vfs::PathPos where,
                  std::string_view name) {
    auto [layer, blockers] = YoungestDenying(m, req);
    if (!layer) return;
    if (!s.empty()) s += "; ";
    s += fmt::format("{} {}: layer {} of {} denies {}", name, ctx.PathOf(where), layer,
                     d.num_layers(), FsAuditNames(blockers));
    std::string g = DescribeGrants(ctx, d, t, req);
    if (!g.empty()) s += " (" + g + ")";
  };
  side(r.m1, r.req1, t1, old_parent, "source");
  side(r.m2, r.req2, t2, new_dir, "destination");
  if (r.err == EXDEV) {
    if (s.empty())
      s = "the destination would grant the moved object rights it lacks at the source";
    s = fmt::format("moving {} to {} is a reparenting Landlock refuses (EXDEV, as a "
                    "cross-device move, so tools fall back to copying): {}",
                    ctx.PathOf(old), ctx.PathOf(new_dir), s);
  }
  ctx.Fail(Stage::kLandlock, [&] { return s; });
  return r.err;
}

}  // namespace

void RecordFsRequest(OpCtx& ctx, vfs::PathPos at, AccessMask access) {
  // Only when traced: the whole path of each request, at every step of a
  // 16,000-deep chain, is quadratic (tests/limits/deep_chain_test.sh).
  if (!ctx.explain() || !ctx.ex->tracing() || access == 0) return;
  ctx.ex->AddFsRequest({ctx.w.PathOf(at), access, S_ISDIR(ctx.w.inode_at(at.dentry).mode)});
}

void RecordReferRequests(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir,
                         vfs::DentryId new_dentry, bool removable, bool exchange) {
  if (!ctx.explain() || !ctx.ex->tracing()) return;
  const ReferRequests r = ReferRequestsOf(ctx.w, old, new_dir, new_dentry, removable, exchange);
  if (r.same_dir) {
    RecordFsRequest(ctx, new_dir, r.req1 | r.req2);
    return;
  }
  RecordFsRequest(ctx, {old.mnt, ctx.w.dentry(old.dentry).parent}, r.req1);
  RecordFsRequest(ctx, new_dir, r.req2);
}

bool IsMaskedDeviceIoctl(uint32_t cmd) {
  switch (cmd) {
    case FIOCLEX:
    case FIONCLEX:
    case FIONBIO:
    case FIOASYNC:
    case FIOQSIZE:
    case FIFREEZE:
    case FITHAW:
    case FS_IOC_FIEMAP:
    case FIGETBSZ:
    case FICLONE:
    case FICLONERANGE:
    case FIDEDUPERANGE:
    case kFsIocGetFsUuid:
    case kFsIocGetFsSysfsPath:
      return true;
    default:
      return false;
  }
}

Landlock::Landlock(vfs::World& w, const EngineOptions& options) : w_(w), options_(options) {
  w_.set_on_inode_free(&Landlock::OnInodeFree, this);
}

void Landlock::OnInodeFree(void* self, vfs::InodeId ino) {
  // The object dies with its inode (which only happens once no domain
  // holds it); its id is never reused, so rules on it never match again.
  auto* ll = static_cast<Landlock*>(self);
  const uint32_t obj = ll->w_.inode(ino).landlock_object;
  if (obj != 0 && obj < ll->objects_.size()) ll->objects_[obj].ino = vfs::kNone;
}

uint32_t Landlock::ObjectFor(vfs::InodeId ino) {
  uint32_t obj = w_.inode(ino).landlock_object;
  if (obj == 0) {
    obj = static_cast<uint32_t>(objects_.size());
    objects_.push_back({ino, 0});
    w_.SetLandlockObject(ino, obj);
  }
  return obj;
}

std::shared_ptr<const Domain> Landlock::Hold(std::shared_ptr<const Domain> d) {
  vfs::World::WriteGuard g(w_);
  for (uint32_t obj : d->objects()) {
    Object& o = objects_[obj];
    if (o.holders++ == 0 && o.ino != vfs::kNone) w_.PinInode(o.ino);
  }
  const Domain* raw = d.get();
  // The returned pointer shares ownership with `d` and releases the
  // objects when the last holder of the domain goes.
  auto keep = std::make_shared<std::shared_ptr<const Domain>>(std::move(d));
  return std::shared_ptr<const Domain>(raw, [this, keep](const Domain* dom) {
    Release(*dom);
    keep->reset();
  });
}

void Landlock::Release(const Domain& d) {
  vfs::World::WriteGuard g(w_);
  for (uint32_t obj : d.objects()) {
    Object& o = objects_[obj];
    if (--o.holders == 0 && o.ino != vfs::kNone) {
      const vfs::InodeId ino = o.ino;
      w_.UnpinInode(ino);  // may free it, and OnInodeFree() forgets it
    }
  }
}

int Landlock::CreateRuleset(int abi, const LandlockRuleset& spec, Ruleset* out,
                            std::string* why) const {
  const AbiRights r = RightsForAbi(abi);
  auto unknown = [&](AccessMask m, AccessMask known, std::string (*names)(AccessMask)) {
    if (m & ~known) {
      if (why) *why = fmt::format("{} unknown to Landlock ABI {}", names(m & ~known), abi);
      return true;
    }
    return false;
  };
  if (unknown(spec.handled_access_fs, r.fs, FsAuditNames) ||
      unknown(spec.handled_access_net, r.net, NetAuditNames) ||
      unknown(spec.scoped, r.scoped, ScopeAuditNames))
    return EINVAL;
  if (!spec.handled_access_fs && !spec.handled_access_net && !spec.scoped) {
    if (why) *why = "a ruleset that handles nothing";
    return ENOMSG;
  }
  out->handled_fs = spec.handled_access_fs;
  out->handled_net = spec.handled_access_net;
  out->scoped = spec.scoped;
  out->rules.clear();
  return 0;
}

namespace {

// landlock_add_rule()'s checks of a rule's rights, path or port alike:
// ENOMSG for none, EINVAL for one the ruleset does not handle. `what`
// names the rule's object for the reason.
template <class What>
int CheckRuleRights(AccessMask access, AccessMask handled, std::string (*names)(AccessMask),
                    What what, std::string* why) {
  if (!access) {
    if (why) *why = fmt::format("the rule on {} grants nothing", what());
    return ENOMSG;
  }
  if (!AccessMaskSubset(access, handled)) {
    if (why)
      *why = fmt::format("the rule on {} grants {} the ruleset does not handle", what(),
                         names(access & ~handled));
    return EINVAL;
  }
  return 0;
}

}  // namespace

int Landlock::CheckPathRule(const Ruleset& rs, AccessMask access, std::string_view path,
                            vfs::PathPos target, std::string* why) const {
  if (int err = CheckRuleRights(access, rs.handled_fs, FsAuditNames,
                                 [&] { return fmt::format("\"{}\"", path); }, why))
    return err;
  const vfs::InodeId ino = w_.inode_of(target.dentry);
  if (!S_ISDIR(w_.inode(ino).mode) && !AccessMaskSubset(access, kFsFileRights)) {
    if (why)
      *why = fmt::format("\"{}\" is not a directory: a rule on it takes only file rights, not {}",
                         path, FsAuditNames(access & ~kFsFileRights));
    return EINVAL;
  }
  return 0;
}

int Landlock::AddPathRule(Ruleset& rs, AccessMask access, std::string_view path,
                          vfs::PathPos target, std::string* why) {
  if (int err = CheckPathRule(rs, access, path, target, why)) return err;
  RulesetRule rr;
  rr.object = ObjectFor(w_.inode_of(target.dentry));
  // Unhandled rights are granted by every rule, except refer.
  rr.access = access | (kFsAll & ~(rs.handled_fs | kFsRefer));
  rr.path = std::string(path);
  rs.rules.push_back(std::move(rr));
  return 0;
}

int Landlock::AddPortRule(Ruleset& rs, AccessMask access, uint64_t port, std::string* why) const {
  if (int err = CheckRuleRights(access, rs.handled_net, NetAuditNames,
                                 [&] { return fmt::format("port {}", port); }, why))
    return err;
  if (port > 65535) return EINVAL;
  RulesetRule rr;
  rr.is_port = true;
  rr.port = static_cast<uint16_t>(port);
  rr.access = access | (kNetAll & ~rs.handled_net);
  rs.rules.push_back(std::move(rr));
  return 0;
}

int Landlock::CheckRestrict(const Task& p, std::string* why) const {
  if (p.domain && p.domain->num_layers() >= kMaxLayers) {
    if (why) *why = fmt::format("the domain already has {} layers", kMaxLayers);
    return E2BIG;
  }
  return 0;
}

int Landlock::Restrict(Task& p, const Ruleset& rs, std::string* why) {
  if (int err = CheckRestrict(p, why)) return err;
  p.domain = Hold(MergeRuleset(p.domain.get(), rs));
  ++p.cred_epoch;
  return 0;
}

int Landlock::CheckPath(OpCtx& ctx, vfs::PathPos path, AccessMask request, std::string_view what) {
  const Domain* d = ctx.p.domain.get();
  if (!HandlesFs(d, request)) return 0;
  if (options_.memo && !ctx.explain())
    return MemoDeny(*d, MemoGrants(w_, *d, path), request, nullptr) ? EACCES : 0;
  const int err = options_.layout == LayerLayout::kByAccess
                      ? CheckPathT<ByAccess>(ctx, *d, path, request, what,
                                             options_.explain_allowed)
                      : CheckPathT<ByLayer>(ctx, *d, path, request, what,
                                            options_.explain_allowed);
  if (options_.memo) {
    // Explaining needs the walk; the memo must agree with it, or the
    // engine fails closed.
    const bool memo_denies = MemoDeny(*d, MemoGrants(w_, *d, path), request, nullptr) != 0;
    if (memo_denies != (err != 0))
      return internal::FailClosed("Landlock: the memo disagrees with the walk");
  }
  return err;
}

int Landlock::CheckRefer(OpCtx& ctx, vfs::PathPos old, vfs::PathPos new_dir,
                         vfs::DentryId new_dentry, bool removable, bool exchange) {
  const Domain* d = ctx.p.domain.get();
  if (!HandlesFs(d, kFsAll)) return 0;
  if (options_.layout == LayerLayout::kByAccess)
    return CheckReferT<ByAccess>(ctx, *d, old, new_dir, new_dentry, removable, exchange,
                                 options_.explain_allowed);
  return CheckReferT<ByLayer>(ctx, *d, old, new_dir, new_dentry, removable, exchange,
                              options_.explain_allowed);
}

namespace {

// The rights an open asks for (get_required_file_open_access()) and,
// beyond them, the optional ones frozen into the file (truncate, and
// ioctl_dev for devices).
struct OpenRequest {
  AccessMask open = 0;
  AccessMask full = 0;
};

OpenRequest OpenRequestFor(const vfs::World& w, const OpenFile& f) {
  const vfs::Inode& i = w.inode(f.inode);
  OpenRequest r;
  if (f.f_mode & kFmodeRead) r.open = S_ISDIR(i.mode) ? kFsReadDir : kFsReadFile;
  if (!S_ISDIR(i.mode) || !(f.f_mode & kFmodeRead)) {
    if (f.f_mode & kFmodeWrite) r.open |= kFsWriteFile;
    if (f.f_mode & kFmodeExec) r.open |= kFsExecute;
  }
  AccessMask optional = kFsTruncate;
  if (S_ISCHR(i.mode) || S_ISBLK(i.mode)) optional |= kFsIoctlDev;
  r.full = r.open | optional;
  return r;
}

// Stores the rights an open keeps, and for the optional ones the youngest
// layer denying each (landlock_get_deny_masks()).
void FreezeRights(OpenFile& f, AccessMask allowed, const LayerGrants& denied_per_layer,
                  int layers) {
  f.ll_allowed = allowed;
  f.ll_deny_truncate = 0;
  f.ll_deny_ioctl = 0;
  for (int i = layers - 1; i >= 0; --i) {
    if (!f.ll_deny_truncate && (denied_per_layer[i] & kFsTruncate))
      f.ll_deny_truncate = static_cast<uint8_t>(i + 1);
    if (!f.ll_deny_ioctl && (denied_per_layer[i] & kFsIoctlDev))
      f.ll_deny_ioctl = static_cast<uint8_t>(i + 1);
  }
}

template <class M>
int FileOpenT(OpCtx& ctx, const Domain& d, OpenFile& f, const OpenRequest& req,
              bool explain_allowed) {
  const AccessMask open_req = req.open;
  const AccessMask full = req.full;
  M m;
  const AccessMask handled = m.Init(d, full, true);
  FsTrace trace;
  FsTrace* t = ctx.explain() ? &trace : nullptr;
  AccessMask allowed = full;
  if (!IsAccessToPathsAllowed<M>(ctx.w, d, f.path, handled, &m, vfs::kNone, 0, nullptr,
                                 vfs::kNone, t))
    allowed = full & ~m.Union();
  LayerGrants per_layer{};
  for (int i = 0; i < d.num_layers(); ++i) per_layer[i] = m.LayerDenies(i);
  FreezeRights(f, allowed, per_layer, d.num_layers());
  if (t) ctx.ex->Layers(FsLayerVerdicts(ctx, d, m, open_req, trace));
  if (AccessMaskSubset(open_req, allowed)) {
    if (explain_allowed && t)
      ctx.Ok(Stage::kLandlock, [&] {
        return fmt::format("open {}: {}", ctx.PathOf(f.path),
                           DescribeFsAllowed<M>(ctx, d, full, handled, trace));
      });
    return 0;
  }
  if (t)
    ctx.Fail(Stage::kLandlock,
             [&] { return DescribeFsDenial(ctx, d, m, open_req, trace, "for opening", f.path); });
  return EACCES;
}

}  // namespace

int Landlock::FileOpen(OpCtx& ctx, OpenFile& file) {
  if (ctx.explain() && ctx.ex->tracing())
    RecordFsRequest(ctx, file.path, OpenRequestFor(ctx.w, file).open);
  if (!ctx.p.domain) return 0;
  const Domain* d = ctx.p.domain.get();
  if (!HandlesFs(d, kFsAll)) return 0;
  const OpenRequest req = OpenRequestFor(ctx.w, file);
  if (options_.memo && !ctx.explain()) {
    LayerGrants per_layer{};
    const AccessMask deny = MemoDeny(*d, MemoGrants(w_, *d, file.path), req.full, &per_layer);
    FreezeRights(file, req.full & ~deny, per_layer, d->num_layers());
    return AccessMaskSubset(req.open, file.ll_allowed) ? 0 : EACCES;
  }
  const int err = options_.layout == LayerLayout::kByAccess
                      ? FileOpenT<ByAccess>(ctx, *d, file, req, options_.explain_allowed)
                      : FileOpenT<ByLayer>(ctx, *d, file, req, options_.explain_allowed);
  if (options_.memo) {
    const AccessMask deny = MemoDeny(*d, MemoGrants(w_, *d, file.path), req.full, nullptr);
    if ((req.full & ~deny) != file.ll_allowed) {
      file.ll_allowed = 0;
      return internal::FailClosed("Landlock: the memo disagrees with the walk on open");
    }
  }
  return err;
}

int Landlock::FileOpenNew(OpCtx& ctx, vfs::PathPos dir, uint32_t f_mode) {
  // A new regular file has no rule of its own: its walk is its parent's.
  AccessMask open = 0;
  if (f_mode & kFmodeRead) open |= kFsReadFile;
  if (f_mode & kFmodeWrite) open |= kFsWriteFile;
  RecordFsRequest(ctx, dir, open);
  if (!ctx.p.domain) return 0;
  return CheckPath(ctx, dir, open, "for opening a file to be created in");
}

// The layer that denied an optional right at open time, for the reason's
// per-layer verdicts: it asks for the right and misses it.
static void FrozenDenial(OpCtx& ctx, int layer, AccessMask right) {
  if (ctx.ex == nullptr || layer <= 0) return;
  LayerVerdict v;
  v.kind = LayerVerdict::Kind::kFs;
  v.layer = layer;
  v.requested = right;
  v.missing = right;
  ctx.ex->AddLayer(std::move(v));
}

int Landlock::FileTruncate(OpCtx& ctx, const OpenFile& file) {
  RecordFsRequest(ctx, file.path, kFsTruncate);
  if (file.ll_allowed & kFsTruncate) return 0;
  FrozenDenial(ctx, file.ll_deny_truncate, kFsTruncate);
  ctx.Fail(Stage::kLandlock, [&] {
    return fmt::format(
        "the file was opened without fs.truncate (layer {} denied it at open "
        "time; rights are frozen in the open file)",
        file.ll_deny_truncate);
  });
  return EACCES;
}

int Landlock::FileIoctl(OpCtx& ctx, const OpenFile& file, uint32_t cmd) {
  const uint32_t mode = w_.inode(file.inode).mode;
  if (!S_ISCHR(mode) && !S_ISBLK(mode)) return 0;
  if (!IsMaskedDeviceIoctl(cmd)) RecordFsRequest(ctx, file.path, kFsIoctlDev);
  if (file.ll_allowed & kFsIoctlDev) return 0;
  if (IsMaskedDeviceIoctl(cmd)) {
    ctx.Ok(Stage::kLandlock, "this ioctl command is always allowed on devices");
    return 0;
  }
  FrozenDenial(ctx, file.ll_deny_ioctl, kFsIoctlDev);
  ctx.Fail(Stage::kLandlock, [&] {
    return fmt::format(
        "the device was opened without fs.ioctl_dev (layer {} denied it at "
        "open time; rights are frozen in the open file)",
        file.ll_deny_ioctl);
  });
  return EACCES;
}

int Landlock::TopologyChange(OpCtx& ctx) {
  const Domain* d = ctx.p.domain.get();
  if (!HandlesFs(d, kFsAll)) return 0;
  int layer = 0;
  for (int i = d->num_layers() - 1; i >= 0 && !layer; --i)
    if (d->layer(i).handled_fs) layer = i + 1;
  ctx.Fail(Stage::kLandlock, [&] {
    return fmt::format(
        "layer {} handles filesystem rights: fs.change_topology (mount, "
        "umount, pivot_root) is denied",
        layer);
  });
  return EPERM;
}

namespace {

// The verdict of the layer that refused a port or a scope, for the
// structured reason (file-system checks record theirs per layer).
void RecordRefusal(OpCtx& ctx, LayerVerdict::Kind kind, int layer, AccessMask requested,
                   AccessMask missing) {
  if (!ctx.ex) return;
  LayerVerdict v;
  v.kind = kind;
  v.layer = layer;
  v.requested = requested;
  v.missing = missing;
  ctx.ex->AddLayer(std::move(v));
}

}  // namespace

int Landlock::Net(OpCtx& ctx, uint16_t port, AccessMask request) {
  const Domain* d = ctx.p.domain.get();
  if (d == nullptr) return 0;
  bool applicable = false;
  for (int i = 0; i < d->num_layers(); ++i) applicable |= (d->layer(i).handled_net & request) != 0;
  if (!applicable) return 0;
  ByLayer m;
  if (!m.Init(*d, request, false)) return 0;
  if (m.Unmask(d->FindNetRule(port))) {
    // As a filesystem grant: each layer that handles the right, and the
    // port rule of that layer that granted it.
    if (ctx.explain()) {
      std::vector<LayerVerdict> verdicts;
      for (int i = 0; i < d->num_layers(); ++i) {
        LayerVerdict v;
        v.kind = LayerVerdict::Kind::kNet;
        v.layer = i + 1;
        v.requested = request & d->layer(i).handled_net;
        if (!v.requested) continue;
        for (const LayerAccess& la : d->FindNetRule(port))
          if (la.level == i + 1 && (la.access & v.requested))
            v.grants.push_back({"", la.level, la.access & v.requested, port});
        verdicts.push_back(std::move(v));
      }
      ctx.ex->Layers(std::move(verdicts));
    }
    ctx.Ok(Stage::kLandlock, [&] {
      return fmt::format("a port rule for {} grants {}", port, NetAuditNames(request));
    });
    return 0;
  }
  // Plain variables, not a structured binding: the lambda captures them
  // (C++20 allows it; clang 14 does not implement it).
  const std::pair<int, AccessMask> denying = YoungestDenying(m, request);
  const int layer = denying.first;
  const AccessMask blockers = denying.second;
  RecordRefusal(ctx, LayerVerdict::Kind::kNet, layer, request, blockers);
  ctx.Fail(Stage::kLandlock, [&] {
    return fmt::format(
        "layer {} of {} denies {} for port {}: no rule of layer "
        "{} grants it",
        layer, d->num_layers(), NetAuditNames(blockers), port, layer);
  });
  return EACCES;
}

int Landlock::Scope(OpCtx& ctx, const Task& target, const Domain* server, AccessMask scope) {
  const Domain* d = ctx.p.domain.get();
  if (d == nullptr) return 0;
  int handle_layer = 0;
  for (int i = d->num_layers() - 1; i >= 0 && !handle_layer; --i)
    if (d->layer(i).scoped & scope) handle_layer = i + 1;
  if (!handle_layer) return 0;
  if (!DomainIsScoped(d, server, scope)) {
    ctx.Ok(Stage::kLandlock, [&] {
      return fmt::format("{} is in {}'s domain or below it", target.name, ctx.p.name);
    });
    return 0;
  }
  RecordRefusal(ctx, LayerVerdict::Kind::kScope, handle_layer, scope, scope);
  ctx.Fail(Stage::kLandlock, [&] {
    return fmt::format(
        "layer {} of {} sets {}: {} is outside the domain of {} (not in it or "
        "below it)",
        handle_layer, d->num_layers(), ScopeAuditNames(scope), target.name, ctx.p.name);
  });
  return EPERM;
}

}  // namespace pathwarden::landlock
