// Reasons: which check decided a result, one human sentence about it, and
// the structure behind it (pathwarden/decision.h).
// Built only when asked for (an Explainer is passed), so the hot path of
// a lookup formats and allocates nothing.

#ifndef PATHWARDEN_SRC_EXPLAIN_EXPLAIN_H_
#define PATHWARDEN_SRC_EXPLAIN_EXPLAIN_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "pathwarden/cred.h"
#include "pathwarden/decision.h"
#include "src/base/check.h"
#include "src/perm/permission.h"
#include "src/vfs/world.h"

namespace pathwarden {

// Explainer
//
// Collects the reason of one decision. The last Fail() wins for errors;
// Ok() records what allowed a successful call. A check that fails closed
// (internal::FailClosed()) outranks them all: the decision made from an
// explainer says "internal error: <what>" (FailedClosedReason()), so
// constructing one, and Clear(), forget this thread's noted check.
class Explainer {
 public:
  Explainer() { internal::ResetFailedCheck(); }
  void Fail(Stage s, std::string text) {
    r_.stage = s;
    r_.text = std::move(text);
  }
  void Ok(Stage s, std::string text) {
    r_.stage = s;
    r_.text = std::move(text);
  }
  Stage stage() const { return r_.stage; }
  const std::string& text() const { return r_.text; }
  // "walk: no search permission on /a (...)"
  std::string Line() const;
  void Clear() {  // tracing stays as it was
    r_ = Reason{};
    internal::ResetFailedCheck();
  }

  // The structured parts, recorded as the checks run.
  void Component(ComponentVerdict c) { r_.components.push_back(std::move(c)); }
  void Dac(PermVerdict v) { r_.dac = std::move(v); }
  void Layers(std::vector<LayerVerdict> l) { r_.layers = std::move(l); }
  void AddLayer(LayerVerdict v) { r_.layers.push_back(std::move(v)); }
  void Refer(ReferSide side) { r_.refer.push_back(std::move(side)); }
  void AddFsRequest(FsRequest f) { r_.fs_requests.push_back(std::move(f)); }
  void RestrictFailed(RestrictFailure f) { r_.restrict_failure = std::move(f); }

  const Reason& reason() const { return r_; }
  Reason Take() { return std::move(r_); }

  // Tracing: every directory the walk searches is recorded (the walk then
  // takes each component by its general code, whose checks report).
  void set_trace(bool on) { trace_ = on; }
  bool tracing() const { return trace_; }

 private:
  Reason r_;
  bool trace_ = false;
};

// FailedClosedReason()
//
// `r` (what the checks recorded, in order) as the reason of a decision
// in which a check failed closed: no stage (no kernel check decided) and
// the text "internal error: <what>".
Reason FailedClosedReason(Reason r, const char* what);

// ReasonLine()
//
// What Decision::ToText() and Explainer::Line() print.
std::string ReasonLine(Stage stage, std::string_view text);

// ModeString()
//
// "drwxr-s--T" as ls prints it.
std::string ModeString(uint32_t mode);

// TypeName()
//
// "file", "dir", "symlink", "fifo", "socket", "char", "block" for the
// S_IFMT bits of `mode` (the scenario format's node type names; "file"
// for anything unknown).
std::string_view TypeName(uint32_t mode);

// WantString()
//
// "rw" for MAY_READ|MAY_WRITE ("-" for none).
std::string WantString(uint32_t want);

// DescribeInode()
//
// "drwx------ 0:0" (with "+acl" when there is an access ACL).
std::string DescribeInode(const vfs::World& w, vfs::InodeId ino);

// DescribePerm()
//
// Why a permission check came out as it did, for `cred` on `ino`:
//   uid 1000 falls in "other": --- lacks x
//   uid 33 is the owner: rw- has r
//   CAP_DAC_OVERRIDE grants it
std::string DescribePerm(const vfs::World& w, const Cred& cred,
                         vfs::InodeId ino, const perm::PermCheck& pc);

// FillObject()
//
// What a verdict says of the object at `at`: its mode, owner, group,
// whether it has an ACL, and on an overlay the layers that hold it.
void FillObject(const vfs::World& w, vfs::PathPos at, PermVerdict* v);

// VerdictOf()
//
// The structured form of a permission check on the inode at `at`, shown
// as `path` (on an overlay, with the layers that hold it).
PermVerdict VerdictOf(const vfs::World& w, vfs::PathPos at, std::string path,
                      const perm::PermCheck& pc);

// DescribeCheck()
//
// "<path> (<inode>; <perm>)" for a reason sentence.
std::string DescribeCheck(const vfs::World& w, const Cred& cred,
                          vfs::PathPos at, vfs::PathPos root,
                          const perm::PermCheck& pc);

// DescribeFuseGate()
//
// Whom a FUSE mount's `gate` admits (World::sb_fuse(); null: failed
// closed), for a refusal's reason.
std::string DescribeFuseGate(const vfs::SbFuse* gate);

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_EXPLAIN_EXPLAIN_H_
