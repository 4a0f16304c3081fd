// What the predictor reads of the host and of a tracee through /proc,
// without changing either: a link's target, an fd's path, open flags and
// stat, real paths, and the interpreter a script or an ELF binary names.

#ifndef PATHWARDEN_SRC_TRACE_HOST_PATHS_H_
#define PATHWARDEN_SRC_TRACE_HOST_PATHS_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>

namespace pathwarden::trace {

// ReadLinkAt(): the target of symlink `path`, "" when it cannot be read.
std::string ReadLinkAt(const std::string& path);

// FdLink(): what /proc/TID/fd/FD names ("" for a closed fd).
std::string FdLink(pid_t tid, int fd);

// FdFlags(): the flags of an open fd (/proc/TID/fdinfo/N "flags:",
// octal), or -1.
int64_t FdFlags(pid_t tid, int fd);

// FdStat(): stat() of what fd `fd` of `tid` holds.
bool FdStat(pid_t tid, int fd, struct stat* st);

// Join(): `dir` and `name` with one '/' between them.
std::string Join(const std::string& dir, const std::string& name);

// Split(): "dir/name" split at the last '/' (trailing slashes ignored).
std::pair<std::string, std::string> Split(std::string p);

// RealParentJoin(): the real path of `abs`'s directory, joined with its
// last name: where a rule must be for what a call did to that name.
std::string RealParentJoin(const std::string& abs, std::string* parent_out);

// RealPath(): realpath() of `abs`, or `abs` when it cannot be resolved.
std::string RealPath(const std::string& abs);

// InterpreterOf(): the first line's interpreter of a "#!" script, or the
// PT_INTERP of an ELF binary; "" when none. The file is read with
// O_NOATIME, so that reading changes nothing on the host; *unreadable
// when it cannot be.
std::string InterpreterOf(const std::string& path, bool* unreadable, bool* script);

}  // namespace pathwarden::trace

#endif  // PATHWARDEN_SRC_TRACE_HOST_PATHS_H_
