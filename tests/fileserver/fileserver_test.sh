#!/usr/bin/env bash
# pathwarden-fs against the kernel, as root in a private mount namespace
# (scratch tmpfs mounts, all unmounted on exit, also on failure):
#   ops PWFS            tests/fileserver/ops.py on a plain tmpfs, on
#                       pathwarden-fs and on pathwarden-fs -o
#                       default_permissions: pathwarden-fs differs from
#                       tmpfs exactly by divergences.txt (the checks the
#                       kernel makes in the VFS without asking the server),
#                       default_permissions not at all.
#   policy PWFS PW      a --policy on the server (and on the server under
#                       default_permissions) against `pathwarden map` of the
#                       backing directory under the same policy with its
#                       paths moved there (probe.py).
#   conformance PWFS CONF DIVERGENCES [REFUSED]
#                       pathwarden-conformance on tmpfs, on pathwarden-fs
#                       and on default_permissions: the FUSE log equals
#                       tmpfs's but for the lines of DIVERGENCES (the VFS's
#                       own checks) and REFUSED (what the server refuses
#                       because the model does not decide it), and fails
#                       no more checks than default_permissions but the
#                       DIVERGENCES.
# Exit 77 (skipped) when not root or without /dev/fuse and fusermount3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
# ops.py and probe.py import as_user.py: no __pycache__ in the source tree.
export PYTHONDONTWRITEBYTECODE=1
if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  echo "skipped: needs root, /dev/fuse and fusermount3" >&2
  exit 77
fi
if [ -z "${PATHWARDEN_FS_TEST_NS:-}" ]; then
  PATHWARDEN_FS_TEST_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
