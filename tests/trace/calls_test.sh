#!/usr/bin/env bash
# trace.calls: `pathwarden trace --enforce --json` on tests/trace/calls.c
# (every call trace models, from threads, forked children and dirfds)
# under several policies. For each policy:
#   - the summary (the last stderr line) says 0 unknown, 0 disagreements,
#     and its counts are the records';
#   - every record is well formed and its prediction is the kernel's
#     answer (predicted == actual), none unknown;
#   - each STEP the program reports (what the kernel told it, independent
#     of the tracer) has a record of that call with that answer;
#   - the program sees the same answers as under `pathwarden run` with
#     the same policy (the tracer confines like run does);
#   - a few answers known in advance (the policy really confines).
# A TCP listener, an abstract UNIX socket and a process outside the
# sandbox are a Python helper started here. Skipped (77) when not root or
# without Landlock. Usage: calls_test.sh PATHWARDEN CALLS
set -euo pipefail
name=trace.calls
pw="$1"
calls="$2"
. "$(dirname "$0")/lib.sh"
require_trace

# The peer outside: listens on a TCP port and an abstract socket, and finds
# a free port for calls to bind; writes "CPORT BPORT ABSTRACT" when ready.
/usr/bin/python3 - "$t/peer" <<'PY' &
import os, socket, sys, time
tcp = socket.socket(); tcp.bind(("127.0.0.1", 0)); tcp.listen(128)
free = socket.socket(); free.bind(("127.0.0.1", 0)); bport = free.getsockname()[1]; free.close()
name = "pathwarden-trace-peer-%d" % os.getpid()
ab = socket.socket(socket.AF_UNIX); ab.bind("\0" + name); ab.listen(128)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d %s\n" % (tcp.getsockname()[1], bport, name))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(3600)
PY
peer=$!
cleanup_hooks+=("kill $peer")
for _ in $(seq 100); do [ -e "$t/peer" ] && break; sleep 0.05; done
[ -e "$t/peer" ] || fail "the peer did not start"
read -r cport bport abstract <"$t/peer"
args=(-b "$bport" -c "$cport" -a "$abstract" -p "$peer")

mkdir "$t/pol"
# The rule every confining policy needs: calls itself.
self_rule() {
  printf '[[path_beneath]]\nallowed_access = ["execute", "read_file"]\nparent = ["%s"]\n\n' "$calls"
}

