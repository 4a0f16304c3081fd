// pathwarden-fs: a FUSE passthrough file server over a backing directory
// whose every request is decided by pathwarden for the calling process,
// as Linux would decide it on a local filesystem (docs/fileserver.md).
//
// Each caller is a Process of a host Model (Model::FromHost(), snapshot
// consistency) whose root is the backing directory, so a path as the
// caller sees it under the mount point is asked as the same path from
// that root. The server is the only writer of the backing directory: what
// it changes there it has the model read again (Model::Revalidate()), so
// the model stays the backing directory as it is. Requests the model
// cannot decide are refused (EACCES), never performed unchecked.

#ifndef PATHWARDEN_FILESERVER_SERVER_H_
#define PATHWARDEN_FILESERVER_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "pathwarden/result.h"

namespace pathwarden::fileserver {

// Options
//
// The command line: the backing directory and mount point (absolute,
// canonical), the policy files, whether the kernel does the Unix checks
// (-o default_permissions: pathwarden then decides only the policy
// layers), the FUSE mount options, a log of refusals.
struct Options {
  std::string backing;
  std::string mountpoint;
  std::vector<std::string> policies;
  bool default_permissions = false;
  bool allow_other = true;   // --no-allow-other: only the mounter's processes enter
  bool foreground = false;
  std::string fuse_options;  // as given to -o, joined by ','
  std::string log;           // "": none
};

// ParseOptions()
//
// pathwarden-fs [--policy F]... [--log FILE] [--no-allow-other] [-f]
// [-o OPTS] BACKING_DIR MOUNTPOINT. Errors: usage, a directory that does
// not exist.
Result<Options, std::string> ParseOptions(int argc, char** argv);

// Serve()
//
// Builds the model and the policy layers, mounts, and serves until
// unmounted; returns the exit status.
int Serve(const Options& o);

}  // namespace pathwarden::fileserver

#endif  // PATHWARDEN_FILESERVER_SERVER_H_
