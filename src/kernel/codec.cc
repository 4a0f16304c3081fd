// Scenarios and results as bytes: one field list per struct serves both
// directions, so encoder and decoder cannot disagree.

#include "src/kernel/codec.h"

#include <array>
#include <optional>
#include <type_traits>
#include <vector>

namespace pathwarden::kernel_internal {
namespace {

// A new field in the model must be added to its Fields() below; these
// sizes (GCC 12, x86-64) make the compiler say so.
static_assert(sizeof(NodeSpec) == 280, "NodeSpec changed: update Fields(NodeSpec)");
static_assert(sizeof(ProcessSpec) == 272, "ProcessSpec changed: update Fields(ProcessSpec)");
static_assert(sizeof(LayerSpec) == 80, "LayerSpec changed: update Fields(LayerSpec)");
static_assert(sizeof(RuleSpec) == 104, "RuleSpec changed: update Fields(RuleSpec)");
static_assert(sizeof(StepSpec) == 648, "StepSpec changed: update Fields(StepSpec)");
static_assert(sizeof(Scenario) == 168, "Scenario changed: update Fields(Scenario)");
static_assert(sizeof(ProbeJob) == 224, "ProbeJob changed: update Fields(ProbeJob)");
static_assert(sizeof(Cred) == 88, "Cred changed: update Fields(ProbeJob)");
static_assert(sizeof(TreeEntry) == 232, "TreeEntry changed: update Fields(TreeEntry)");

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsArray : std::false_type {};
template <typename T, size_t N>
struct IsArray<std::array<T, N>> : std::true_type {};

template <typename IO>
bool Fields(IO& io, SourceLoc& l) {
  return io(l.line) && io(l.col) && io(l.key_path);
}
template <typename IO>
bool Fields(IO& io, AclEntry& e) {
  return io(e.tag) && io(e.perm) && io(e.id);
}
template <typename IO>
bool Fields(IO& io, IdRange& r) {
  return io(r.inside) && io(r.outside) && io(r.count);
}
template <typename IO>
bool Fields(IO& io, NodeSpec& n) {
  return io(n.loc) && io(n.path) && io(n.type) && io(n.mode) && io(n.uid) && io(n.gid) &&
         io(n.has_owner) && io(n.acl) && io(n.default_acl) && io(n.target) &&
         io(n.rdev_major) && io(n.rdev_minor) && io(n.source) && io(n.mount_flags) &&
         io(n.content) && io(n.attrs);
}
template <typename IO>
bool Fields(IO& io, RuleSpec& r) {
  return io(r.loc) && io(r.is_port) && io(r.path) && io(r.nofollow) && io(r.port) &&
         io(r.access);
}
template <typename IO>
bool Fields(IO& io, LayerSpec& l) {
  return io(l.loc) && io(l.handled_fs) && io(l.handled_net) && io(l.scoped) && io(l.rules);
}
template <typename IO>
bool Fields(IO& io, ProcessSpec& p) {
  return io(p.loc) && io(p.name) && io(p.parent) && io(p.uid) && io(p.gid) && io(p.groups) &&
         io(p.caps) && io(p.cwd) && io(p.umask) && io(p.layers) && io(p.userns_uids) &&
         io(p.userns_gids);
}
template <typename IO>
bool Fields(IO& io, StepSpec& s) {
  return io(s.loc) && io(s.as) && io(s.op) && io(s.path) && io(s.path2) && io(s.dirfd) &&
         io(s.flags_text) && io(s.flags) && io(s.access_mode) && io(s.mode) &&
         io(s.mknod_type) && io(s.rdev_major) && io(s.rdev_minor) && io(s.uid) && io(s.gid) &&
         io(s.port) && io(s.fd) && io(s.cmd_text) && io(s.cmd) && io(s.target) &&
         io(s.layer) && io(s.times) && io(s.xattr_name) && io(s.xattr_value) &&
         io(s.xattr_acl) && io(s.xattr_flags) && io(s.offset) && io(s.len) && io(s.attr_set) && io(s.attr_clr) && io(s.expect) &&
         io(s.expect_text);
}
template <typename IO>
bool Fields(IO& io, Sysctls& s) {
  for (const SysctlField& f : kSysctlFields)
    if (!io(s.*f.value)) return false;
  return true;
}
template <typename IO>
bool Fields(IO& io, Scenario& s) {
  return io(s.file) && io(s.format) && io(s.description) && io(s.abi) && io(s.sysctl) &&
         io(s.nodes) && io(s.processes) && io(s.steps);
}
// The credentials but their user namespace model and groups (the job's).
template <typename IO>
bool Fields(IO& io, ProbeJob& j) {
  Cred& c = j.cred;
  return io(c.ruid) && io(c.euid) && io(c.suid) && io(c.fsuid) && io(c.rgid) && io(c.egid) &&
         io(c.sgid) && io(c.fsgid) && io(c.cap_effective) && io(c.cap_permitted) &&
         io(c.umask) && io(j.groups) && io(j.root) && io(j.cwd) && io(j.layers) && io(j.steps);
}
template <typename IO>
bool Fields(IO& io, StepResult& r) {
  return io(r.err) && io(r.reason);
}
template <typename IO>
bool Fields(IO& io, TreeEntry& e) {
  return io(e.parent) && io(e.name) && io(e.type) && io(e.mode) && io(e.uid) && io(e.gid) && io(e.nlink) &&
         io(e.size) && io(e.target) && io(e.rdev_major) && io(e.rdev_minor) && io(e.acl) &&
         io(e.default_acl) && io(e.xattrs);
}
template <typename IO>
bool Fields(IO& io, RunResult& r) {
  return io(r.status) && io(r.message) && io(r.steps) && io(r.tree);
}

class Encoder {
 public:
  explicit Encoder(ByteWriter* w) : w_(w) {}

