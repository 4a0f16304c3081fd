#!/usr/bin/env bash
# `explain --pid` of a chrooted process (a build chroot, `chroot DIR`):
# its mount table leaves out the mount its root is on (the mounts inside
# its root name that one as their parent), and /proc names its cwd from
# the namespace's root. The model is rooted at its root, its relative
# paths start at its cwd inside it, and --verify's child, in the same
# root, agrees on every query. Root, in a private mount namespace.
set -euo pipefail
pw="$1"
. "$(dirname "$0")/../lib.sh"
require_root
in_private_mount_ns "$@"
scratch out
c="$out/root"
mkdir -p "$c"/{usr,bin,lib,lib64,etc,sub}
for d in usr bin lib lib64; do [ -d "/$d" ] && mount --bind "/$d" "$c/$d"; done
echo secret >"$c/sub/secret"
chmod 600 "$c/sub/secret"
echo ctr >"$c/etc/hostname"
chroot "$c" /bin/sh -c 'cd /sub && exec sleep 1000' </dev/null >/dev/null 2>&1 &
pid=$!
disown "$pid"
trap 'kill -9 $pid 2>/dev/null; umount -R "$c"/{usr,bin,lib,lib64} 2>/dev/null || true; rm -rf -- "$out"' EXIT
for _ in $(seq 50); do [ "$(readlink "/proc/$pid/root")" = "$c" ] && [ "$(readlink "/proc/$pid/cwd")" = "$c/sub" ] && break; sleep 0.1; done
[ "$(readlink "/proc/$pid/cwd")" = "$c/sub" ] || fail "the chrooted process did not start"

run "$pw" explain --pid "$pid" --uid 1000 --verify --batch - <<'EOF'
open secret
stat secret
open /sub/secret O_WRONLY
open /etc/hostname
exec_check /bin/sh
open /usr/bin/sh
stat ../etc
mkdir /sub/new
EOF
[ "$rc" -eq 0 ] || fail "explain --pid: exit $rc: $stderr"
n=$(grep -c '\[kernel agrees\]' <<<"$stdout" || true)
[ "$n" -eq 7 ] || fail "explain --pid: $n of 7 agree: $stdout"
grep -q '^open secret: EACCES .*/sub/secret' <<<"$stdout" || fail "relative to the cwd inside the root: $stdout"
grep -q '^mkdir /sub/new: EACCES' <<<"$stdout" || fail "mkdir: $stdout"
note "ok"
