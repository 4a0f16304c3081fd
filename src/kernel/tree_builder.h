// The scenario's [[node]] tree made real, in the supervisor whose root is
// the scenario's fresh tmpfs.

#ifndef PATHWARDEN_SRC_KERNEL_TREE_BUILDER_H_
#define PATHWARDEN_SRC_KERNEL_TREE_BUILDER_H_

#include <sys/types.h>

#include <string>

#include "pathwarden/scenario.h"

namespace pathwarden::kernel_internal {

// BuildTree()
//
// Creates the nodes in file order as root with umask 0 (missing parents
// 0755 0:0; chown before chmod, then ACLs), then the inode attributes, then
// the mount flags left for after the tree (tmpfs `ro` remounts, bind
// flags). Returns "" or the kError message: "file:line:col: ..." for the
// file's faults (a parent that is not a directory, a path that exists, a
// bind the kernel refuses), "...: internal: ...: EPERM" for the executor's.
std::string BuildTree(const Scenario& s);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_TREE_BUILDER_H_