# rw-work: the system read-only, the work dir everything; no ioctl on
# devices (/dev/null without ioctl_dev, /dev/zero not at all).
rw_work() {
  printf 'abi = 6\n\n[[ruleset]]\nhandled_access_fs = ["abi.all"]\n\n'
  system_rules; echo; self_rule
  printf '[[path_beneath]]\nallowed_access = ["abi.all"]\nparent = ["%s"]\n' "$1"
}
# ro-work: the work dir only readable (its tree made beforehand); /dev/zero
# with its ioctls.
ro_work() {
  printf 'abi = 6\n\n[[ruleset]]\nhandled_access_fs = ["abi.all"]\n\n'
  system_rules; echo; self_rule
  printf '[[path_beneath]]\nallowed_access = ["read_file", "read_dir"]\nparent = ["%s"]\n\n' "$1"
  printf '[[path_beneath]]\nallowed_access = ["read_file", "write_file", "ioctl_dev"]\nparent = ["/dev/zero"]\n'
}
# no-exec-refer: everything in the work dir but execute and refer.
no_exec_refer() {
  printf 'abi = 6\n\n[[ruleset]]\nhandled_access_fs = ["abi.all"]\n\n'
  system_rules; echo; self_rule
  printf '[[path_beneath]]\nallowed_access = ["read_file", "read_dir", "write_file", "truncate", "remove_file", "remove_dir", "make_reg", "make_dir", "make_fifo", "make_sym", "make_sock", "make_char", "make_block"]\nparent = ["%s"]\n' "$1"
}
# net: only FIFOs and symlinks handled on the file system (none allowed;
# and, as in any ruleset handling the file system, refer: EXDEV);
# TCP bind only on another port than calls binds, connect only to the peer.
net() {
  printf '[[ruleset]]\nhandled_access_fs = ["make_fifo", "make_sym"]\nhandled_access_net = ["bind_tcp", "connect_tcp"]\n\n'
  printf '[[net_port]]\nallowed_access = ["bind_tcp"]\nport = [%d]\n\n' $((bport == 65535 ? 1025 : bport + 1))
  printf '[[net_port]]\nallowed_access = ["connect_tcp"]\nport = [%d]\n' "$cport"
}
# scoped: signals and abstract sockets only within the domain.
scoped() {
  printf '[[ruleset]]\nscoped = ["abstract_unix_socket", "signal"]\n'
}
# Two layers: rw-work with /dev/zero's ioctls and TCP to both
# ports, under a second that takes away removing files, refer, symlinks,
# device ioctls and signals out.
layer1() {
  rw_work "$1"; echo
  printf '[[path_beneath]]\nallowed_access = ["read_file", "write_file", "ioctl_dev"]\nparent = ["/dev/zero"]\n\n'
  printf '[[ruleset]]\nhandled_access_net = ["bind_tcp", "connect_tcp"]\n\n'
  printf '[[net_port]]\nallowed_access = ["bind_tcp", "connect_tcp"]\nport = [%d]\n\n' "$bport"
  printf '[[net_port]]\nallowed_access = ["connect_tcp"]\nport = [%d]\n' "$cport"
}
layer2() {
  printf '[[ruleset]]\nhandled_access_fs = ["execute", "read_file", "read_dir", "write_file", "truncate", "remove_file", "remove_dir", "make_reg", "make_dir", "make_fifo", "make_sym", "refer", "ioctl_dev"]\nscoped = ["signal"]\n\n'
  system_rules; echo; self_rule
  printf '[[path_beneath]]\nallowed_access = ["execute", "read_file", "read_dir", "write_file", "truncate", "remove_dir", "make_reg", "make_dir", "make_fifo"]\nparent = ["%s"]\n\n' "$1"
  printf '[[path_beneath]]\nallowed_access = ["read_file", "write_file"]\nparent = ["/dev/zero"]\n'
}

# A work dir: the seed file, and for ro-work the tree calls would make.
make_work() {
  local w="$1" kind="$2"
  rm -rf "$w"
  mkdir "$w"
  echo seed >"$w/seed"
  if [ "$kind" = ro-work ]; then
    mkdir "$w/a" "$w/b"
    echo data >"$w/a/f"
    printf '#!/bin/sh\nexit 0\n' >"$w/a/s.sh"
    chmod 755 "$w/a/s.sh"
  fi
}

# policies KIND W: the --policy arguments of KIND for work dir W.
policies() {
  local kind="$1" w="$2" p="$t/pol/$1-$(basename "$2")"
  case "$kind" in
    unconfined) return ;;
    two-layers)
      layer1 "$w" >"$p.1.toml"; layer2 "$w" >"$p.2.toml"
      echo "--policy $p.1.toml --policy $p.2.toml" ;;
    *)
      "${kind//-/_}" "$w" >"$p.toml"
      echo "--policy $p.toml" ;;
  esac
}

# steps FILE: the STEP lines without their numbers, "name result".
steps() { awk '$1 == "STEP" { print $3, $4 }' "$1"; }

# run_case KIND: calls under trace with the policies of KIND (stdout:
# $t/KIND.steps, records $t/KIND.jsonl, stderr $t/KIND.err, status
# $t/KIND.rc), and under run with the same policies in a second work dir
# ($t/KIND.run-steps).
run_case() {
  local kind="$1" w="$t/w-$1" wr="$t/w-$1-run" rc
  make_work "$w" "$kind"
  make_work "$wr" "$kind"
  local -a pt pr
  read -r -a pt <<<"$(policies "$kind" "$w")"
  # Without a policy there is nothing to enforce: the predictions alone,
  # held to what the program saw.
  local -a enforce=(--enforce)
  [ "${#pt[@]}" -gt 0 ] || enforce=()
  set +e
  # The work dir is this test's own: no process trace cannot see runs a
  # program from it.
  "$pw" trace "${enforce[@]}" --assume-unseen-run-nothing --json -o "$t/$kind.jsonl" "${pt[@]}" \
    -- "$calls" "$w" "${args[@]}" \
    >"$t/$kind.steps" 2>"$t/$kind.err"
  echo $? >"$t/$kind.rc"
  # Under run (unconfined: alone).
  read -r -a pr <<<"$(policies "$kind" "$wr")"
  local -a runner=("$pw" run --hard "${pr[@]}" --)
  [ "${#pr[@]}" -gt 0 ] || runner=()
  "${runner[@]}" "$calls" "$wr" "${args[@]}" >"$t/$kind.run-steps" 2>"$t/$kind.run-err"
  echo $? >"$t/$kind.run-rc"
  set -e
}

