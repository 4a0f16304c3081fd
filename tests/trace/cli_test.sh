#!/usr/bin/env bash
# `pathwarden trace` as users run it: the command's own exit status, 125
# for trace's own errors (bad policies, options) and for a disagreement,
# --enforce without layers comparing the Unix rules alone, 126/127 for a command that cannot be run, the
# last stderr line always the counts, denials reported with their layer
# and rule, JSON one object per evaluated call, --learn writing nothing
# after a failed run.
set -euo pipefail
pw="$1"
. "$(dirname "$0")/../lib.sh"
scratch out
# Whatever happened, the last line on stderr is the counts.
expect_also() {
  shift
  [[ "$last" =~ $counts ]] || fail "$*: the last stderr line is not the counts: $last"
}
counts='^trace: [0-9]+ calls evaluated, [0-9]+ denials predicted, [0-9]+ unknown, [0-9]+ consequences, [0-9]+ disagreements$'

# Own errors: 125, nothing run.
expect 125 "no command" "$pw" trace
printf 'abi = 99\n[[ruleset]]\nhandled_access_fs = ["frob"]\n' >"$out/bad.toml"
expect 125 'bad.toml:3:' "$pw" trace --policy "$out/bad.toml" -- /bin/true
expect 125 "" "$pw" trace --bogus -- /bin/true
expect 125 "$out/nodir/x.json: No such file" "$pw" trace -o "$out/nodir/x.json" -- /bin/true

# The command's own status; 127 and 126 as a shell gives them.
expect 0 "" "$pw" trace -- /bin/true
[[ "$last" =~ $counts ]] || fail "last line: $last"
expect 7 "" "$pw" trace -- /bin/sh -c 'exit 7'
[[ "$last" =~ $counts ]] || fail "last line after exit 7: $last"
# Global options before the command: "--" still ends trace's options.
expect 7 "" "$pw" --memory-budget 1000 trace -- /bin/sh -c 'exit 7'
expect 7 "" "$pw" --memory-budget=1000 trace --colour never -- /bin/sh -c 'exit 7'
expect 127 "command not found" "$pw" trace -- /nonexistent/pathwarden-cmd
[[ "$last" =~ $counts ]] || fail "last line after 127: $last"
printf 'not a program\n' >"$out/noexec"
chmod 644 "$out/noexec"
expect 126 "" "$pw" trace -- "$out/noexec"

# A denial predicted and explained: layer, rule source, blockers.
mkdir -p "$out/w"
cat >"$out/ro.toml" <<POL
[[ruleset]]
handled_access_fs = ["write_file", "make_reg"]
[[path_beneath]]
allowed_access = ["write_file", "make_reg"]
parent = ["$out/w", "/dev/null"]
POL
expect 0 "" "$pw" trace --colour never --policy "$out/ro.toml" -- /bin/sh -c "echo x > $out/w/ok; echo y > $out/denied 2>/dev/null; true"
case "$stderr" in *"$out/denied"*"EACCES by policy"*"ro.toml"*"fs.make_reg"*) ;; *) fail "denial report: $stderr" ;; esac
case "$stderr" in *"layer 1 would deny fs.make_reg 1 time under $out"*) ;; *) fail "summary: $stderr" ;; esac
[[ "$last" =~ ^trace:\ [0-9]+\ calls\ evaluated,\ 1\ denials\ predicted ]] || fail "counts: $last"
# Without --enforce the command ran unconfined: the file exists.
[ -e "$out/denied" ] || fail "without --enforce the command is not confined"
rm -f "$out/denied" "$out/w/ok"

# JSON: one object per line, the fields of the issue.
expect 0 "" "$pw" trace --json -o "$out/t.json" --policy "$out/ro.toml" -- /bin/sh -c "echo y > $out/denied; true"
/usr/bin/python3 - "$out/t.json" "$out/denied" <<'PY' || fail "--json records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs, "no records"
for r in recs:
    for k in ("pid", "call", "op", "path", "predicted", "reason", "by"):
        assert k in r, (k, r)
