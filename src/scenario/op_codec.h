// The operations' codec: one row per operation (op_codec.cc), and every
// per-operation fact of the text forms read from it — the operation's
// name (in scenario files, `explain` queries, reports and the C API's
// pathwarden_op_name()), the keys its step takes, which flags its `flags`
// key names, how a step of it is described, and the errnos Linux's call
// can return. Adding an operation adds a row here; the parser, the
// writer, the descriptions and the fuzz oracle need no change of their
// own (docs/architecture.md, "Adding an operation").

#ifndef PATHWARDEN_SRC_SCENARIO_OP_CODEC_H_
#define PATHWARDEN_SRC_SCENARIO_OP_CODEC_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "pathwarden/request.h"

namespace pathwarden::scenario_internal {

// Which flag family an operation's `flags` key takes (names.h has each
// family's names).
enum class FlagFamily {
  kNone,
  kOpen,      // O_*
  kAccess,    // R_OK.. in access_mode, AT_EACCESS|AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH
  kAtNofollow,  // AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH (stat, chmod, chown, exec_check, utimensat)
  kLink,      // AT_SYMLINK_FOLLOW|AT_EMPTY_PATH
  kUnlink,    // AT_REMOVEDIR
  kRename,    // RENAME_*
  kMount,     // MS_* (mount_tmpfs)
  kBind,      // MS_REC (bind_mount)
  kUmount,    // MNT_DETACH|MNT_FORCE|UMOUNT_NOFOLLOW
  kFallocate, // FALLOC_FL_* (fallocate's mode)
  kMountSetattr,  // AT_EMPTY_PATH|AT_RECURSIVE|AT_SYMLINK_NOFOLLOW|AT_NO_AUTOMOUNT
};

// How DescribeStep() words a step of the operation ("chmod /a 0o600").
enum class StepForm {
  kPath,           // op PATH [at fd] [FLAGS]
  kFd,             // op fd FD
  kFdMode,         // op fd FD 0oMODE
  kFdOwner,        // op fd FD UID:GID
  kFdRange,        // op fd FD OFFSET+LEN [FLAGS]
  kFdCmd,          // op fd FD CMD
  kFdToTarget,     // op FD to PROCESS
  kPathMode,       // op PATH [at fd] 0oMODE [FLAGS]
  kPathModeOnly,   // op PATH [at fd] 0oMODE
  kPathOwner,      // op PATH [at fd] UID:GID [FLAGS]
  kPathName,       // op PATH [at fd] NAME [FLAGS]
  kPathNameValue,  // op PATH [at fd] NAME (N bytes) [FLAGS]
  kPathTarget,     // op PATH [at fd] -> "TARGET"
  kTwoPaths,       // op PATH [at fd] PATH2 [FLAGS]
  kMknod,          // op PATH [at fd] TYPE 0oMODE
  kTarget,         // op PROCESS
  kPort,           // op port PORT
  kRestrict,       // restrict (fs: ...; net: ...; scoped: ...; N rules)
  kPathAttrs,      // op PATH [at fd] [set ATTRS] [clear ATTRS] [FLAGS]
};

// A positional argument of an `explain` query after the operation's name
// (src/query/query.cc), and the request member it fills (by the flat
// field MapRequestFields() maps: path, path2, target, mode, ...).
enum class QueryArg : uint8_t {
  kNone,
  kPath,      // PATH: path (link and rename's old path)
  kPath2,     // PATH2: path2 (their new path)
  kTarget,    // TARGET: a symlink's target
  kMode,      // MODE, octal
  kOptMode,   // [MODE]: the request type's default without
  kFileType,  // file|fifo|socket: mknod's type
  kOwner,     // UID:GID (-1 keeps an id)
  kName,      // NAME: an extended attribute's
  kOptValue,  // [VALUE]: its value (empty without)
  kPort,      // PORT, 0 to 65535
  kAttrs,     // ATTRS: MOUNT_ATTR_* names joined by "|", or 0 (attr_set)
  kOptAttrs,  // [ATTRS]: the same, cleared (attr_clr)
};

// What a call changes, as the live verifier (src/kernel/host_probe.cc)
// and `explain --verify` ask it: which calls run on the host as they are,
// which only inside a scratch directory, and which never.
enum class Effect : uint8_t {
  kOther,  // mounts, sockets, processes, descriptors, sandboxes: never run
  kReads,  // changes nothing; an open unless O_CREAT, O_TRUNC or O_TMPFILE
  kNames,  // changes only what its paths name: run inside a scratch directory
};

// Whether the call follows a symlink in its path's last component.
enum class Follow : uint8_t {
  kNever,
  kAlways,
  kUnlessNofollow,  // unless AT_SYMLINK_NOFOLLOW (open: O_NOFOLLOW)
  kIfFollowFlag,    // only with AT_SYMLINK_FOLLOW (linkat)
};

// Errnos as a set; Linux's stop at EHWPOISON (133).
class ErrnoSet {
 public:
  static constexpr int kEnd = 192;
  constexpr ErrnoSet() = default;
  constexpr ErrnoSet(std::initializer_list<int> errs) {
    for (int e : errs)
      if (e > 0 && e < kEnd) words_[e / 64] |= uint64_t{1} << (e % 64);
  }
  constexpr ErrnoSet operator|(const ErrnoSet& o) const {
    ErrnoSet s;
    for (int i = 0; i < kWords; ++i) s.words_[i] = words_[i] | o.words_[i];
    return s;
  }
  constexpr bool Has(int e) const {
    return e >= 0 && e < kEnd && (words_[e / 64] >> (e % 64) & 1) != 0;
  }

 private:
  static constexpr int kWords = kEnd / 64;
  uint64_t words_[kWords] = {};
};

// One operation's row.
struct OpCodec {
  Op op;
  std::string_view name;
  // The keys its step takes besides `as`, `op` and `expect`: the required
  // ones, then the optional ones (empty names pad the arrays).
  std::array<std::string_view, 2> required;
  std::array<std::string_view, 6> optional;
  FlagFamily flags;
  StepForm form;
  // What Linux's call (as the kernel executor makes it,
  // src/kernel/step_runner.cc) can fail with: its man page's ERRORS, and
  // what the kernel was seen to return in this project's suites.
  ErrnoSet errnos;
  // Its `explain` query: the positional arguments in order (none: not a
  // query), and what the grammar's line adds in words.
  std::array<QueryArg, 3> query = {};
  std::string_view query_note = {};
  Effect effect = Effect::kOther;
  Follow follow = Follow::kNever;
};

// Every operation's row, in the order of the Op enum.
std::span<const OpCodec> OpCodecs();
// `op`'s row (a fail-closed default for a value past the enum's end).
const OpCodec& CodecOf(Op op);

// The operations with a query form, in the order `explain` lists them.
std::span<const Op> QueryOps();

// Whether a call of `c` with `flags` changes nothing (Effect::kReads, and
// for an open no O_CREAT, O_TRUNC or O_TMPFILE).
bool ChangesNothing(const OpCodec& c, uint64_t flags);
// Whether a call of `c` with `flags` follows a symlink in its path's last
// component.
bool FollowsLast(const OpCodec& c, uint64_t flags);

}  // namespace pathwarden::scenario_internal

#endif  // PATHWARDEN_SRC_SCENARIO_OP_CODEC_H_
