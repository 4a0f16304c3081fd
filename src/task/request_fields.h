// A typed request's members copied into a flat form by name, and back: the
// engine's OpArgs (src/task/task.h) and the live verifier's StepSpec
// (src/kernel/host_probe.cc) take them this way, a scenario step
// (src/scenario/run_engine.cc) and the C API's request
// (src/capi/request.cc) give them, so that a request type whose members
// follow the names needs no case of its own in any of them.

#ifndef PATHWARDEN_SRC_TASK_REQUEST_FIELDS_H_
#define PATHWARDEN_SRC_TASK_REQUEST_FIELDS_H_

#include <cstdint>
#include <type_traits>
#include <utility>
#include <variant>

#include "pathwarden/request.h"

namespace pathwarden {

// Which way MapRequestFields() copies.
enum class FieldsTo { kFlat, kRequest };

// One member and the flat form's field for it, copied the way `to` says
// where that assignment is well-formed (a StepSpec's dirfd is text, its
// mknod type an enum: left to the caller).
template <FieldsTo to, typename M, typename F>
void CopyField(M& member, F& field) {
  if constexpr (to == FieldsTo::kFlat) {
    if constexpr (requires { field = member; }) field = member;
  } else {
    if constexpr (requires { member = field; }) member = field;
  }
}

// MapRequestFields()
//
// The one table of which member of a typed request is which field of a
// flat form (the engine's OpArgs, a scenario's StepSpec): each member to
// or from the field of its name, and the few named otherwise (link and
// rename's oldpath/newpath are path/path2, a bind's source and target
// path/path2, access's mode access_mode, the xattr name and value
// xattr_name/xattr_value, mknod's type mknod_type). Only towards the flat
// form: a task target's index to `peer`, and `times` and `ruleset` by
// address where the flat form holds a pointer.
template <FieldsTo to, typename R, typename Flat>
void MapRequestFields(R& r, Flat& f) {
  using T = std::remove_const_t<R>;
  if constexpr (requires { r.dirfd; f.dirfd; }) CopyField<to>(r.dirfd, f.dirfd);
  if constexpr (requires { r.fd; f.fd; }) CopyField<to>(r.fd, f.fd);
  if constexpr (requires { r.oldpath; }) {  // link, rename
    CopyField<to>(r.oldpath, f.path);
    CopyField<to>(r.newpath, f.path2);
  } else if constexpr (std::is_same_v<T, BindMount>) {
    CopyField<to>(r.source, f.path);
    CopyField<to>(r.target, f.path2);
  } else if constexpr (requires { r.path; f.path; }) {
    CopyField<to>(r.path, f.path);
  }
  if constexpr (std::is_same_v<T, Symlink>) CopyField<to>(r.target, f.target);
  if constexpr (to == FieldsTo::kFlat && requires { f.peer = r.target.index; })
    f.peer = r.target.index;
  if constexpr (requires { r.flags; f.flags; }) CopyField<to>(r.flags, f.flags);
  if constexpr (std::is_same_v<T, Access>) {
    CopyField<to>(r.mode, f.access_mode);
  } else if constexpr (requires { r.mode; f.mode; }) {
    CopyField<to>(r.mode, f.mode);
  }
  if constexpr (requires { r.type; f.mknod_type; }) CopyField<to>(r.type, f.mknod_type);
  if constexpr (requires { r.rdev_major; f.rdev_major; }) {
    CopyField<to>(r.rdev_major, f.rdev_major);
    CopyField<to>(r.rdev_minor, f.rdev_minor);
  }
  if constexpr (requires { r.uid; f.uid; }) {
    CopyField<to>(r.uid, f.uid);
    CopyField<to>(r.gid, f.gid);
  }
  if constexpr (to == FieldsTo::kFlat && requires { f.times = &r.times; }) {
    f.times = &r.times;
  } else if constexpr (requires { r.times; f.times; }) {
    CopyField<to>(r.times, f.times);
  }
  if constexpr (requires { r.cmd; f.cmd; }) CopyField<to>(r.cmd, f.cmd);
  if constexpr (requires { r.port; f.port; }) CopyField<to>(r.port, f.port);
  if constexpr (to == FieldsTo::kFlat && requires { f.ruleset = &r.ruleset; })
    f.ruleset = &r.ruleset;
  if constexpr (requires { r.name; f.xattr_name; }) CopyField<to>(r.name, f.xattr_name);
  if constexpr (requires { r.value; f.xattr_value; }) CopyField<to>(r.value, f.xattr_value);
  if constexpr (requires { r.xattr_flags; f.xattr_flags; })
    CopyField<to>(r.xattr_flags, f.xattr_flags);
  if constexpr (requires { r.attr_set; f.attr_set; }) {  // mount_setattr
    CopyField<to>(r.attr_set, f.attr_set);
    CopyField<to>(r.attr_clr, f.attr_clr);
  }
  if constexpr (requires { r.offset; f.offset; }) {  // fallocate
    CopyField<to>(r.offset, f.offset);
    CopyField<to>(r.len, f.len);
  }
}

// CopyRequestFields()
//
// Each member of `r` into `out` (MapRequestFields()).
template <typename R, typename Out>
void CopyRequestFields(const R& r, Out& out) {
  MapRequestFields<FieldsTo::kFlat>(r, out);
}

// CopyFieldsToRequest()
//
// The other way: each member of `r` from `in`; the rest (a StepSpec's
// dirfd, fd and target are names, its mknod type an enum, its layer a
// spec, a fallocate's mode is in its flags) are the caller's.
template <typename In, typename R>
void CopyFieldsToRequest(const In& in, R& r) {
  MapRequestFields<FieldsTo::kRequest>(r, in);
}

// WithRequestType()
//
// Calls f(T{}) with the request type T whose kOp is `op`: false, and no
// call, when no type has it.
template <size_t I = 0, typename F>
bool WithRequestType(Op op, F&& f) {
  if constexpr (I < std::variant_size_v<Request>) {
    using T = std::variant_alternative_t<I, Request>;
    if (T::kOp == op) {
      std::forward<F>(f)(T{});
      return true;
    }
    return WithRequestType<I + 1>(op, std::forward<F>(f));
  } else {
    return false;
  }
}

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_TASK_REQUEST_FIELDS_H_