d = [r for r in recs if r["path"] == sys.argv[2] and r["op"] == "open"]
assert d and d[0]["predicted"] == "EACCES" and d[0]["by"] == "policy" and d[0]["layer"] == 1, d
assert d[0]["layers"][0]["blockers"] == ["fs.make_reg"], d
assert "actual" not in d[0]
PY
rm -f "$out/denied"

# --enforce: the kernel confines too, and agrees.
if [ "$(id -u)" -eq 0 ] && "$pw" run --hard --policy "$out/ro.toml" -- /bin/true 2>/dev/null; then
  expect 0 "" "$pw" trace --enforce --json -o "$out/e.json" --policy "$out/ro.toml" -- /bin/sh -c "echo y > $out/denied; echo z > $out/w/ok"
  [ ! -e "$out/denied" ] || fail "--enforce did not confine"
  [[ "$last" =~ ,\ 0\ disagreements$ ]] || fail "--enforce: $last"
  /usr/bin/python3 - "$out/e.json" "$out/denied" <<'PY' || fail "--enforce records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
d = [r for r in recs if r["path"] == sys.argv[2] and r["op"] == "open"]
assert d and d[0]["predicted"] == "EACCES" and d[0]["actual"] == "EACCES" and d[0]["agrees"], d
assert all(r["agrees"] for r in recs), [r for r in recs if not r["agrees"]]
PY
fi

# Calls on a descriptor whose open was predicted refused (trace does not
# enforce: the kernel opened it) are consequences of that denial, linked
# to it and counted apart from the unknown, not unknowns of their own.
echo x > "$out/c"
expect 0 "" "$pw" trace --json -o "$out/c.json" --policy "$out/ro.toml" -- /usr/bin/python3 -c \
  "import os; fd = os.open('$out/c', os.O_WRONLY); os.ftruncate(fd, 0); os.fchmod(fd, 0o644); os.close(fd); os.chmod('$out/c', 0o600); fd = os.open('$out/c', os.O_RDONLY); os.fchmod(fd, 0o644); os.close(fd)"
[[ "$last" =~ ,\ 0\ unknown,\ 2\ consequences,\ 0\ disagreements$ ]] || fail "consequences: $last"
/usr/bin/python3 - "$out/c.json" "$out/c" <<'PY' || fail "consequences: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
on = [r for r in recs if r["path"] == sys.argv[2]]
assert [(r["call"], r["predicted"]) for r in on] == [
    ("openat", "EACCES"), ("ftruncate", "consequence"), ("fchmod", "consequence"),
    ("chmod", "ok"), ("openat", "ok"), ("fchmod", "ok")], on
assert on[1]["consequence_of"].startswith("openat(%s) at " % sys.argv[2]), on[1]
assert on[1]["consequence_of"].endswith(", predicted EACCES by policy"), on[1]
assert "unknown_why" not in on[1] and on[1]["reason"].startswith("consequence: fd "), on[1]
PY

# Copies of such a descriptor (dup, dup2 onto another's number, fcntl's
# F_DUPFD_CLOEXEC), the original closed, are consequences too; a copy of
# another descriptor onto one's number replaces it.
expect 0 "" "$pw" trace --json -o "$out/d.json" --policy "$out/ro.toml" -- /usr/bin/python3 -c "
import fcntl, os
fd = os.open('$out/c', os.O_WRONLY)
a = os.dup(fd); os.close(fd); os.ftruncate(a, 0)
os.dup2(a, 9); os.fchmod(9, 0o644)
b = fcntl.fcntl(a, fcntl.F_DUPFD_CLOEXEC, 20); os.ftruncate(b, 0)
r = os.open('$out/c', os.O_RDONLY); os.dup2(r, 9); os.fchmod(9, 0o644)"
[[ "$last" =~ ,\ 0\ unknown,\ 3\ consequences,\ 0\ disagreements$ ]] || fail "copied consequences: $last"
/usr/bin/python3 - "$out/d.json" "$out/c" <<'PY' || fail "copied consequences: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
on = [(r["call"], r["predicted"]) for r in recs if r["path"] == sys.argv[2]]
assert on == [("openat", "EACCES"), ("ftruncate", "consequence"), ("fchmod", "consequence"),
              ("ftruncate", "consequence"), ("openat", "ok"), ("fchmod", "ok")], on
