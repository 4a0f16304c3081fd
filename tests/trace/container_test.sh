#!/usr/bin/env bash
# `pathwarden trace` of programs in mount namespaces of their own, held to
# the kernel with --enforce: a workload entering a container (an overlay
# root, pivot_root, its own mount namespace) under a policy written for
# the host's paths, a process that mounts a tmpfs or an overlay in a
# namespace it made, and mounts changed in the tracer's own namespace.
# Each namespace is read as a model of its own through a thread in it;
# the policy's rules are carried onto the objects they are on. Runs as
# root in a private mount namespace of its own; everything it makes is
# below a scratch directory, removed at the end.
set -euo pipefail
pw="$1"
. "$(dirname "$0")/../lib.sh"
require_root
in_private_mount_ns "$@"
command -v nsenter >/dev/null || skip "no nsenter"
scratch out
s="$out/s"
mkdir "$s"
mount -t tmpfs tmpfs "$s"
ctr=""
cov=""
# (The background processes hold no pipe of ours, and die with the test
# however it ends.)
cleanup() {
  if [ -n "$ctr" ]; then kill -9 "$ctr" 2>/dev/null || true; fi
  if [ -n "$cov" ]; then kill -9 "$cov" 2>/dev/null || true; fi
  umount -l "$s" 2>/dev/null || true
  rm -rf -- "$out"
}
trap cleanup EXIT
expect_also() {
  shift
  [[ "$last" =~ ,\ 0\ disagreements$ ]] || fail "$*: $last"
  note "$last"
}

# The container: an overlay of a lower layer (a directory /d, a
# writable /w with a file in it) and an empty upper, the host's programs
# bound in, pivoted onto, a procfs of its own, the old root gone.
mkdir -p "$s"/lower/{usr,bin,lib,lib64,etc,proc,d,w,old} "$s"/upper "$s"/work "$s"/merged
echo lower >"$s/lower/d/f"
echo lowerw >"$s/lower/w/g"
echo ctr >"$s/lower/etc/hostname"
mount -t overlay overlay -o "lowerdir=$s/lower,upperdir=$s/upper,workdir=$s/work" "$s/merged" ||
  skip "no overlayfs here"
unshare -m --propagation private /bin/sh -c "
  cd '$s/merged'
  for d in usr bin lib lib64; do [ -d /\$d ] && mount --rbind /\$d \$d; done
  pivot_root . old
  cd /
  mount -t proc proc /proc
  umount -l /old
  exec sleep 1000" </dev/null >/dev/null 2>&1 &
ctr=$!
disown "$ctr"
for _ in $(seq 50); do
  [ "$(readlink "/proc/$ctr/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] &&
    [ -e "/proc/$ctr/root/etc/hostname" ] && [ "$(cat "/proc/$ctr/comm")" = sleep ] && break
  sleep 0.1
done
[ "$(cat "/proc/$ctr/root/etc/hostname")" = ctr ] || fail "the container did not start"

# The policy names the host's paths: read and run everything below / and
# below the overlay, write below its /w. In the container the overlay is
# /: the rules reach it there (a rule on / itself does not: the walk
# stops at the container's root).
cat >"$out/policy.toml" <<EOF
[[ruleset]]
handled_access_fs = ["execute", "read_file", "read_dir", "write_file", "make_reg", "make_dir", "remove_file", "remove_dir", "truncate", "refer"]
[[path_beneath]]
allowed_access = ["execute", "read_file", "read_dir"]
parent = ["/", "$s/merged"]
[[path_beneath]]
allowed_access = ["read_file", "read_dir", "write_file", "make_reg", "make_dir", "remove_file", "remove_dir", "truncate", "refer"]
parent = ["$s/merged/w"]
EOF
# Under Landlock nsenter cannot open the container's /proc files itself
# (ptrace access to a process outside the domain): the namespace and the
# root are descriptors opened before.
workload='
cat /etc/hostname /d/f /w/g
echo new > /w/n; echo more >> /w/g; mv /w/n /w/n2; mkdir /w/sub; mv /w/n2 /w/sub/n3
rmdir /w/sub || true; rm /w/sub/n3; rmdir /w/sub; : > /w/g; rm /w/g
echo no > /d/new || true; echo no >> /d/f || true; rm /d/f || true; mkdir /d/x || true
echo back > /w/h; mv /w/h /d/h || true; ls / /w /d
true'
exec 3<"/proc/$ctr/ns/mnt" 4<"/proc/$ctr/root"
expect 0 "" "$pw" trace --enforce --policy "$out/policy.toml" --json -o "$out/ctr.json" -- \
  nsenter --mount=/proc/self/fd/3 --root=/proc/self/fd/4 --wd=/proc/self/fd/4 /bin/sh -c "$workload"
