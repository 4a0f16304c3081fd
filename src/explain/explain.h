// Reasons: which check decided a result, and one human sentence about it.
// Built only when asked for (an Explainer is passed), so the hot path of
// a lookup formats and allocates nothing.

#ifndef PATHWARDEN_SRC_EXPLAIN_EXPLAIN_H_
#define PATHWARDEN_SRC_EXPLAIN_EXPLAIN_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "pathwarden/cred.h"
#include "src/perm/permission.h"
#include "src/vfs/world.h"

namespace pathwarden {

// Stage
//
// The part of the kernel whose check decided: the argument checks of the
// system call, the path walk, DAC (mode bits, ACLs, capabilities), mount
// flags, the sticky-bit rules, the protected_* sysctls, the VFS's own
// rules (types, emptiness, busy), capability-only rules, Landlock, and the
// file-descriptor table.
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
std::string_view StageName(Stage s);

// Explainer
//
// Collects the reason of one decision. The last Fail() wins for errors;
// Ok() records what allowed a successful call.
class Explainer {
 public:
  void Fail(Stage s, std::string text) {
    stage_ = s;
    text_ = std::move(text);
  }
  void Ok(Stage s, std::string text) {
    stage_ = s;
    text_ = std::move(text);
  }
  Stage stage() const { return stage_; }
  const std::string& text() const { return text_; }
  // "walk: no search permission on /a (...)"
  std::string Line() const;
  void Clear() {
    stage_ = Stage::kNone;
    text_.clear();
  }

 private:
  Stage stage_ = Stage::kNone;
  std::string text_;
};

// ModeString()
//
// "drwxr-s--T" as ls prints it.
std::string ModeString(uint32_t mode);

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

// DescribeCheck()
//
// "<path> (<inode>; <perm>)" for a reason sentence.
std::string DescribeCheck(const vfs::World& w, const Cred& cred,
                          vfs::PathPos at, vfs::PathPos root,
                          const perm::PermCheck& pc);

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_EXPLAIN_EXPLAIN_H_