PY

# A process's own /proc/self/fd/N (thread-self, its own pid) links to
# descriptor N's file, which it may always follow: predicted as that
# file, with the kernel's answer (--enforce); a descriptor not open is
# ENOENT.
if [ "$(id -u)" = 0 ]; then
  expect 0 "" "$pw" trace --enforce --json -o "$out/fdlink.json" --policy "$out/ro.toml" -- /usr/bin/python3 -c "
import os
fd = os.open('$out/w', os.O_RDONLY | os.O_DIRECTORY)
os.stat('/proc/self/fd/%d' % fd)
os.open('/proc/thread-self/fd/%d/fdl' % fd, os.O_WRONLY | os.O_CREAT, 0o600)
c = os.open('$out/c', os.O_RDONLY)
try: os.open('/proc/%d/fd/%d' % (os.getpid(), c), os.O_WRONLY)
except PermissionError: pass
os.close(c)
try: os.stat('/proc/self/fd/%d' % c)
except FileNotFoundError: pass"
  [[ "$last" =~ ,\ 0\ unknown,\ 0\ consequences,\ 0\ disagreements$ ]] || fail "fd links: $last"
  /usr/bin/python3 - "$out/fdlink.json" "$out" <<'PY' || fail "fd links: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
o = sys.argv[2]
on = [(r["call"], r["path"].replace(o, "OUT"), r["predicted"], r["actual"]) for r in recs
      if r["call"] != "ioctl" and (r["path"].startswith(o) or "/fd/" in r["path"])]
# (The record names the file the link leads to.)
assert on[1:] == [("newfstatat", "OUT/w", "ok", "ok"), ("openat", "OUT/w/fdl", "ok", "ok"),
                  ("openat", "OUT/c", "ok", "ok"), ("openat", "OUT/c", "EACCES", "EACCES"),
                  ("newfstatat", on[-1][1], "ENOENT", "ENOENT")], on
assert on[-1][1].startswith("/proc/self/fd/"), on
PY
fi

# /dev/tty opens the caller's controlling terminal: in a session of its
# own (setsid) there is none, and the kernel's ENXIO is predicted.
if [ -c /dev/tty ]; then
  expect 0 "" setsid -w "$pw" trace --enforce --json -o "$out/tty.json" -- /usr/bin/python3 -c "
import os
try: os.open('/dev/tty', os.O_RDWR)
except OSError: pass"
  [[ "$last" =~ ,\ 0\ disagreements$ ]] || fail "/dev/tty: $last"
  /usr/bin/python3 - "$out/tty.json" <<'PY' || fail "/dev/tty: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
t = [r for r in recs if r["path"] == "/dev/tty"]
assert [(r["predicted"], r["actual"]) for r in t] == [("ENXIO", "ENXIO")], t
assert "no controlling terminal" not in t[0]["reason"] and "it has none" in t[0]["reason"], t
PY
  # ENXIO comes past Landlock's checks: --learn writes the rule for it,
  # and under the learnt policy the program still gets ENXIO, not EACCES.
  tty_prog="import os, sys
try: os.open('/dev/tty', os.O_RDWR)
except OSError as e: sys.exit(e.errno)"
  expect 6 "" setsid -w "$pw" trace --learn "$out/tty.toml" --keep-on-failure -- /usr/bin/python3 -c "$tty_prog"
  grep -q '^parent = \["/dev/tty"\]$' "$out/tty.toml" || fail "/dev/tty: no rule learnt: $(cat "$out/tty.toml")"
  run setsid -w "$pw" run --policy "$out/tty.toml" -- /usr/bin/python3 -c "$tty_prog"
  [ "$rc" -eq 6 ] || fail "/dev/tty under the learnt policy: exit $rc, not 6 (ENXIO): $stderr"
fi

