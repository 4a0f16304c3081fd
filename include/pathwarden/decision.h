// File: pathwarden/decision.h
//
// A Decision: what Linux answers to one request, and why. The verdict
// (allowed, denied, or unknown: the library cannot see or does not model
// what decides, and unknown never counts as allowed), the errno (0 when
// allowed), the stage whose check decided, and a structured reason: the
// components the walk checked, the DAC verdict, Landlock's verdict per
// layer and the sides of a refer check. ToText() renders the reason as one
// line ("walk: no search permission on /home/alice (...)"); explanations,
// maps, JSON and the C API render the structure instead of parsing it.
//
// Example:
//   Decision d = model.Evaluate(alice, Open{.path = "/srv/a", .flags = O_WRONLY});
//   if (d.denied() && d.stage() == Stage::kLandlock)
//     for (const LayerVerdict& l : d.reason().layers)
//       std::cout << "layer " << l.layer << " misses "
//                 << landlock::FsAuditNames(l.missing) << "\n";

#ifndef PATHWARDEN_DECISION_H_
#define PATHWARDEN_DECISION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/handles.h"
#include "pathwarden/landlock.h"
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// Stage
//
// The part of the kernel whose check decided: the system call's argument
// checks, the path walk, DAC (mode bits, ACLs, capabilities), mount flags,
// the sticky-bit rules, the protected_* sysctls, the VFS's own rules
// (types, emptiness, busy), capability-only rules, Landlock, the
// file-descriptor table, and Unix rules outside files (signals, ports).
enum class Stage : uint8_t {
  kNone,
  kArgs,
  kWalk,
  kDac,
  kMount,
  kSticky,
  kProtected,
  kVfs,
  kCapability,
  kLandlock,
  kFd,
  kUnix,
};

// StageName()
//
// "walk", "dac", "landlock", ... ("none" for kNone).
std::string_view StageName(Stage s);

enum class Verdict : uint8_t { kAllowed, kDenied, kUnknown };
std::string_view VerdictName(Verdict v);

// PermClass
//
// What decided a permission check on an inode (generic_permission()): the
// owner class, a named ACL_USER entry, the group class, the owning or a
// named group entry of an ACL, the other class, the ACL's other entry,
// every class having the bits (no ACL), a capability, a read-only
// filesystem, an immutable inode, or the fast search check (a directory
// anyone may search).
enum class PermClass : uint8_t {
  kNone,
  kOwner,
  kAclUser,
  kGroup,
  kAclGroup,
  kOther,
  kAclOther,
  kAllHave,
  kCapability,
  kReadonly,
  kImmutable,
  kFastSearch,
  kUnknown,  // outside the model (Decision::unknown()): neither granted nor refused
  kUnmappedId,  // a write where an idmapped mount maps the owner or group nowhere
  kFuseMounterOnly,  // a FUSE mount without allow_other admits only its mounter
};
std::string_view PermClassName(PermClass c);

// PermVerdict
//
// One inode permission check: the path checked, what was asked (MAY_*
// bits: 4 read, 2 write, 1 exec), whether it was granted, the class or
// ACL entry that decided (and the entry's id for ACL_USER/ACL_GROUP), the
// capability that granted it (-1: none), the inode's mode and owner.
struct PermVerdict {
  std::string path;
  uint32_t want = 0;
  bool granted = false;
  PermClass decided_by = PermClass::kNone;
  uint32_t acl_id = 0;  // the uid or gid of an ACL_USER/ACL_GROUP entry
  int capability = -1;
  uint32_t mode = 0;
  uint32_t uid = 0, gid = 0;
  bool has_acl = false;
  // On overlayfs, the layers that hold the object ("upper", "lower 2",
  // "upper + lower 1" for a merged directory); "" elsewhere or not known.
  std::string layer;
};

// ComponentVerdict
//
// One directory the walk searched on the way (may_lookup()): the check
// made, and whether the fast search check took it.
struct ComponentVerdict {
  PermVerdict check;
  bool fast = false;
};

// RuleGrant
//
// A Landlock rule that granted rights: where it is attached (a path rule
// on the walk: its path as written; a net rule: `port`, with `path`
// empty), the layer (1-based), the rights it granted there.
struct RuleGrant {
  std::string path;
  int layer = 0;
  landlock::AccessMask granted = 0;
  int port = -1;  // a net rule's port (0 to 65535); -1 for a path rule
};

