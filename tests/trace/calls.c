// A scripted sequence of the calls `pathwarden trace` models, for its
// tests (tests/trace/trace_test.sh): each call is made once, as a raw
// system call where the name matters, and reported on stdout as
//
//   STEP <n> <syscall>:<what> ok | STEP <n> <syscall>:<what> <ERRNONAME>
//
// so that a test can compare the tracer's records with what the program
// itself saw. A failure never stops the sequence (under a policy, denials
// are the point); a step whose object an earlier failure left missing
// still runs and reports the kernel's answer (ENOENT, ...). Steps run in
// order: those of the threads and the forked children are waited for
// before the next, so the numbers are the same in every run.
//
// Usage: calls WORKDIR [-b BIND_PORT] [-c CONNECT_PORT] [-a ABSTRACT_NAME]
//                      [-p PEER_PID]
//   WORKDIR         an existing directory holding a readable file `seed`;
//                   everything else is created under it
//   -b BIND_PORT    bind and listen on 127.0.0.1:BIND_PORT, connect to it
//                   when the bind worked
//   -c CONNECT_PORT connect to 127.0.0.1:CONNECT_PORT (someone listens)
//   -a NAME         connect to the abstract UNIX socket @NAME (someone
//                   outside listens)
//   -p PEER_PID     kill(PEER_PID, 0): a process outside
// Exit status 0 when every step was reported, 2 on a usage error.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

static const struct {
  int num;
  const char* name;
} kErrnoNames[] = {
    {EPERM, "EPERM"},         {ENOENT, "ENOENT"},     {ESRCH, "ESRCH"},
    {EINTR, "EINTR"},         {EIO, "EIO"},           {ENXIO, "ENXIO"},
    {E2BIG, "E2BIG"},         {ENOEXEC, "ENOEXEC"},   {EBADF, "EBADF"},
    {ECHILD, "ECHILD"},       {EAGAIN, "EAGAIN"},     {ENOMEM, "ENOMEM"},
    {EACCES, "EACCES"},       {EFAULT, "EFAULT"},     {EBUSY, "EBUSY"},
    {EEXIST, "EEXIST"},       {EXDEV, "EXDEV"},       {ENODEV, "ENODEV"},
    {ENOTDIR, "ENOTDIR"},     {EISDIR, "EISDIR"},     {EINVAL, "EINVAL"},
    {ENFILE, "ENFILE"},       {EMFILE, "EMFILE"},     {ENOTTY, "ENOTTY"},
    {ETXTBSY, "ETXTBSY"},     {EFBIG, "EFBIG"},       {ENOSPC, "ENOSPC"},
    {ESPIPE, "ESPIPE"},       {EROFS, "EROFS"},       {EMLINK, "EMLINK"},
    {EPIPE, "EPIPE"},         {ENAMETOOLONG, "ENAMETOOLONG"},
    {ENOSYS, "ENOSYS"},       {ENOTEMPTY, "ENOTEMPTY"}, {ELOOP, "ELOOP"},
    {ENOTSOCK, "ENOTSOCK"},   {EADDRINUSE, "EADDRINUSE"},
    {EADDRNOTAVAIL, "EADDRNOTAVAIL"}, {ECONNREFUSED, "ECONNREFUSED"},
    {EOPNOTSUPP, "EOPNOTSUPP"}, {ETIMEDOUT, "ETIMEDOUT"},
};

static const char* ErrnoName(int e) {
  static char other[32];
  for (size_t i = 0; i < sizeof kErrnoNames / sizeof kErrnoNames[0]; i++) {
    if (kErrnoNames[i].num == e) return kErrnoNames[i].name;
  }
  snprintf(other, sizeof other, "E%d", e);
  return other;
}

// The step counter, shared with the forked children (MAP_SHARED).
static atomic_int* g_step;

static const char* g_work;

// Report(): one STEP line for a call that returned `rc` (-1: errno says
// why), in one write(2) so that processes and threads never interleave.
// Returns rc.
static long Report(const char* name, long rc) {
  const int saved = errno;
  const int n = atomic_fetch_add(g_step, 1) + 1;
  char line[256];
  const int len = snprintf(line, sizeof line, "STEP %d %s %s\n", n, name,
                           rc < 0 ? ErrnoName(saved) : "ok");
  if (write(STDOUT_FILENO, line, (size_t)len) != len) _exit(3);
  errno = saved;
  return rc;
}