/usr/bin/python3 - "$out/ctr.json" <<'PY' || fail "container: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
inside = [r for r in recs if r["path"].startswith(("/w", "/d", "/etc/hostname"))]
assert len(inside) >= 25, inside
assert all(r["predicted"] != "unknown" for r in inside), [r for r in inside if r["predicted"] == "unknown"]
assert all(r.get("agrees", True) for r in recs), [r for r in recs if not r.get("agrees", True)]
unfollowed = [r for r in recs if "of its own" in (r.get("unknown_why") or "")]
assert not unfollowed, unfollowed
def one(op, path, want):
    d = [r for r in inside if r["op"] == op and r["path"] == path and r["predicted"] == want]
    assert d and d[0]["actual"] == want, (op, path, want, [r for r in inside if r["path"] == path])
    return d[0]
# The policy's refusals in the container, by its layer.
for op, path in [("open", "/d/new"), ("open", "/d/f"), ("unlink", "/d/f"), ("mkdir", "/d/x")]:
    assert one(op, path, "EACCES")["by"] == "policy", (op, path)
assert one("rename", "/w/h", "EACCES")["by"] == "policy"
# The overlay's own answers: the lower file read, an emptied directory.
one("open", "/d/f", "ok")
one("rmdir", "/w/sub", "ENOTEMPTY")
one("rmdir", "/w/sub", "ok")
PY

# A namespace whose mounts change: after the tmpfs mount the namespace is
# read again, and the file made on the new tmpfs is found there (uid
# 1000 cannot enter the 0700 directory made on it).
mkdir "$out/m"
expect 0 "" "$pw" trace --enforce --json -o "$out/mnt.json" -- unshare -m --propagation private /bin/sh -c "
  mount -t tmpfs none '$out/m'; mkdir -m 0700 '$out/m/d'; echo x > '$out/m/d/f'
  setpriv --reuid 1000 --regid 1000 --clear-groups cat '$out/m/d/f' 2>/dev/null; true"
/usr/bin/python3 - "$out/mnt.json" "$out/m/d/f" <<'PY' || fail "mount: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
d = [r for r in recs if r["path"] == sys.argv[2] and r["op"] == "open"]
assert len(d) == 2 and d[0]["predicted"] == "ok" and d[1]["predicted"] == "EACCES", d
assert d[1]["actual"] == "EACCES" and d[1]["by"] == "unix", d
PY
[ -z "$(ls "$out/m")" ] || fail "the namespace's tmpfs is seen outside it"

# Layers the namespace mounted over: the same absolute paths name other
# directories from the tracer (a tmpfs over them in the namespace only).
# Which ones the mounter meant is not shown: unknown, never the
# tracer's directories.
o3="$s/o3"
mkdir -p "$o3"/{l,u,w,m}
echo tracer >"$o3/l/f"
expect 0 "" "$pw" trace --enforce --json -o "$out/ovl3.json" -- unshare -m --propagation private /bin/sh -c "
  mount -t tmpfs none '$o3'; mkdir '$o3/l' '$o3/u' '$o3/w' '$o3/m'; echo ns > '$o3/l/g'
  mount -t overlay o -o 'lowerdir=$o3/l,upperdir=$o3/u,workdir=$o3/w' '$o3/m'
  cat '$o3/m/g' >/dev/null; cat '$o3/m/f' 2>/dev/null; true"
/usr/bin/python3 - "$out/ovl3.json" "$o3/m" <<'PY' || fail "overlay over mounted-over layers: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
on = [r for r in recs if r["path"].startswith(sys.argv[2] + "/")]
assert on and all(r["predicted"] == "unknown" and "names different directories" in r["unknown_why"]
                  for r in on), on
PY