# Run by an ordinary user (no CAP_SYS_ADMIN): the seccomp filter loads
# with no_new_privs (with --enforce the layers ask for it first), and the
# confined command is predicted and agrees.
# (libseccomp reported the kernel's EACCES as ECANCELED, so the retry
# never came: trace failed for every user but root.)
if [ "$(id -u)" -eq 0 ]; then
  modes=$(stat -c %a "$out" "$out/w")
  chmod 0755 "$out"
  chmod 0777 "$out/w"
  expect 0 "" setpriv --reuid 1000 --regid 1000 --clear-groups "$pw" trace -- /bin/true
  expect 0 "" setpriv --reuid 1000 --regid 1000 --clear-groups "$pw" trace --enforce --json \
    -o "$out/w/user.json" --policy "$out/ro.toml" -- /bin/sh -c "echo y > $out/denied; cat /etc/hostname >/dev/null"
  [[ "$last" =~ ,\ 0\ disagreements$ ]] || fail "trace by uid 1000: $last"
  /usr/bin/python3 - "$out/w/user.json" "$out/denied" <<'PY' || fail "trace by uid 1000: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
d = [r for r in recs if r["path"] == sys.argv[2] and r["op"] == "open"]
assert d and d[0]["predicted"] == "EACCES" == d[0]["actual"], d
PY
  # Which BPF LSM programs are attached takes CAP_SYS_ADMIN to read: where
  # the BPF LSM is active, uid 1000's allowed calls are unknown, naming
  # it, unless --trust-lsm bpf says none is (its denials stay either way).
  run "$pw" explain -v stat /
  if [[ "$stderr" == *"security module bpf: no LSM program attached"* ]]; then
    expect 0 "pathwarden trace: warning: security modules: bpf (LSM programs not known" \
      setpriv --reuid 1000 --regid 1000 --clear-groups "$pw" trace -- /bin/true
    /usr/bin/python3 - "$out/w/user.json" <<'PY' || fail "trace by uid 1000 under the BPF LSM: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
h = [r for r in recs if r["path"] == "/etc/hostname" and r["op"] == "open"]
assert h and h[0]["predicted"] == "unknown" and "bpf (LSM programs not known" in h[0]["unknown_why"], h
PY
    expect 0 "" setpriv --reuid 1000 --regid 1000 --clear-groups "$pw" trace --enforce --json \
      -o "$out/w/user.json" --trust-lsm bpf --policy "$out/ro.toml" -- /bin/sh -c "echo y > $out/denied; cat /etc/hostname >/dev/null"
    [[ "$last" =~ ,\ 0\ disagreements$ ]] || fail "trace by uid 1000, --trust-lsm bpf: $last"
    /usr/bin/python3 - "$out/w/user.json" "$out/denied" <<'PY' || fail "trace by uid 1000, --trust-lsm bpf: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
h = [r for r in recs if r["path"] == "/etc/hostname" and r["op"] == "open"]
assert h and h[0]["predicted"] == "ok" == h[0]["actual"], h
d = [r for r in recs if r["path"] == sys.argv[2] and r["op"] == "open"]
assert d and d[0]["predicted"] == "EACCES" == d[0]["actual"], d
PY
  fi
  expect 125 '--trust-lsm: "nosuch" is not a security module' "$pw" trace --trust-lsm nosuch -- /bin/true
  rm -f "$out/w/user.json"
  read -r m1 m2 <<<"$(echo $modes)"
  chmod "$m1" "$out"
  chmod "$m2" "$out/w"
fi

# --enforce without layers: the command runs unconfined, and every call is
# still predicted and compared with the kernel's answer (the Unix rules
# alone): here a read that uid 1000 is refused in a 0700 directory.
if [ "$(id -u)" -eq 0 ]; then
  echo secret >"$out/w/mine"
  expect 0 "" "$pw" trace --enforce --json -o "$out/u.json" -- /bin/sh -c "echo y > $out/w/unconfined; setpriv --reuid 1000 --regid 1000 --clear-groups cat $out/w/mine 2>/dev/null; true"
  [ -e "$out/w/unconfined" ] || fail "--enforce without layers confined the command"
  [[ "$last" =~ ,\ 0\ disagreements$ ]] || fail "--enforce without layers: $last"
  /usr/bin/python3 - "$out/u.json" "$out/w/mine" <<'PY' || fail "--enforce without layers: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs and all(r["agrees"] for r in recs), [r for r in recs if not r["agrees"]]