// Reports a step whose outcome is an errno (0 for success) found without
// a failing call of this process (an exec in a child).
static void ReportErrno(const char* name, int err) {
  errno = err;
  Report(name, err ? -1 : 0);
}

// W(): WORKDIR/rel, in one of a few static buffers.
static const char* W(const char* rel) {
  static char bufs[8][4096];
  static int next;
  char* b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "%s/%s", g_work, rel);
  return b;
}

static void CloseIf(int fd) {
  if (fd >= 0) close(fd);
}

// Exec(): forks a child that runs fn(arg) (an exec call) with the write
// end of a close-on-exec pipe; an errno written there is the exec's
// failure, end of file without one its success. Waits for the child.
static void Exec(const char* name, long (*fn)(const void*), const void* arg) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    perror("pipe2");
    exit(3);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    fn(arg);
    const int e = errno;
    if (write(p[1], &e, sizeof e) != (ssize_t)sizeof e) _exit(3);
    _exit(127);
  }
  close(p[1]);
  int e = 0;
  if (read(p[0], &e, sizeof e) != (ssize_t)sizeof e) e = 0;
  close(p[0]);
  int status;
  waitpid(pid, &status, 0);
  ReportErrno(name, e);
}

static char* const kNoArgs[] = {"calls-exec", NULL};
static char* const kNoEnv[] = {"PATH=/usr/bin:/bin", NULL};

static long ExecvePath(const void* path) {
  return syscall(SYS_execve, (const char*)path, kNoArgs, kNoEnv);
}

struct AtPath {
  int dirfd;
  const char* name;
};

static long ExecveatPath(const void* arg) {
  const struct AtPath* a = arg;
  return syscall(SYS_execveat, a->dirfd, a->name, kNoArgs, kNoEnv, 0);
}

// The steps of the threads: each gets a dirfd and does its calls relative
// to it.
struct ThreadArg {
  int dirfd;
  int which;
};

static void* ThreadSteps(void* p) {
  const struct ThreadArg* a = p;
  struct stat st;
  if (a->which == 0) {
    const int fd = (int)Report("openat:thread-create",
                               syscall(SYS_openat, a->dirfd, "t0", O_WRONLY | O_CREAT | O_EXCL, 0644));
    CloseIf(fd);
    Report("newfstatat:thread", syscall(SYS_newfstatat, a->dirfd, "t0", &st, 0));
    Report("unlinkat:thread", syscall(SYS_unlinkat, a->dirfd, "t0", 0));
  } else {
    Report("mkdirat:thread", syscall(SYS_mkdirat, a->dirfd, "td", 0755));
    Report("faccessat2:thread", syscall(SYS_faccessat2, a->dirfd, "td", W_OK, AT_EACCESS));
    Report("unlinkat:thread-rmdir", syscall(SYS_unlinkat, a->dirfd, "td", AT_REMOVEDIR));
  }
  return NULL;
}

// AbstractAddress(): @name as a sockaddr_un; returns its length.
static socklen_t AbstractAddress(struct sockaddr_un* a, const char* name) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  const size_t n = strnlen(name, sizeof a->sun_path - 2);
  memcpy(a->sun_path + 1, name, n);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static long ConnectAbstract(const char* name, const char* abstract) {
  struct sockaddr_un a;
  const socklen_t len = AbstractAddress(&a, abstract);
  const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    perror("socket");
    exit(3);
  }
  const long rc = Report(name, syscall(SYS_connect, s, &a, len));
  close(s);
  return rc;
}

static struct sockaddr_in Loopback(int port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

static long ConnectTcp(const char* name, int port) {
  const struct sockaddr_in a = Loopback(port);
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    perror("socket");
    exit(3);
  }
  const long rc = Report(name, syscall(SYS_connect, s, &a, sizeof a));
  close(s);
  return rc;
}