# The tracer's own namespace, its mounts changed by the traced program:
# read again after the mount (a read-only tmpfs: EROFS) and after the
# unmount (the directory below again).
mkdir "$out/own"
expect 0 "" "$pw" trace --enforce --json -o "$out/own.json" -- /bin/sh -c "
  mount -t tmpfs -o ro none '$out/own'; touch '$out/own/x' 2>/dev/null
  umount '$out/own'; touch '$out/own/y'; rm '$out/own/y'"
/usr/bin/python3 - "$out/own.json" "$out/own" <<'PY' || fail "own namespace: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
at = lambda name: [r for r in recs if r["path"] == sys.argv[2] + name and r["op"] == "open"]
assert at("/x") and at("/x")[0]["predicted"] == "EROFS" and at("/x")[0]["actual"] == "EROFS", at("/x")
assert at("/y") and at("/y")[0]["predicted"] == "ok" and at("/y")[0]["actual"] == "ok", at("/y")
PY

# A program that mounts an overlay in a namespace of its own (absolute
# layers): the view read after the mount models it. A directory of the
# lower layer does not move (EXDEV, redirect_dir off: mv copies it
# instead), uid 1000 is refused a 0600 lower file, root writes (copy-up).
o="$s/o2"
mkdir -p "$o"/{l/d,u,w,m}
echo low >"$o/l/d/f"
chmod 600 "$o/l/d/f"
expect 0 "" "$pw" trace --enforce --json -o "$out/ovl.json" -- unshare -m --propagation private /bin/sh -c "
  mount -t overlay o -o 'lowerdir=$o/l,upperdir=$o/u,workdir=$o/w' '$o/m'
  echo x > '$o/m/new'; cat '$o/m/d/f' >/dev/null
  setpriv --reuid 1000 --regid 1000 --clear-groups cat '$o/m/d/f' 2>/dev/null
  mv '$o/m/d' '$o/m/e'; rm '$o/m/new'; true"
/usr/bin/python3 - "$out/ovl.json" "$o/m" <<'PY' || fail "overlay mount: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
m = sys.argv[2]
on = [r for r in recs if r["path"].startswith(m + "/")]
assert len(on) >= 15 and all(r["predicted"] != "unknown" for r in on), [r for r in on if r["predicted"] == "unknown"]
rename = [r for r in on if r["op"] == "rename" and r["path"] == m + "/d"]
assert rename and rename[0]["predicted"] == "EXDEV" == rename[0]["actual"], rename
denied = [r for r in on if r["op"] == "open" and r["predicted"] == "EACCES"]
assert len(denied) == 1 and denied[0]["actual"] == "EACCES" and denied[0]["by"] == "unix", denied
PY

# A command in a bubblewrap sandbox, as coding agents' sandboxes run
# one (a user namespace, a mount namespace pivoted onto a tmpfs, the host
# bound read-only, a writable directory, a tmpfs, a procfs and /dev of
# its own),
# by uid 1000: bwrap's own mounts are unknown (mounts made inside a user
# namespace are not modelled), the command's calls inside are predicted
# but for procfs and the descriptors it was given from outside, and
# agree: a read-only bind refuses with EROFS, the host's devices bound
# one by one are modelled.
if command -v bwrap >/dev/null && bwrap --ro-bind / / true 2>/dev/null; then
  b="$s/bw"
  mkdir -p "$b/rw"
  chmod 0755 "$out"  # for uid 1000 (the scratch is root's 0700)
  chmod 0777 "$b/rw"
  echo hi >"$b/rw/f"
  expect 0 "" "$pw" trace --enforce --json -o "$out/bw.json" -- setpriv --reuid 1000 --regid 1000 \
    --clear-groups bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind "$b/rw" "$b/rw" \
    --unshare-all --die-with-parent -- /bin/sh -c "
      cat '$b/rw/f'; echo x > '$b/rw/g'; mv '$b/rw/g' '$b/rw/h'; rm '$b/rw/h'
      echo y > /etc/nope 2>/dev/null; cat /etc/shadow 2>/dev/null
      ls /var/tmp; true"
  /usr/bin/python3 - "$out/bw.json" "$b" <<'PY' || fail "bubblewrap: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