// LayerVerdict
//
// One Landlock layer's verdict (1-based, the youngest last): the rights
// asked of it (fs, or net/scope per `kind`), those still missing after
// the walk (the blockers), and the rules that granted the rest.
struct LayerVerdict {
  enum class Kind : uint8_t { kFs, kNet, kScope };
  Kind kind = Kind::kFs;
  int layer = 0;
  landlock::AccessMask requested = 0;
  landlock::AccessMask missing = 0;
  std::vector<RuleGrant> grants;
};

// ReferSide
//
// For a rename or link across directories under Landlock: one side (the
// source or the destination) and its layers' verdicts.
struct ReferSide {
  std::string path;
  bool source = true;
  std::vector<LayerVerdict> layers;
};

// FsRequest
//
// The filesystem rights one of Landlock's hooks asked of a path, whether
// or not the process has a domain that handles them (recorded with
// Model::Detail::kTrace only): `path` absolute from
// the model's root (not cut for display), the object for the file rights
// and read_dir, the directory for make_*, remove_* and refer and for the
// open of a file being created. What a call needs of Landlock, as
// `trace --learn` learns it.
struct FsRequest {
  std::string path;
  landlock::AccessMask access = 0;
  bool directory = false;
};

// RestrictFailure
//
// For a Restrict request the kernel refuses: which of the three calls
// refused (landlock_create_ruleset, landlock_add_rule of rule `rule` --
// an index into the ruleset's rules -- or landlock_restrict_self), and
// why, in words.
struct RestrictFailure {
  enum class Call : uint8_t { kCreateRuleset, kAddRule, kRestrictSelf };
  Call call = Call::kCreateRuleset;
  int rule = -1;
  std::string why;
};

// Reason
//
// Why a decision came out as it did. `text` is the sentence of the check
// that decided (the last one made); the structured parts are recorded as
// the checks run, in order.
struct Reason {
  Stage stage = Stage::kNone;
  std::string text;
  std::vector<ComponentVerdict> components;  // the walk, in order
  std::optional<PermVerdict> dac;            // the deciding DAC check
  std::vector<LayerVerdict> layers;          // Landlock, per layer
  std::vector<ReferSide> refer;              // rename/link: both sides
  std::vector<FsRequest> fs_requests;        // Landlock's hooks, in order
  std::optional<RestrictFailure> restrict_failure;
  std::string unknown_why;  // when the verdict is unknown
};

// Decision
//
// The answer to one request.
class [[nodiscard]] Decision {
 public:
  Decision() = default;
  // A decision without a reason (Model::Detail::kVerdictOnly).
  Decision(Verdict v, int err, Fd fd = Fd{-1}) : verdict_(v), err_(err), fd_(fd) {}
  Decision(Verdict v, int err, Reason reason, Fd fd = Fd{-1})
      : verdict_(v),
        err_(err),
        fd_(fd),
        reason_(std::make_shared<const Reason>(std::move(reason))) {}

  Verdict verdict() const { return verdict_; }
  bool allowed() const { return verdict_ == Verdict::kAllowed; }
  bool denied() const { return verdict_ == Verdict::kDenied; }
  bool unknown() const { return verdict_ == Verdict::kUnknown; }
  // The errno Linux returns (0 when allowed; -1 when unknown: never 0).
  int err() const { return err_; }
  Stage stage() const { return reason().stage; }
  // Empty (stage kNone, no text) for a decision made without a reason.
  const Reason& reason() const { return reason_ ? *reason_ : EmptyReason(); }
  // The fd an applied open (or the fd a target received by send_fd);
  // Fd{-1} otherwise.
  Fd fd() const { return fd_; }

  // ToText()
  //
  // "stage: sentence" ("walk: no search permission on /home/alice
  // (drwx------ 1000:1000; uid 34 falls in \"other\": --- lacks x)"), the
  // sentence alone when no stage decided, "" when nothing was explained.
  std::string ToText() const;

 private:
  static const Reason& EmptyReason();

  Verdict verdict_ = Verdict::kDenied;
  int err_ = 13;  // EACCES: a default Decision denies
  Fd fd_{-1};
  // Shared and immutable: copying a decision copies no reason.
  std::shared_ptr<const Reason> reason_;
};

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_DECISION_H_