mode=$1
pwfs=$(realpath "$2")
scratch=$(mktemp -d /tmp/pathwarden-fs-test.XXXXXX)
chmod 0755 "$scratch"  # the users the tests act as walk through it
fuse_mounts=()
servers=()
cleanup() {
  set +e
  for m in "${fuse_mounts[@]}"; do fusermount3 -u "$m" 2>/dev/null || umount -l "$m"; done
  for p in "${servers[@]}"; do wait "$p" 2>/dev/null; done
  for m in "$scratch"/*; do mountpoint -q "$m" && umount -l "$m"; done
  [ -n "${KEEP:-}" ] || rm -rf "$scratch"
}
trap cleanup EXIT

# tmpfs NAME: a fresh tmpfs at $scratch/NAME.
tmpfs() { mkdir -p "$scratch/$1"; mount -t tmpfs -o mode=0755 pw-test "$scratch/$1"; }
# serve BACKING MOUNT [ARGS...]: pathwarden-fs in the foreground, waited
# for until mounted.
serve() {
  local b=$1 m=$2
  shift 2
  mkdir -p "$m"
  "$pwfs" -f --log "$scratch/$(basename "$m").log" "$@" "$b" "$m" &
  servers+=($!)
  fuse_mounts+=("$m")
  for _ in $(seq 100); do
    if mountpoint -q "$m"; then return 0; fi
    sleep 0.05
  done
  echo "pathwarden-fs did not mount $m" >&2
  exit 1
}
# stop: unmounts every server's mount and waits for it; fails (1) when a
# server did not exit 0 (a sanitizer's report, a crash).
stop() {
  local rc=0 i
  for i in "${!fuse_mounts[@]}"; do
    fusermount3 -u "${fuse_mounts[$i]}" || umount -l "${fuse_mounts[$i]}"
    if ! wait "${servers[$i]}"; then
      echo "FAIL: pathwarden-fs on ${fuse_mounts[$i]} did not exit 0" >&2
      rc=1
    fi
  done
  fuse_mounts=()
  servers=()
  return $rc
}
# differences A B: the lines that differ, paired "A-line  =>  B-line".
differences() {
  "$py" - "$1" "$2" <<'PY'
import sys
a = open(sys.argv[1]).read().splitlines()
b = open(sys.argv[2]).read().splitlines()
if len(a) != len(b):
    print("line counts differ: %d and %d" % (len(a), len(b)))
for x, y in zip(a, b):
    if x != y:
        print(" ".join(x.split()) + "  =>  " + " ".join(y.split()))
PY
}

# The protected_* sysctls, which the kernel's checks and the model's read:
# ctest runs these tests on the host's lock (fileserver/CMakeLists.txt),
# which every test that may change them holds, and a watcher checks that
# no run saw them change (a mode whose run did, runs again). It forks
# nothing while it watches: a loop of `cat` and `sleep` every 10 ms cost
# most of a core beside the server under test (docs/testing.md).
# read_sysctls: the four values, space-separated, into $sysctls_now.
read_sysctls() {
  local name value
  sysctls_now=
  for name in hardlinks symlinks regular fifos; do
    read -r value </proc/sys/fs/protected_$name
    sysctls_now+="$value "
  done
}
if [ -z "${PATHWARDEN_FS_TEST_TRY:-}" ]; then
  # ctest's lock orders only this ctest's tests; the kernel executor of
  # another pathwarden (another ctest, a fuzz run) sets the sysctls while
  # it holds /run/pathwarden/sysctl.lock (src/kernel/sysctl_guard.cc), as
  # conformance/tmpfs_test.sh does: this shell holds it for the runs
  # (which do not inherit it: a server left behind must not keep it), and
  # the watcher stays for anything that changes them without it.
  mkdir -p /run/pathwarden
  exec {sysctl_lock}>>/run/pathwarden/sysctl.lock
  flock "$sysctl_lock"
  for try in 1 2 3 4 5; do
    read_sysctls
    before=$sysctls_now
    changed="$scratch/sysctls-changed"
    rm -f "$changed"
    # The watcher naps on a FIFO nobody writes to: read -t is a builtin.
    mkfifo "$scratch/nap"
    ( exec {nap}<>"$scratch/nap"
      while :; do
        read_sysctls
        [ "$sysctls_now" = "$before" ] || { echo "$sysctls_now" >"$changed"; exit 0; }
        read -r -t 0.01 -u "$nap" _ || true
      done ) {sysctl_lock}>&- &
    watcher=$!
    set +e
    PATHWARDEN_FS_TEST_TRY=$try "$0" "$@" {sysctl_lock}>&-
    rc=$?
    set -e
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
    rm -f "$scratch/nap"
    [ -e "$changed" ] || exit $rc
    echo "the protected_* sysctls changed during the run ($before-> $(cat "$changed")): again" >&2
    sleep 2
  done
  echo "FAIL: the protected_* sysctls kept changing (another process changes them)" >&2
  exit 1
fi

# no_unknowns LOG: the server's log has no request refused as unknown.
no_unknowns() {
  if grep -q "^refused: .*unknown" "$1"; then
    echo "FAIL: the model could not decide some requests:" >&2
    grep "^refused: .*unknown" "$1" >&2
    return 1
  fi
}

case "$mode" in
  ops)
    tmpfs tmpfs
    tmpfs backing
    tmpfs backing-dp
    "$py" "$here/ops.py" "$scratch/tmpfs" >"$scratch/tmpfs.out"
    serve "$scratch/backing" "$scratch/fuse"
    "$py" "$here/ops.py" "$scratch/fuse" >"$scratch/fuse.out"
    serve "$scratch/backing-dp" "$scratch/fuse-dp" -o default_permissions
    "$py" "$here/ops.py" "$scratch/fuse-dp" >"$scratch/dp.out"
    differences "$scratch/tmpfs.out" "$scratch/fuse.out" >"$scratch/fuse.diff"
    differences "$scratch/tmpfs.out" "$scratch/dp.out" >"$scratch/dp.diff"
    echo "$(wc -l <"$scratch/tmpfs.out") operations; pathwarden-fs differs from tmpfs on" \
      "$(wc -l <"$scratch/fuse.diff"), default_permissions on $(wc -l <"$scratch/dp.diff")"
    status=0
    if ! diff -u "$here/divergences.txt" "$scratch/fuse.diff"; then
      echo "FAIL: pathwarden-fs differs from tmpfs by other than divergences.txt" >&2
      grep -v "does not exist" "$scratch/fuse.log" | tail -40 >&2 || true
      status=1
    fi
    # The kernel's own checks (default_permissions) make none of the
    # divergences, and pathwarden-fs no other difference.
    if [ -s "$scratch/dp.diff" ]; then
      echo "FAIL: default_permissions differs from tmpfs:" >&2
      cat "$scratch/dp.diff" >&2
      status=1
    fi
    no_unknowns "$scratch/fuse.log" || status=1
    stop || status=1
    exit $status
    ;;
  policy)
    pw=$(realpath "$3")
    tmpfs backing
    "$py" - "$scratch/backing" <<'PY'
import os, sys
d = sys.argv[1]
for name, mode in [("ro", 0o755), ("rw", 0o777), ("none", 0o755), ("ro/sub", 0o755)]:
    os.mkdir(os.path.join(d, name))
    os.chmod(os.path.join(d, name), mode)
for name, mode in [("ro/f", 0o644), ("ro/x", 0o755), ("ro/sub/g", 0o666), ("rw/f", 0o666),
                   ("rw/mine", 0o600), ("none/f", 0o666), ("top", 0o666)]:
    with open(os.path.join(d, name), "w") as f:
        f.write("data\n")
    os.chmod(os.path.join(d, name), mode)
os.chown(os.path.join(d, "rw/mine"), 1000, 1000)
PY
    policy() {  # policy ROOT: rules on ROOT's subtrees
      cat <<TOML
abi = 7
[[ruleset]]
handled_access_fs = ["abi.all"]
[[path_beneath]]
allowed_access = ["abi.read_execute"]
parent = ["$1/ro"]
[[path_beneath]]
allowed_access = ["abi.read_write"]
parent = ["$1/rw"]
[[path_beneath]]
allowed_access = ["read_dir"]
parent = ["$1"]
TOML
    }
    policy "$scratch/backing" >"$scratch/backing.toml"
    status=0
    # The same policy on the server, then on the server under
    # default_permissions (the kernel's Unix checks, the model's layers).
    for variant in fuse fuse-dp; do
      mnt="$scratch/$variant"
      mkdir -p "$mnt"
      policy "$mnt" >"$scratch/$variant.toml"
      if [ "$variant" = fuse ]; then
        serve "$scratch/backing" "$mnt" --policy "$scratch/$variant.toml"
      else
        serve "$scratch/backing" "$mnt" --policy "$scratch/$variant.toml" -o default_permissions
      fi
      for who in "1000 1000 1000,2000" "1001 1001 " "0 0 "; do
        read -r uid gid groups <<<"$who"
        # The backing tree is this test's own: no process map cannot see
        # runs a program from it.
        "$pw" map "$scratch/backing" --policy "$scratch/backing.toml" --json --uid "$uid" \
          --gid "$gid" --groups "${groups:-none}" --assume-unseen-run-nothing \
          >"$scratch/map.$uid.json"
        if ! "$py" "$here/probe.py" "$scratch/backing" "$mnt" "$uid" "$gid" "$groups" \
            <"$scratch/map.$uid.json" >"$scratch/probe.$variant.$uid.out"; then
          echo "FAIL: $variant, uid $uid: what the mount allows is not what map says:" >&2
          grep -v "	ok$" "$scratch/probe.$variant.$uid.out" >&2
          status=1
        fi
        echo "$variant, uid $uid: $(tail -1 "$scratch/probe.$variant.$uid.out")"
      done
    done
    stop || status=1
    exit $status
    ;;
  conformance)
    conf=$(realpath "$3")
    divergences=$4
    refused=${5:-/dev/null}
    tmpfs tmpfs
    tmpfs backing
    tmpfs backing-dp
    set +e
    "$conf" --log "$scratch/tmpfs.log" "$scratch/tmpfs" >/dev/null
    serve "$scratch/backing" "$scratch/fuse"
    "$conf" --log "$scratch/fuse.clog" "$scratch/fuse" >/dev/null
    serve "$scratch/backing-dp" "$scratch/fuse-dp" -o default_permissions
    "$conf" --log "$scratch/dp.clog" "$scratch/fuse-dp" >/dev/null
    set -e
    fails() { grep -c "	FAIL	" "$1" || true; }
    echo "conformance: $(wc -l <"$scratch/tmpfs.log") checks; FAIL on tmpfs $(fails "$scratch/tmpfs.log")," \
      "pathwarden-fs $(fails "$scratch/fuse.clog"), default_permissions $(fails "$scratch/dp.clog")"
    differences "$scratch/tmpfs.log" "$scratch/fuse.clog" >"$scratch/fuse.diff"
    status=0
    if ! diff -u <(sort "$divergences" "$refused") <(sort "$scratch/fuse.diff"); then
      echo "FAIL: pathwarden-fs differs from tmpfs by other than $divergences and $refused" >&2
      status=1
    fi
    if [ "$(fails "$scratch/fuse.clog")" -gt \
         $(( $(fails "$scratch/dp.clog") + $(wc -l <"$divergences") )) ]; then
      echo "FAIL: pathwarden-fs fails more checks than default_permissions, the divergences aside" >&2
      status=1
    fi
    no_unknowns "$scratch/fuse.log" || status=1
    stop || status=1
    exit $status
    ;;
  *)
    echo "usage: $0 ops|policy|conformance PWFS ..." >&2
    exit 2
    ;;
esac
