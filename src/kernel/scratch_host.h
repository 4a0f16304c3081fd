// A scratch host: a tree with every kind of object a host holds (owners,
// special modes, ACLs, inode flags, symlinks of every shape, special
// files, mounts), built on a fresh tmpfs in a private mount namespace, and
// a listing of it that proves reading changed nothing.

#ifndef PATHWARDEN_SRC_KERNEL_SCRATCH_HOST_H_
#define PATHWARDEN_SRC_KERNEL_SCRATCH_HOST_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/result.h"

namespace pathwarden::kernel_internal {

// EnterPrivateMountNamespace()
//
// unshare(CLONE_NEWNS), then every mount made private (MS_REC |
// MS_PRIVATE), so that nothing mounted afterwards reaches the host, and a
// fresh tmpfs on /tmp, so that nothing made there afterwards (a scratch
// tree's mount point) is left on the host when the process dies, even by
// SIGKILL; the host's /tmp is not seen from the namespace. Only
// the calling thread moves: call it in a single-threaded process (a fresh
// fork). ScratchHost::Build() requires the namespace made here (or by a
// forked parent's call): a process that did its own unshare calls it
// again. Returns "" or what failed ("unshare(CLONE_NEWNS): EPERM").
std::string EnterPrivateMountNamespace();

// ScratchPath
//
// One object of the scratch tree: what it is ("setgid_dir", "chain41",
// "chr_null") and its absolute path.
struct ScratchPath {
  std::string kind;
  std::string path;
};

// ScratchHost
//
// The tree, mounted until Cleanup() or destruction. Built as root with
// umask 0 on a tmpfs (nodev: its device nodes are only nodes) mounted on
// a fresh directory /tmp/pathwarden-scratch.XXXXXX:
//
//   home/alice 0700 1000:1000 (secret 0600), home/bob 0750 1001:1001
//   private 0700 0:0 (file), shared 02775 0:1000, tmp 01777 (files of
//   1000 and 1001), acl/file (access ACL u:1001:r--), acl/dir (access
//   and default ACL) with acl/dir/inherited (created under the default),
//   attr/immutable (+i), attr/append (+a), links/ (target, relative,
//   "../" relative, absolute, dangling, loop_a <-> loop_b, chain/l01 ..
//   l41 -> ../target: l02 resolves through 40 symlinks, l01 through 41),
//   special/ (fifo, socket, null c 1:3, zero c 1:5, loop0 b 7:0), noexec
//   (a tmpfs mounted noexec, with an executable run.sh) and bin/run.sh,
//   data/ (file with a user xattr, sub/deep), ro (data/sub bound
//   read-only), hard/a/f and its hard link hard/b/f.
//
// Cleanup clears +i and +a, unmounts and removes the directory; it runs
// from the destructor and from every failed Build().
class ScratchHost {
 public:
  // Build()
  //
  // Errors: the calling thread is not in the namespace
  // EnterPrivateMountNamespace() made, a mount there is shared, or a call
  // failed ("mknod special/null: EPERM").
  static Result<std::unique_ptr<ScratchHost>, std::string> Build();

  ScratchHost(const ScratchHost&) = delete;
  ScratchHost& operator=(const ScratchHost&) = delete;
  ~ScratchHost();

  // The tmpfs's mount point, e.g. "/tmp/pathwarden-scratch.AbC123".
  const std::string& root() const { return root_; }
  // Every interesting object, in build order.
  const std::vector<ScratchPath>& paths() const { return paths_; }
  // Path()
  //
  // The path of `kind`, "" when there is none.
  std::string Path(std::string_view kind) const;

  // Cleanup()
  //
  // Undoes the build; "" or every step that failed. A second call does
  // nothing.
  std::string Cleanup();

 private:
  ScratchHost() = default;
  std::string Make();

  std::string root_;
  bool dir_made_ = false;
  std::vector<std::string> mounts_;   // in mount order, the tmpfs first
  std::vector<std::string> flagged_;  // files with +i or +a
  std::vector<ScratchPath> paths_;
};

// HostListing()
//
// Every object below and at `root`, one line each, sorted by path ("/"
// for `root`, "/links/abs" below it): type and mode, owner, size, nlink,
// mtime and ctime in ns, the statx attributes immutable and append,
// rdev of devices, the target of symlinks, and each extended attribute
// with its value in hex. Symlinks are not followed and nothing but
// directories is opened (statx, llistxattr, lgetxattr, readlink by path),
// so two listings around a read-only workload are equal (atime is left
// out: reading changes it). Mounts below `root` are crossed.
Result<std::string, std::string> HostListing(const std::string& root);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_SCRATCH_HOST_H_
