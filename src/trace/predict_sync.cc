// Keeping a traced thread's credentials, cwd and descriptors in step
// with the model's processes (predict_state.h).

#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include "pathwarden/errno.h"
#include "src/identity/identity.h"
#include "src/trace/host_paths.h"
#include "src/trace/predict_state.h"

namespace pathwarden::trace {

int PidfdOf(ProcState& ps, pid_t pid) {
  if (ps.pidfd < 0) ps.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return ps.pidfd;
}

Result<Node, int> LookupFresh(Model& m, Process p, const std::string& path, bool follow) {
  auto n = m.Lookup(path, follow);
  if (n) return n;
  if (!m.Revalidate(p, path)) return n;
  return m.Lookup(path, follow);
}

void TakeRefs(Predictor::State& st, ProcState& ps, pid_t pid, Process opener) {
  const int pidfd = PidfdOf(ps, pid);
  if (pidfd < 0) return;
  for (int fd = 0; fd < 4096; ++fd) {
    struct stat sb;
    if (!FdStat(pid, fd, &sb)) continue;
    bool known = false;
    for (const Ref& r : st.refs)
      known |= r.dev == sb.st_dev && r.ino == sb.st_ino &&
               syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, r.fd, fd) == 0;
    if (known) continue;
    const int ours = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
    if (ours >= 0) st.refs.push_back(Ref{ours, sb.st_dev, sb.st_ino, opener});
  }
}

Process OpenerOf(Predictor::State& st, ProcState& ps, pid_t tid, int fd, const struct stat& sb,
                 Process current) {
  for (const Ref& r : st.refs)
    if (r.dev == sb.st_dev && r.ino == sb.st_ino &&
        syscall(SYS_kcmp, getpid(), tid, KCMP_FILE, r.fd, fd) == 0)
      return r.opener;
  auto rec = ps.fds.find(fd);
  if (rec != ps.fds.end() && rec->second.dev == sb.st_dev && rec->second.ino == sb.st_ino)
    return rec->second.opener;
  return current;
}


}  // namespace pathwarden::trace
