// The credentials of a FUSE request's caller: /proc/TID/status.

#ifndef PATHWARDEN_FILESERVER_PROC_CRED_H_
#define PATHWARDEN_FILESERVER_PROC_CRED_H_

#include <sys/types.h>

#include <string>

#include "pathwarden/cred.h"
#include "pathwarden/result.h"

namespace pathwarden::fileserver {

// ReadCred()
//
// The credentials of task `tid` from /proc/TID/status -- the four uids
// and gids, the groups, the effective and permitted capabilities, the
// umask: what identity::ReadCred() reads -- parsed in place with no
// allocation but the groups': the server reads them for every request
// (a thread may change its groups or capabilities between two), and
// this read is most of what a request costs it. And the task's user
// namespace (Cred::userns): one readlink() of /proc/TID/ns/user for the
// initial one, the maps read anew for any other. Errors: unreadable, or a
// line missing.
Result<Cred, std::string> ReadCred(pid_t tid);

}  // namespace pathwarden::fileserver

#endif  // PATHWARDEN_FILESERVER_PROC_CRED_H_
