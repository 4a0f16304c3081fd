// Test code that must run in a process of its own (a private mount
// namespace, changed credentials), with its outcome brought back as text.

#ifndef PATHWARDEN_SRC_KERNEL_CHILD_TEST_UTIL_H_
#define PATHWARDEN_SRC_KERNEL_CHILD_TEST_UTIL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

namespace pathwarden::kernel_testing {

// InForkedChild()
//
// Runs `body` in a forked child and returns the text it returned, or why
// there is none ("child: signal 6").
inline std::string InForkedChild(const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    close(fds[0]);
    std::string out = body();
    for (size_t at = 0; at < out.size();) {
      ssize_t n = write(fds[1], out.data() + at, out.size() - at);
      if (n <= 0) _exit(1);
      at += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return out + "child: signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return out + "child: exit " + std::to_string(WEXITSTATUS(status));
  return out;
}

}  // namespace pathwarden::kernel_testing

#endif  // PATHWARDEN_SRC_KERNEL_CHILD_TEST_UTIL_H_
