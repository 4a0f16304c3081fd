// File: pathwarden/handles.h
//
// Typed handles of the library: a node of a model's tree (a position: a
// mount and a dentry, as a struct path), a modelled process, and an open
// file descriptor. Handles are small values that name, never own: a Node
// whose object was removed or unmounted is stale, and the calls taking
// it answer ESTALE; a Process handle stays valid for the model's life.
//
// Example:
//   Node etc = *model.Mkdir(model.Root(), "etc", {.mode = 0755});
//   Process alice = *model.Spawn(Credentials::ForUser(1000, 1000));
//   Decision d = model.Evaluate(alice, Stat{.path = "/etc"});

#ifndef PATHWARDEN_HANDLES_H_
#define PATHWARDEN_HANDLES_H_

#include <cstdint>
#include "pathwarden/export.h"

PATHWARDEN_API_BEGIN
namespace pathwarden {

// Node
//
// A position in a model's tree. Default-constructed: none.
struct Node {
  uint32_t mount = 0;
  uint32_t dentry = 0;
  uint32_t inode = 0;  // what the dentry named when the handle was made
  bool valid() const { return dentry != 0; }
  friend bool operator==(const Node&, const Node&) = default;
};

// Process
//
// A modelled process (a task with its credentials, cwd, root, fd table
// and Landlock domain). Default-constructed: none.
struct Process {
  int index = -1;
  bool valid() const { return index >= 0; }
  friend bool operator==(const Process&, const Process&) = default;
};

// Fd
//
// A file descriptor number in one process's table, or kAtFdcwd (the
// working directory, for the *at() calls' dirfd).
struct Fd {
  int num = -100;  // AT_FDCWD
  bool at_cwd() const { return num == -100; }
  friend bool operator==(const Fd&, const Fd&) = default;
};
inline constexpr Fd kAtFdcwd{-100};

}  // namespace pathwarden
PATHWARDEN_API_END

#endif  // PATHWARDEN_HANDLES_H_
