// Structural comparison of scenarios, for the generator's round-trip check.

#include "src/fuzz/scenario_equal.h"

#include <fmt/format.h>

namespace pathwarden::fuzz {
namespace {

// Collects the first difference; later comparisons are skipped.
class Diff {
 public:
  template <typename T>
  void Field(const std::string& where, std::string_view name, const T& a, const T& b) {
    if (!first_.empty() || a == b) return;
    first_ = fmt::format("{}: {} differs", where, name);
  }
  bool done() const { return !first_.empty(); }
  std::string Take() { return std::move(first_); }

 private:
  std::string first_;
};

void CompareLayer(Diff& d, const std::string& w, const LayerSpec& a, const LayerSpec& b) {
  d.Field(w, "handled_fs", a.handled_fs, b.handled_fs);
  d.Field(w, "handled_net", a.handled_net, b.handled_net);
  d.Field(w, "scoped", a.scoped, b.scoped);
  d.Field(w, "rule count", a.rules.size(), b.rules.size());
  for (size_t i = 0; i < a.rules.size() && !d.done(); ++i) {
    const RuleSpec& x = a.rules[i];
    const RuleSpec& y = b.rules[i];
    const std::string rw = fmt::format("{} rule {}", w, i + 1);
    d.Field(rw, "is_port", x.is_port, y.is_port);
    d.Field(rw, "path", x.path, y.path);
    d.Field(rw, "nofollow", x.nofollow, y.nofollow);
    d.Field(rw, "port", x.port, y.port);
    d.Field(rw, "access", x.access, y.access);
  }
}

}  // namespace

std::string FirstDifference(const Scenario& a, const Scenario& b) {
  Diff d;
  d.Field("scenario", "format", a.format, b.format);
  d.Field("scenario", "abi", a.abi, b.abi);
  d.Field("scenario", "sysctl", a.sysctl, b.sysctl);
  d.Field("scenario", "node count", a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size() && !d.done(); ++i) {
    const NodeSpec& x = a.nodes[i];
    const NodeSpec& y = b.nodes[i];
    const std::string w = fmt::format("node {} ({})", i + 1, x.path);
    d.Field(w, "path", x.path, y.path);
    d.Field(w, "type", x.type, y.type);
    d.Field(w, "mode", x.mode, y.mode);
    d.Field(w, "uid", x.uid, y.uid);
    d.Field(w, "gid", x.gid, y.gid);
    d.Field(w, "has_owner", x.has_owner, y.has_owner);
    d.Field(w, "acl", x.acl, y.acl);
    d.Field(w, "default_acl", x.default_acl, y.default_acl);
    d.Field(w, "target", x.target, y.target);
    d.Field(w, "rdev_major", x.rdev_major, y.rdev_major);
    d.Field(w, "rdev_minor", x.rdev_minor, y.rdev_minor);
    d.Field(w, "source", x.source, y.source);
    d.Field(w, "mount_flags", x.mount_flags, y.mount_flags);
    d.Field(w, "content", x.content, y.content);
    d.Field(w, "attrs", x.attrs, y.attrs);
  }
  d.Field("scenario", "process count", a.processes.size(), b.processes.size());
  for (size_t i = 0; i < a.processes.size() && !d.done(); ++i) {
    const ProcessSpec& x = a.processes[i];
    const ProcessSpec& y = b.processes[i];
    const std::string w = fmt::format("process {}", x.name);
    d.Field(w, "name", x.name, y.name);
    d.Field(w, "parent", x.parent, y.parent);
    d.Field(w, "uid", x.uid, y.uid);
    d.Field(w, "gid", x.gid, y.gid);
    d.Field(w, "groups", x.groups, y.groups);
    d.Field(w, "caps", x.caps, y.caps);
    d.Field(w, "userns", x.userns_uids, y.userns_uids);
    d.Field(w, "userns_gids", x.userns_gids, y.userns_gids);
    d.Field(w, "cwd", x.cwd, y.cwd);
    d.Field(w, "umask", x.umask, y.umask);
    d.Field(w, "layer count", x.layers.size(), y.layers.size());
    for (size_t l = 0; l < x.layers.size() && !d.done(); ++l)
      CompareLayer(d, fmt::format("{} layer {}", w, l + 1), x.layers[l], y.layers[l]);
  }
  d.Field("scenario", "step count", a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size() && !d.done(); ++i) {
    const StepSpec& x = a.steps[i];
    const StepSpec& y = b.steps[i];
    const std::string w = fmt::format("step {}", i + 1);
    d.Field(w, "as", x.as, y.as);
    d.Field(w, "op", x.op, y.op);
    d.Field(w, "path", x.path, y.path);
    d.Field(w, "path2", x.path2, y.path2);
    d.Field(w, "dirfd", x.dirfd, y.dirfd);
    d.Field(w, "flags", x.flags, y.flags);
    d.Field(w, "access_mode", x.access_mode, y.access_mode);
    d.Field(w, "mode", x.mode, y.mode);
    d.Field(w, "mknod_type", x.mknod_type, y.mknod_type);
    d.Field(w, "rdev_major", x.rdev_major, y.rdev_major);
    d.Field(w, "rdev_minor", x.rdev_minor, y.rdev_minor);
    d.Field(w, "uid", x.uid, y.uid);
    d.Field(w, "gid", x.gid, y.gid);
    d.Field(w, "port", x.port, y.port);
    d.Field(w, "fd", x.fd, y.fd);
    d.Field(w, "cmd", x.cmd, y.cmd);
    d.Field(w, "target", x.target, y.target);
    d.Field(w, "layer", x.layer.has_value(), y.layer.has_value());
    if (x.layer && y.layer) CompareLayer(d, w + " layer", *x.layer, *y.layer);
    d.Field(w, "times", x.times, y.times);
    d.Field(w, "expect", x.expect, y.expect);
  }
  return d.Take();
}

}  // namespace pathwarden::fuzz
