// The final tree read back as the unconfined supervisor sees it, for
// comparison with the engine's. Linux: fs/posix_acl.c (xattr format)

#ifndef PATHWARDEN_SRC_KERNEL_TREE_CAPTURE_H_
#define PATHWARDEN_SRC_KERNEL_TREE_CAPTURE_H_

#include "pathwarden/result.h"
#include <string>
#include <vector>

#include "pathwarden/executor.h"

namespace pathwarden::kernel_internal {

// CaptureTree()
//
// Every object reachable from `root` (the caller's "/", the scenario's
// root) through mounts, one entry each with paths from "/", sorted by
// path; ACLs in PosixAcl::ToText() form, "" when the inode has none.
Result<std::vector<TreeEntry>, std::string> CaptureTree(
    const std::string& root = "/");

// AclText()
//
// The ACL stored in the extended attribute `name` of `path`
// ("system.posix_acl_access" or "system.posix_acl_default") as
// PosixAcl::ToText() prints it; "" when there is none.
Result<std::string, int> AclText(const std::string& path,
                                        const char* name);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_TREE_CAPTURE_H_