d = [r for r in recs if r["path"] == sys.argv[2] and r["op"] == "open"]
assert d and d[-1]["predicted"] == "EACCES" and d[-1]["actual"] == "EACCES" and d[-1]["by"] == "unix", d
PY
  rm -f "$out/w/unconfined" "$out/w/mine"
fi

# Namespaces: a process that enters a user namespace is followed (its
# credentials read again and the namespace's rules applied: after
# `unshare -r` uid 1000 is root inside, whose CAP_DAC_* do not apply to
# root's /etc/shadow); one that enters a mount namespace of its own is
# predicted on that namespace, read through the process (more in
# container_test.sh); the propagation change unshare makes is unknown,
# with why.
if [ "$(id -u)" -eq 0 ] && [ -e /etc/shadow ] && unshare -r true 2>/dev/null; then
  expect 0 "" "$pw" trace --enforce --json -o "$out/ns.json" -- setpriv --reuid 1000 --regid 1000 --clear-groups unshare -r /bin/sh -c 'cat /etc/shadow 2>/dev/null; true'
  [[ "$last" =~ ,\ 0\ disagreements$ ]] || fail "unshare -r: $last"
  /usr/bin/python3 - "$out/ns.json" <<'PY' || fail "unshare -r: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
d = [r for r in recs if r["path"] == "/etc/shadow" and r["op"] == "open"]
assert d and d[-1]["predicted"] == "EACCES" and d[-1]["actual"] == "EACCES", d
assert "user namespace" in d[-1]["reason"], d[-1]
PY
  # In a PID namespace of its own a process names others by that
  # namespace's pids: its child is pid 2 there, another process here
  # (before: the model asked about this machine's pid 2, and refused).
  expect 0 "" "$pw" trace --enforce --json -o "$out/pid.json" -- setpriv --reuid 1000 --regid 1000 \
    --clear-groups unshare -Upf --map-root-user /bin/sh -c 'sleep 5 & kill $!; kill -0 99 2>/dev/null; true'
  [[ "$last" =~ ,\ 0\ disagreements$ ]] || fail "PID namespace: $last"
  /usr/bin/python3 - "$out/pid.json" <<'PY' || fail "PID namespace: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
sig = [r for r in recs if r["call"] == "kill"]
assert len(sig) == 2, sig
assert sig[0]["predicted"] == "ok" == sig[0]["actual"], sig[0]
assert sig[1]["predicted"] == "unknown" and "is no traced process" in sig[1]["unknown_why"], sig[1]
PY
  expect 0 "" "$pw" trace --enforce --json -o "$out/mnt.json" -- unshare -m cat /etc/hostname
  /usr/bin/python3 - "$out/mnt.json" <<'PY' || fail "unshare -m: records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
d = [r for r in recs if r["path"] == "/etc/hostname" and r["op"] == "open"]
assert d and d[-1]["predicted"] == "ok" and d[-1]["actual"] == "ok", d
u = [r for r in recs if r["predicted"] == "unknown" and not r["path"].startswith("/proc/")]
assert len(u) == 1 and "is not modelled" in u[0]["unknown_why"], u
PY
fi

# No policy: the report says what one would need, as a policy file.
expect 0 "what a policy would need for this run" "$pw" trace --colour never -- /bin/sh -c "cat /etc/hostname >/dev/null; echo x > $out/w/need"
case "$stderr" in *'handled_access_fs = ["abi.all"]'*"$out/w"*) ;; *) fail "no-policy report: $stderr" ;; esac
rm -f "$out/w/need"

# --learn after a failed run writes nothing.
expect 3 "no policy written" "$pw" trace --learn "$out/l.toml" -- /bin/sh -c 'exit 3'
[ ! -e "$out/l.toml" ] || fail "--learn wrote after a failure"
expect 3 "wrote $out/l.toml" "$pw" trace --learn "$out/l.toml" --keep-on-failure -- /bin/sh -c 'exit 3'
"$pw" policy check "$out/l.toml" >/dev/null || fail "the learnt policy does not check"
echo "trace cli_test: ok"