  template <typename T>
  bool operator()(const T& v) {
    if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
      w_->Int(v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      w_->Str(v);
    } else if constexpr (IsOptional<T>::value) {
      w_->Int(static_cast<uint8_t>(v.has_value()));
      if (v) (*this)(*v);
    } else if constexpr (IsVector<T>::value) {
      w_->Int(static_cast<uint32_t>(v.size()));
      for (const auto& e : v) (*this)(e);
    } else if constexpr (IsArray<T>::value) {
      for (const auto& e : v) (*this)(e);
    } else {
      // Fields() is written once for both directions; encoding only reads.
      Fields(*this, const_cast<T&>(v));
    }
    return true;
  }

 private:
  ByteWriter* w_;
};

class Decoder {
 public:
  explicit Decoder(ByteReader* r) : r_(r) {}

  template <typename T>
  bool operator()(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t b = 0;
      if (!r_->Int(&b) || b > 1) return false;
      v = b != 0;
      return true;
    } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
      return r_->Int(&v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      return r_->Str(&v);
    } else if constexpr (IsOptional<T>::value) {
      uint8_t has = 0;
      if (!r_->Int(&has) || has > 1) return false;
      v.reset();
      if (!has) return true;
      v.emplace();
      return (*this)(*v);
    } else if constexpr (IsVector<T>::value) {
      uint32_t n = 0;
      if (!r_->Int(&n) || n > (1u << 24)) return false;
      v.assign(n, typename T::value_type{});
      for (auto& e : v)
        if (!(*this)(e)) return false;
      return true;
    } else if constexpr (IsArray<T>::value) {
      for (auto& e : v)
        if (!(*this)(e)) return false;
      return true;
    } else {
      return Fields(*this, v);
    }
  }

 private:
  ByteReader* r_;
};

}  // namespace

void EncodeResult(const RunResult& r, ByteWriter* w) { Encoder{w}(r); }

bool DecodeResult(ByteReader* in, RunResult* r) {
  Decoder d{in};
  // A tree whose parents do not come before their children would loop
  // whoever follows them: refuse it.
  return d(*r) && static_cast<uint32_t>(r->status) <= 2 && TreeIsWellFormed(r->tree);
}

void EncodeScenario(const Scenario& s, ByteWriter* w) { Encoder{w}(s); }

bool DecodeScenario(ByteReader* in, Scenario* s) {
  Decoder d{in};
  return d(*s);
}

void EncodeProbeJob(const ProbeJob& j, ByteWriter* w) { Encoder{w}(j); }

bool DecodeProbeJob(ByteReader* in, ProbeJob* j) {
  Decoder d{in};
  if (!d(*j)) return false;
  j->cred.SetGroups(j->groups);
  return true;
}

}  // namespace pathwarden::kernel_internal