# program_checks KIND EXPECTED...: what the program saw under trace is
# what it saw under run, and includes EXPECTED ("name result" STEP
# outcomes the kernel must give under KIND).
program_checks() {
  local kind="$1" nsteps e
  shift
  name="trace.calls[$kind]"
  [ "$(cat "$t/$kind.run-rc")" -eq 0 ] || fail "run exit $(cat "$t/$kind.run-rc"): $(cat "$t/$kind.run-err")"
  nsteps="$(steps "$t/$kind.steps" | wc -l)"
  [ "$nsteps" -ge 50 ] || fail "only $nsteps STEP lines under trace: $(tail -n 5 "$t/$kind.err")"
  diff <(steps "$t/$kind.run-steps") <(steps "$t/$kind.steps") >"$t/$kind.diff" ||
    fail "the program saw other answers under trace than under run (< run, > trace):"$'\n'"$(cat "$t/$kind.diff")"
  for e in "$@"; do
    steps "$t/$kind.steps" | grep -qxF "$e" || fail "expected STEP '$e'; got: $(steps "$t/$kind.steps" | grep "^${e%% *} " || echo none)"
  done
  note "$nsteps steps, as under run, with the answers expected"
}

# trace_checks KIND: trace's own: its exit status, summary and records,
# and a record for every STEP.
trace_checks() {
  local kind="$1" rc summary n d missing
  name="trace.calls[$kind]"
  rc="$(cat "$t/$kind.rc")"
  echo "$kind: $(last_line "$t/$kind.err"); exit $rc" >>"$t/counts"
  [ "$rc" -eq 0 ] || fail "trace exit $rc: $(tail -n 20 "$t/$kind.err")"
  summary="$(check_summary "$t/$kind.err")"
  read -r n d <<<"$summary"
  if [ "$kind" != unconfined ]; then
    check_records "$t/$kind.jsonl" "$n" "$d"
  else
    check_predictions "$t/$kind.jsonl" "$n" "$d"
  fi

  # Every STEP has a record of its system call with the same answer (the
  # kernel's; without a policy the prediction, where a tty ioctl on
  # /dev/null is predicted ok: the driver's ENOTTY is not a check). As
  # many records as STEPs, at least: the loader and the shell make calls
  # of their own. bind of an abstract socket is no check.
  missing="$(steps "$t/$kind.steps" | grep -v '^bind:abstract' |
    jq -R -r --slurpfile recs "$t/$kind.jsonl" -n '
      [inputs | split(" ") | {call: (.[0] | split(":")[0]), step: .[0], result: .[1]}
       | if ($recs[0].actual == null and .call == "ioctl" and .result == "ENOTTY") then .result = "ok" else . end] as $steps
      | ($recs | group_by(.call + " " + (.actual // .predicted))
         | map({key: (.[0].call + " " + (.[0].actual // .[0].predicted)), value: length}) | from_entries) as $have
      | $steps | group_by(.call + " " + .result)[]
      | select(length > ($have[.[0].call + " " + .[0].result] // 0))
      | "\(length) STEP(s) \(map(.step) | join(",")) = \(.[0].result), \($have[.[0].call + " " + .[0].result] // 0) record(s) of \(.[0].call) = \(.[0].result)"')"
  [ -z "$missing" ] || fail "STEPs without their record:"$'\n'"$missing"
  note "$n calls evaluated, $d denials predicted, as the kernel answered"
}

# check_case KIND EXPECTED...: all of it, each part reported.
check_case() {
  local kind="$1"
  run_case "$kind"
  each "$kind" program_checks "$@"
  each "$kind/trace" trace_checks "$kind"
}

only_three_failures() {
  local n_fail
  n_fail="$(steps "$t/unconfined.steps" | grep -vc ' ok$' || true)"
  [ "$n_fail" -eq 3 ] || fail "unconfined: $n_fail failing steps, expected 3: $(steps "$t/unconfined.steps" | grep -v ' ok$')"
}
# Who refused, in the two-layer case: the second layer alone takes away
# symlinks and device ioctls.
by_layer_two() {
  local bad
  [ -e "$t/two-layers.jsonl" ] || fail "two-layers: no records"
  bad="$(jq -c 'select((.call == "symlink" or (.call == "ioctl" and .path == "/dev/zero"))
    and .actual == "EACCES" and (.by != "policy" or .layer != 2))' "$t/two-layers.jsonl")"
  [ -z "$bad" ] || fail "two-layers: denials not by layer 2:"$'\n'"$bad"
  [ "$(jq -s 'map(select(.call == "symlink" and .actual == "EACCES")) | length' "$t/two-layers.jsonl")" -ge 1 ] ||
    fail "two-layers: no symlink denial recorded"
}

# Unconfined (trace without --enforce, no policy: predictions only):
# everything works but three things no policy decides (the drivers'
# answer to a tty ioctl on /dev/null and /dev/zero, a script through a
# close-on-exec dirfd).
check_case unconfined "ioctl:null-TCGETS ENOTTY" "ioctl:zero-TCGETS ENOTTY" "execveat:script-rel-cloexec ENOENT" \
  "execve:script ok" "rename:a-f-to-b-g ok" "kill:outside ok" "connect:abstract-outside ok"
each unconfined-failures only_three_failures

check_case rw-work "mkdir:a ok" "openat:create ok" "rename:a-f-to-b-g ok" "execve:script ok" \
  "ioctl:null-FIOCLEX ok" "ioctl:null-TCGETS EACCES" "openat:zero EACCES" "bind:tcp ok" \
  "access:seed-w ok"
check_case ro-work "mkdir:a EEXIST" "openat:seed-rdonly ok" "open:seed-append EACCES" \
  "openat:create EACCES" "openat:trunc EACCES" "truncate:a-f EACCES" "ftruncate:rdwr EINVAL" \
  "rename:a-f-to-b-g EACCES" "mkdir:a-sub EACCES" "mknod:a-fifo EACCES" "symlink:b-sym EACCES" \
  "execve:script EACCES" "execve:bin-true ok" "access:seed-w ok" "ioctl:zero-TCGETS ENOTTY"
check_case no-exec-refer "openat:create ok" "truncate:a-f ok" "rename:a-f-to-b-g EXDEV" \
  "execve:bin-true ok" "execve:script EACCES" \
  "renameat2:noreplace EXDEV" "renameat:dir-within ok" "faccessat2:rel-x ok"
check_case net "mknod:a-fifo EACCES" "mknodat:rel-fifo EACCES" "symlink:b-sym EACCES" \
  "symlinkat:rel EACCES" "rename:a-f-to-b-g EXDEV" "renameat:dir-within ok" "bind:tcp EACCES" "connect:tcp-outside ok"
check_case scoped "kill:self ok" "kill:child ok" "kill:child-to-parent ok" "kill:outside EPERM" \
  "connect:abstract-self ok" "connect:abstract-child ok" "connect:abstract-outside EPERM" \
  "mkdir:a ok"
check_case two-layers "openat:create ok" "rename:a-f-to-b-g EACCES" "symlink:b-sym EACCES" \
  "unlinkat:thread EACCES" "ioctl:zero-TCGETS EACCES" "bind:tcp ok" "connect:tcp-own ok" \
  "connect:tcp-outside ok" "kill:outside EPERM" "connect:abstract-outside ok"
each two-layers-who by_layer_two
[ ! -e "$t/counts" ] || cat "$t/counts"
finish
note ok
