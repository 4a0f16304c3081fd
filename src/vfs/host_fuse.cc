// The live host's FUSE mounts with default_permissions: the kernel's
// generic checks on the attributes the server returns (as statx shows
// them), behind the mount's gate. Without allow_other only a task whose
// real, effective and saved uids and gids are the mounter's enters
// (fuse_permissible_uidgid()); CAP_SYS_ADMIN as well where the fuse
// module's allow_sys_admin_access is set. With allow_other every task in
// the mount's user namespace or below it enters: all of them, for a
// mount of the initial user namespace.
// Linux: fs/fuse/dir.c fuse_allow_current_process(), fuse_permission(),
// fuse_getattr(), fuse_setattr(); fs/fuse/xattr.c fuse_listxattr();
// fs/fuse/inode.c fuse_show_options() (user_id= and group_id= in the
// mount's user namespace's ids).

#include <charconv>
#include <fstream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "src/vfs/host.h"

namespace pathwarden::vfs {
namespace {

std::optional<uint32_t> ParseId(std::optional<std::string_view> v) {
  if (!v) return std::nullopt;
  uint32_t id = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), id);
  if (ec != std::errc() || end != v->data() + v->size()) return std::nullopt;
  return id;
}

// /sys/module/fuse/parameters/allow_sys_admin_access: "Y" or "N".
std::optional<bool> SysAdminAccess() {
  std::ifstream in("/sys/module/fuse/parameters/allow_sys_admin_access");
  std::string v;
  if (!(in >> v)) return std::nullopt;
  if (v == "Y" || v == "1") return true;
  if (v == "N" || v == "0") return false;
  return std::nullopt;
}

}  // namespace

std::string HostBackend::FuseFor(const MountInfo& m, std::optional<bool> initial_ns,
                                 std::optional<SbFuse>* gate) {
  // A mount made inside a user namespace admits by that namespace, and
  // shows its owner in that namespace's ids: neither is in the table. A
  // mount namespace of the initial user namespace holds none such (mounts
  // do not propagate into a more privileged namespace).
  if (initial_ns != true)
    return "FUSE in a mount namespace that may hold mounts made inside a user namespace: who "
           "may enter (fuse_allow_current_process()) asks the mount's user namespace, and its "
           "user_id= and group_id= are that namespace's ids, neither of which is shown";
  if (m.HasSuperOption("allow_other")) {
    *gate = SbFuse{};
    return {};
  }
  const std::optional<uint32_t> uid = ParseId(m.SuperOptionValue("user_id"));
  const std::optional<uint32_t> gid = ParseId(m.SuperOptionValue("group_id"));
  if (!uid || !gid)
    return "FUSE without allow_other whose user_id= and group_id= the mount table does not "
           "show: who may enter is not known";
  *gate = SbFuse{true, *uid, *gid, SysAdminAccess()};
  return {};
}

}  // namespace pathwarden::vfs
