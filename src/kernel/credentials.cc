// Credentials taken through the raw system calls, which (unlike glibc's
// wrappers) change only the calling thread. Linux: kernel/sys.c

#include "src/kernel/credentials.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace pathwarden::kernel_internal {
namespace {

int Fail(const char* call, int err, const char** failed_call) {
  *failed_call = call;
  return err;
}

// setfsuid() and setfsgid() report no error: the id they leave in place
// (asked for with -1, which changes nothing) tells.
bool SetFsId(long nr, uint32_t id) {
  syscall(nr, id);
  return static_cast<uint32_t>(syscall(nr, static_cast<uint32_t>(-1))) == id;
}

}  // namespace

int SetCaps(uint64_t effective, uint64_t permitted) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  data[0].effective = static_cast<uint32_t>(effective);
  data[1].effective = static_cast<uint32_t>(effective >> 32);
  data[0].permitted = static_cast<uint32_t>(permitted);
  data[1].permitted = static_cast<uint32_t>(permitted >> 32);
  return static_cast<int>(syscall(SYS_capset, &header, data));
}

int TakeCred(const Cred& cred, const char** failed_call, bool set_groups) {
  std::vector<gid_t> groups(cred.groups().begin(), cred.groups().end());
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return Fail("PR_SET_KEEPCAPS", errno, failed_call);
  if (set_groups && syscall(SYS_setgroups, groups.size(), groups.data()) != 0)
    return Fail("setgroups", errno, failed_call);
  if (syscall(SYS_setresgid, cred.rgid, cred.egid, cred.sgid) != 0)
    return Fail("setresgid", errno, failed_call);
  if (syscall(SYS_setresuid, cred.ruid, cred.euid, cred.suid) != 0)
    return Fail("setresuid", errno, failed_call);
  // KEEPCAPS kept the permitted set; an fs id other than the new real,
  // effective or saved one needs CAP_SETUID / CAP_SETGID in effect.
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct now[2] = {};
  if (syscall(SYS_capget, &header, now) != 0) return Fail("capget", errno, failed_call);
  const uint64_t permitted = now[0].permitted | (uint64_t{now[1].permitted} << 32);
  if (SetCaps(permitted, permitted) != 0) return Fail("capset", errno, failed_call);
  if (!SetFsId(SYS_setfsgid, cred.fsgid)) return Fail("setfsgid", EPERM, failed_call);
  if (!SetFsId(SYS_setfsuid, cred.fsuid)) return Fail("setfsuid", EPERM, failed_call);
  if (SetCaps(cred.cap_effective, cred.cap_permitted) != 0)
    return Fail("capset", errno, failed_call);
  return 0;
}

}  // namespace pathwarden::kernel_internal
