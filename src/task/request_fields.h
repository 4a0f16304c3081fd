// A typed request's members copied into a flat form by name: the engine's
// OpArgs (src/task/task.h) and the live verifier's StepSpec
// (src/kernel/host_probe.cc) both take them this way, so that a request
// type whose members follow the names needs no case of its own in either.

#ifndef PATHWARDEN_SRC_TASK_REQUEST_FIELDS_H_
#define PATHWARDEN_SRC_TASK_REQUEST_FIELDS_H_

#include <type_traits>

#include "pathwarden/request.h"

namespace pathwarden {

// CopyRequestFields()
//
// Each member of `r` into the field of `out` of its name, where `out` has
// one the member can be assigned to; the few named otherwise mapped here
// (link and rename's oldpath/newpath to path/path2, a bind's source and
// target to path/path2, a task target's index to peer, access's mode to
// access_mode, xattr name and value to xattr_name/xattr_value, mknod's
// type to mknod_type). A field whose type does not fit (a StepSpec's
// dirfd is text, its mknod type an enum) is left to the caller; `times`
// and `ruleset` go by address where `out` holds a pointer.
template <typename R, typename Out>
void CopyRequestFields(const R& r, Out& out) {
  if constexpr (requires { out.dirfd = r.dirfd; }) out.dirfd = r.dirfd;
  if constexpr (requires { out.fd = r.fd; }) out.fd = r.fd;
  if constexpr (requires { out.path = r.path; }) out.path = r.path;
  if constexpr (requires { r.oldpath; }) {  // link, rename
    out.path = r.oldpath;
    out.path2 = r.newpath;
  }
  if constexpr (std::is_same_v<R, BindMount>) {
    out.path = r.source;
    out.path2 = r.target;
  }
  if constexpr (std::is_same_v<R, Symlink>) out.target = r.target;
  if constexpr (requires { out.peer = r.target.index; }) out.peer = r.target.index;
  if constexpr (requires { out.flags = r.flags; }) out.flags = r.flags;
  if constexpr (std::is_same_v<R, Access>) {
    out.access_mode = r.mode;
  } else if constexpr (requires { out.mode = r.mode; }) {
    out.mode = r.mode;
  }
  if constexpr (requires { out.mknod_type = r.type; }) out.mknod_type = r.type;
  if constexpr (requires { out.rdev_major = r.rdev_major; }) {
    out.rdev_major = r.rdev_major;
    out.rdev_minor = r.rdev_minor;
  }
  if constexpr (requires { out.uid = r.uid; }) {
    out.uid = r.uid;
    out.gid = r.gid;
  }
  if constexpr (requires { out.times = &r.times; }) {
    out.times = &r.times;
  } else if constexpr (requires { out.times = r.times; }) {
    out.times = r.times;
  }
  if constexpr (requires { out.cmd = r.cmd; }) out.cmd = r.cmd;
  if constexpr (requires { out.port = r.port; }) out.port = r.port;
  if constexpr (requires { out.ruleset = &r.ruleset; }) out.ruleset = &r.ruleset;
  if constexpr (requires { out.xattr_name = r.name; }) out.xattr_name = r.name;
  if constexpr (requires { out.xattr_value = r.value; }) out.xattr_value = r.value;
  if constexpr (requires { out.xattr_flags = r.xattr_flags; }) out.xattr_flags = r.xattr_flags;
  if constexpr (requires { r.offset; }) {  // fallocate
    out.offset = r.offset;
    out.len = r.len;
  }
}

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_TASK_REQUEST_FIELDS_H_