b = sys.argv[2]
start = max(i for i, r in enumerate(recs) if r["op"] == "exec_check" and r["path"] == "/bin/sh")
inside = recs[start:]
# Unknown inside: procfs (not modelled), and calls on the descriptors
# brought in from outside the sandbox's tree (the test's stdout).
unknown = [r for r in inside if r["predicted"] == "unknown" and not r["path"].startswith("/proc/")
           and "outside its mount namespace's tree" not in r["unknown_why"]]
assert not unknown, unknown
assert len(inside) >= 40, len(inside)
def one(op, path, want):
    d = [r for r in inside if r["op"] == op and r["path"] == path]
    assert d and d[0]["predicted"] == want == d[0]["actual"], (op, path, want, d)
one("open", b + "/rw/f", "ok")
one("open", b + "/rw/g", "ok")
one("rename", b + "/rw/g", "ok")
one("unlink", b + "/rw/h", "ok")
one("open", "/etc/nope", "EROFS")
one("open", "/etc/shadow", "EACCES")
PY
else
  note "skipped the bubblewrap case: no usable bwrap"
fi

# A rule on a directory that the namespace mounts over: Landlock's walk
# from the mount's files goes from its root to where it is mounted and
# on up, skipping the covered directory itself, so the rule grants
# nothing there: EACCES, predicted. (I first expected the rule to hold;
# the kernel refused.)
mkdir -p "$s/cov/dir"
unshare -m --propagation private /bin/sh -c "mount -t tmpfs none '$s/cov/dir'; exec sleep 1000" \
  </dev/null >/dev/null 2>&1 &
cov=$!
disown "$cov"
for _ in $(seq 50); do grep -q " $s/cov/dir " "/proc/$cov/mountinfo" 2>/dev/null && break; sleep 0.1; done
cat >"$out/cov.toml" <<EOF
[[ruleset]]
handled_access_fs = ["read_file", "write_file", "make_reg"]
[[path_beneath]]
allowed_access = ["read_file"]
parent = ["/"]
[[path_beneath]]
allowed_access = ["read_file", "write_file", "make_reg"]
parent = ["$s/cov/dir"]
EOF
exec 5<"/proc/$cov/ns/mnt"
expect 0 "" "$pw" trace --enforce --json -o "$out/cov.json" --policy "$out/cov.toml" -- \
  nsenter --mount=/proc/self/fd/5 /bin/sh -c "echo x > '$s/cov/dir/f' 2>/dev/null; true"
exec 5<&-
kill -9 "$cov"
cov=""
/usr/bin/python3 - "$out/cov.json" "$s/cov/dir/f" <<'PY' || fail "covered rule: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
d = [r for r in recs if r["path"] == sys.argv[2] and r["op"] == "open"]
assert d and d[0]["actual"] == "EACCES" == d[0]["predicted"] and d[0]["by"] == "policy", d
PY

# Without a policy, what a policy would need: a rule on the tracer's path
# of what the container reads (its /etc/hostname is the overlay's); what
# the tracer reaches by no path (a tmpfs mounted inside the namespace
# only) gives no rule, and the report says how many calls.
# A directory the run makes gets no rule of its own (it will not exist
# when the policy is built): its needs go to its parent.
expect 0 "" "$pw" trace --colour never --learn "$out/learnt.toml" -- \
  nsenter --mount=/proc/self/fd/3 --root=/proc/self/fd/4 --wd=/proc/self/fd/4 /bin/sh -c \
  'cat /etc/hostname; mkdir /w/made; echo x > /w/made/f; ls /w/made; rm -r /w/made'
grep -q "\"$s/merged/etc/hostname\"\|\"$s/merged/etc\"" "$out/learnt.toml" ||
  fail "learnt: no rule on the overlay's /etc: $(cat "$out/learnt.toml")"
grep -q "\"$s/merged/w\"" "$out/learnt.toml" || fail "learnt: no rule on /w: $(cat "$out/learnt.toml")"
! grep -q "/w/made" "$out/learnt.toml" || fail "learnt: a rule on what the run made: $(cat "$out/learnt.toml")"
mkdir "$out/inside"
expect 0 "in mount namespaces of their own, on objects no path of this namespace reaches" \
  "$pw" trace --colour never -- unshare -m --propagation private /bin/sh -c "
    mount -t tmpfs none '$out/inside'; echo x > '$out/inside/f'"
note "ok"