int main(int argc, char** argv) {
  int bind_port = 0, connect_port = 0;
  const char* abstract = NULL;
  pid_t peer = 0;
  int opt;
  while ((opt = getopt(argc, argv, "b:c:a:p:")) != -1) {
    switch (opt) {
      case 'b': bind_port = atoi(optarg); break;
      case 'c': connect_port = atoi(optarg); break;
      case 'a': abstract = optarg; break;
      case 'p': peer = (pid_t)atoi(optarg); break;
      default:
        fprintf(stderr, "usage: calls WORKDIR [-b PORT] [-c PORT] [-a NAME] [-p PID]\n");
        return 2;
    }
  }
  if (optind + 1 != argc || argv[optind][0] != '/') {
    fprintf(stderr, "usage: calls WORKDIR (absolute) [-b PORT] [-c PORT] [-a NAME] [-p PID]\n");
    return 2;
  }
  g_work = argv[optind];
  g_step = mmap(NULL, sizeof *g_step, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (g_step == MAP_FAILED) {
    perror("mmap");
    return 3;
  }
  atomic_init(g_step, 0);
  struct stat st;
  char buf[256];

  // Directories, opens for reading, appending, creating, read-write.
  Report("mkdir:a", syscall(SYS_mkdir, W("a"), 0755));
  Report("mkdir:b", syscall(SYS_mkdir, W("b"), 0755));
  const int seed = (int)Report("openat:seed-rdonly", syscall(SYS_openat, AT_FDCWD, W("seed"), O_RDONLY));
  CloseIf((int)Report("open:seed-append", syscall(SYS_open, W("seed"), O_WRONLY | O_APPEND)));
  int fd = (int)Report("openat:create", syscall(SYS_openat, AT_FDCWD, W("a/f"),
                                                 O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd >= 0 && write(fd, "hello world\n", 12) != 12) perror("write");
  CloseIf(fd);
  CloseIf((int)Report("creat:a-new", syscall(SYS_creat, W("a/new"), 0600)));
  const int rw = (int)Report("openat:rdwr", syscall(SYS_openat, AT_FDCWD, W("a/f"), O_RDWR));
  CloseIf((int)Report("openat:trunc", syscall(SYS_openat, AT_FDCWD, W("seed"), O_WRONLY | O_TRUNC)));
  Report("stat:a-f", syscall(SYS_stat, W("a/f"), &st));
  Report("lstat:a", syscall(SYS_lstat, W("a"), &st));
  Report("access:seed-w", syscall(SYS_access, W("seed"), W_OK));

  // Truncation by path and through the read-write descriptor (or, when
  // that open failed, the seed's read-only one: EINVAL).
  Report("truncate:a-f", syscall(SYS_truncate, W("a/f"), 5));
  Report("ftruncate:rdwr", syscall(SYS_ftruncate, rw >= 0 ? rw : seed, 2));
  CloseIf(rw);

  // Rename across directories, link, unlink, mkdir/rmdir, a FIFO, a
  // symlink and its body, chmod and chown.
  Report("rename:a-f-to-b-g", syscall(SYS_rename, W("a/f"), W("b/g")));
  // b/g from here on, whether the rename worked or not.
  CloseIf((int)Report("openat:b-g", syscall(SYS_openat, AT_FDCWD, W("b/g"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644)));
  Report("link:b-g-to-a-h", syscall(SYS_link, W("b/g"), W("a/h")));
  Report("unlink:a-h", syscall(SYS_unlink, W("a/h")));
  Report("mkdir:a-sub", syscall(SYS_mkdir, W("a/sub"), 0700));
  Report("rmdir:a-sub", syscall(SYS_rmdir, W("a/sub")));
  Report("mknod:a-fifo", syscall(SYS_mknod, W("a/fifo"), S_IFIFO | 0600, 0));
  Report("symlink:b-sym", syscall(SYS_symlink, "g", W("b/sym")));
  Report("readlink:b-sym", syscall(SYS_readlink, W("b/sym"), buf, sizeof buf));
  Report("chmod:b-g", syscall(SYS_chmod, W("b/g"), 0640));
  Report("chown:b-g", syscall(SYS_chown, W("b/g"), 0, 0));

  // A #! script, then execs: /bin/true by path, the script, and /bin/true
  // again through execveat.
  fd = (int)Report("openat:script", syscall(SYS_openat, AT_FDCWD, W("a/s.sh"),
                                            O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755));
  if (fd >= 0 && write(fd, "#!/bin/sh\nexit 0\n", 17) != 17) perror("write");
  CloseIf(fd);
  Report("chmod:script", syscall(SYS_chmod, W("a/s.sh"), 0755));
  Exec("execve:bin-true", ExecvePath, "/bin/true");
  Exec("execve:script", ExecvePath, W("a/s.sh"));

  // Relative to directory descriptors: a, b and WORKDIR itself.
  const int da = (int)Report("openat:dir-a", syscall(SYS_openat, AT_FDCWD, W("a"), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const int db = (int)Report("openat:dir-b", syscall(SYS_openat, AT_FDCWD, W("b"), O_PATH | O_DIRECTORY | O_CLOEXEC));
  CloseIf((int)Report("openat:rel-create", syscall(SYS_openat, da, "r", O_RDWR | O_CREAT | O_CLOEXEC, 0644)));
  Report("mkdirat:rel", syscall(SYS_mkdirat, da, "rd", 0755));
  Report("renameat2:noreplace", syscall(SYS_renameat2, da, "r", db, "r2", RENAME_NOREPLACE));
  CloseIf((int)Report("openat:rel-r2", syscall(SYS_openat, db, "r2", O_WRONLY | O_CREAT | O_CLOEXEC, 0644)));
  Report("renameat:dir-within", syscall(SYS_renameat, da, "rd", da, "rd2"));
  Report("renameat2:exchange", syscall(SYS_renameat2, db, "r2", db, "g", RENAME_EXCHANGE));
  Report("linkat:rel", syscall(SYS_linkat, db, "g", da, "l", 0));
  Report("symlinkat:rel", syscall(SYS_symlinkat, "../b/g", da, "sl"));
  Report("readlinkat:rel", syscall(SYS_readlinkat, da, "sl", buf, sizeof buf));
  Report("mknodat:rel-fifo", syscall(SYS_mknodat, da, "ff", S_IFIFO | 0600, 0));
  Report("fchmodat:rel", syscall(SYS_fchmodat, db, "g", 0600));
  Report("fchownat:rel", syscall(SYS_fchownat, db, "g", 0, 0, AT_SYMLINK_NOFOLLOW));
  Report("newfstatat:rel", syscall(SYS_newfstatat, da, "sl", &st, 0));
  Report("faccessat2:rel-x", syscall(SYS_faccessat2, da, "s.sh", X_OK, AT_EACCESS));
  Report("unlinkat:rel", syscall(SYS_unlinkat, da, "l", 0));
  Report("unlinkat:rel-rmdir", syscall(SYS_unlinkat, da, "rd2", AT_REMOVEDIR));
  {
    const struct AtPath t = {AT_FDCWD, "/bin/true"};
    Exec("execveat:bin-true", ExecveatPath, &t);
    // A script through a close-on-exec directory descriptor: the kernel
    // would hand the interpreter /dev/fd/N/s.sh, which the exec closes, so
    // binfmt_script answers ENOENT (execveat(2)). (Through a descriptor
    // that survives, the interpreter opens /dev/fd/N/s.sh: procfs, which
    // the model leaves unknown by design, so this program does not.)
    const struct AtPath c = {da, "s.sh"};
    Exec("execveat:script-rel-cloexec", ExecveatPath, &c);
  }

  // The working directory: chdir, a relative open, fchdir, back.
  const int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  Report("chdir:a", syscall(SYS_chdir, W("a")));
  CloseIf((int)Report("open:cwd-rel", syscall(SYS_open, "cwd-file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644)));
  Report("fchdir:b", syscall(SYS_fchdir, db));
  Report("stat:cwd-rel", syscall(SYS_stat, "g", &st));
  if (fchdir(here) != 0) perror("fchdir back");
  CloseIf(here);

  // Two threads, one after the other.
  for (int i = 0; i < 2; i++) {
    struct ThreadArg a = {i == 0 ? da : db, i};
    pthread_t t;
    if (pthread_create(&t, NULL, ThreadSteps, &a) != 0) {
      perror("pthread_create");
      return 3;
    }
    pthread_join(t, NULL);
  }

  // ioctl: FIOCLEX on /dev/null (always allowed), TCGETS on /dev/null (a
  // device ioctl: Landlock's ioctl_dev, then the driver's ENOTTY), and
  // TCGETS on /dev/zero, which the policies treat apart. (Not a
  // pseudo-terminal: the pty driver's own open is not modelled, so its
  // open would be unknown.)
  const int null = (int)Report("openat:dev-null", syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC));
  if (null >= 0) {
    struct termios tio;
    Report("ioctl:null-FIOCLEX", syscall(SYS_ioctl, null, FIOCLEX));
    Report("ioctl:null-TCGETS", syscall(SYS_ioctl, null, TCGETS, &tio));
    close(null);
  }
  const int zero = (int)Report("openat:zero", syscall(SYS_openat, AT_FDCWD, "/dev/zero", O_RDWR | O_CLOEXEC));
  if (zero >= 0) {
    struct termios tio;
    Report("ioctl:zero-TCGETS", syscall(SYS_ioctl, zero, TCGETS, &tio));
    close(zero);
  }

  // TCP on loopback: bind and listen, connect to it when the bind
  // worked; connect to a listener outside.
  if (bind_port > 0) {
    const struct sockaddr_in a = Loopback(bind_port);
    const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (Report("bind:tcp", syscall(SYS_bind, s, &a, sizeof a)) == 0 && listen(s, 4) == 0) {
      ConnectTcp("connect:tcp-own", bind_port);
    }
    close(s);
  }
  if (connect_port > 0) ConnectTcp("connect:tcp-outside", connect_port);

  // Abstract UNIX sockets: one this process listens on, one a forked
  // child listens on, one outside (-a).
  {
    char name[108];
    struct sockaddr_un a;
    snprintf(name, sizeof name, "pathwarden-calls-%d-self", (int)getpid());
    const socklen_t len = AbstractAddress(&a, name);
    const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (Report("bind:abstract-self", syscall(SYS_bind, s, &a, len)) == 0 && listen(s, 4) == 0) {
      ConnectAbstract("connect:abstract-self", name);
    }
    close(s);
  }
  {
    char name[108];
    int ready[2], done[2];
    snprintf(name, sizeof name, "pathwarden-calls-%d-child", (int)getpid());
    if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0) {
      perror("pipe2");
      return 3;
    }
    const pid_t child = fork();
    if (child == 0) {
      struct sockaddr_un a;
      const socklen_t len = AbstractAddress(&a, name);
      const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      char ok = Report("bind:abstract-child", syscall(SYS_bind, s, &a, len)) == 0 && listen(s, 4) == 0;
      if (write(ready[1], &ok, 1) != 1) _exit(3);
      if (read(done[0], &ok, 1) < 0) _exit(3);
      _exit(0);
    }
    char ok = 0;
    if (read(ready[0], &ok, 1) != 1) ok = 0;
    if (ok) ConnectAbstract("connect:abstract-child", name);
    if (write(done[1], &ok, 1) != 1) perror("write");
    waitpid(child, NULL, 0);
    close(ready[0]);
    close(ready[1]);
    close(done[0]);
    close(done[1]);
  }
  if (abstract) ConnectAbstract("connect:abstract-outside", abstract);

  // Signals (0): to itself, to a forked child waiting on a pipe, to a
  // process outside (-p); and a forked child's own calls: it signals its
  // parent, removes and renames in the work directory, and execs.
  Report("kill:self", syscall(SYS_kill, getpid(), 0));
  Report("tgkill:self", syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), 0));
  {
    int hold[2];
    if (pipe2(hold, O_CLOEXEC) != 0) {
      perror("pipe2");
      return 3;
    }
    const pid_t child = fork();
    if (child == 0) {
      char c;
      close(hold[1]);
      if (read(hold[0], &c, 1) < 0) _exit(3);
      _exit(0);
    }
    close(hold[0]);
    Report("kill:child", syscall(SYS_kill, child, 0));
    close(hold[1]);
    waitpid(child, NULL, 0);
  }
  if (peer > 0) Report("kill:outside", syscall(SYS_kill, peer, 0));
  {
    const pid_t child = fork();
    if (child == 0) {
      Report("kill:child-to-parent", syscall(SYS_kill, getppid(), 0));
      Report("unlink:child-a-new", syscall(SYS_unlink, W("a/new")));
      Report("rename:child-b-sym-to-a", syscall(SYS_rename, W("b/sym"), W("a/sym")));
      Report("unlink:child-a-fifo", syscall(SYS_unlink, W("a/fifo")));
      Exec("execve:child-bin-true", ExecvePath, "/bin/true");
      _exit(0);
    }
    waitpid(child, NULL, 0);
  }

  CloseIf(da);
  CloseIf(db);
  CloseIf(seed);
  return 0;
}
