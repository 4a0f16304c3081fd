#!/usr/bin/env bash
# trace.learn: `trace --learn OUT.toml` (no policy) on a shell job that
# makes a directory in its work dir and creates, appends to and renames
# files there, reads its input (a directory beside the work dir) and files
# under /usr and /etc. The learnt policy must be
# valid (policy check), must let the same job on the same input succeed
# under `run --hard` with the same results, and must deny what the job
# never did: removing its input, making a symlink, writing its input,
# creating a file in the input directory, writing outside the work dir —
# each by the kernel (run) and by explain. Skipped (77) when not root or
# without Landlock. Usage: learn_test.sh PATHWARDEN CALLS
set -euo pipefail
name=trace.learn
pw="$1"
. "$(dirname "$0")/lib.sh"
require_trace

# The input is not beneath the work dir: rules for what the job creates
# in directories it makes itself can only be on the work dir (a rule
# needs an existing path), and there they would cover the input too.
w="$t/w"
in="$t/in"
mkdir -p "$w" "$in" "$t/other"
echo seed >"$in/seed.txt"
echo more >"$in/more.txt"
echo untouched >"$t/other/file"
cat >"$t/job.sh" <<'EOF'
set -e
w="$1"
in="$2"
mkdir -p "$w/out"
head -n 1 /usr/include/stdio.h >/dev/null
echo data >"$w/out/new.txt"
cat "$in/seed.txt" >>"$w/out/new.txt"
mv "$w/out/new.txt" "$w/out/final.txt"
wc -l </etc/passwd >"$w/out/count"
ls "$in" >"$w/out/list"
EOF
expected_final=$'data\nseed'
check_outputs() {
  [ "$(cat "$w/out/final.txt")" = "$expected_final" ] || fail "$1: out/final.txt is $(cat "$w/out/final.txt")"
  [ "$(cat "$w/out/list")" = $'more.txt\nseed.txt' ] || fail "$1: out/list is $(cat "$w/out/list")"
  [ -s "$w/out/count" ] || fail "$1: no out/count"
  [ ! -e "$w/out/new.txt" ] || fail "$1: out/new.txt still there"
}

set +e
"$pw" trace --learn "$t/learnt.toml" -- /bin/sh "$t/job.sh" "$w" "$in" >"$t/learn.out" 2>"$t/learn.err"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "trace --learn exit $rc: $(tail -n 20 "$t/learn.err")"
# (Unknown predictions do not matter here: what is learnt comes from the
# calls that succeeded.)
read -r n d u c k <<<"$(summary_counts "$t/learn.err")"
note "the job: $n calls evaluated, $d denials predicted, $u unknown"
check_outputs "the traced job"
[ -s "$t/learnt.toml" ] || fail "no learnt policy"
"$pw" policy check "$t/learnt.toml" >/dev/null 2>"$t/check.err" || fail "the learnt policy is invalid: $(cat "$t/check.err")"

# The same job on the same input, confined by what was learnt.
rm -r "$w/out"
"$pw" run --hard --policy "$t/learnt.toml" -- /bin/sh "$t/job.sh" "$w" "$in" >"$t/rerun.out" 2>"$t/rerun.err" ||
  fail "the job under the learnt policy: exit $?: $(cat "$t/rerun.err")"$'\n'"policy:"$'\n'"$(cat "$t/learnt.toml")"
check_outputs "the job under the learnt policy"
note "the job runs under the learnt policy"

# denied WHAT SCRIPT: sh -c SCRIPT under the learnt policy fails with a
# denial (not run's own 125/126/127), and nothing changed.
denied() {
  local what="$1" script="$2" rc
  set +e
  "$pw" run --hard --policy "$t/learnt.toml" -- /bin/sh -c "$script" >"$t/denied.out" 2>"$t/denied.err"
  rc=$?
  set -e
  [ "$rc" -ne 0 ] && [ "$rc" -lt 125 ] || fail "$what: exit $rc under the learnt policy (wanted a denial): $(cat "$t/denied.err")"
  grep -q 'Permission denied\|Operation not permitted\|Invalid cross-device link' "$t/denied.err" ||
    fail "$what: not a denial: $(cat "$t/denied.err")"
}
denied "removing the input" "rm -f '$in/seed.txt'"
[ -e "$in/seed.txt" ] || fail "removing the input: it is gone"
denied "a symlink in the output" "ln -s final.txt '$w/out/sym'"
[ ! -L "$w/out/sym" ] || fail "a symlink in the output: it exists"
denied "writing the input" "echo x >>'$in/seed.txt'"
[ "$(cat "$in/seed.txt")" = seed ] || fail "writing the input: it changed"
denied "a new file in the input directory" "echo x >'$in/new.txt'"
[ ! -e "$in/new.txt" ] || fail "a new file in the input directory: it exists"
denied "writing outside the work dir" "echo x >>'$t/other/file'"
denied "a new file outside the work dir" "echo x >'$t/other/new'"
[ "$(cat "$t/other/file")" = untouched ] && [ ! -e "$t/other/new" ] || fail "writing outside the work dir: it changed"

# explain agrees that they are denied by the policy (EACCES), and that
# what the job did is allowed.
cat >"$t/queries" <<EOF
unlink $in/seed.txt
symlink $w/out/sym final.txt
open $in/seed.txt O_WRONLY|O_APPEND
open $in/new.txt O_WRONLY|O_CREAT
open $t/other/file O_WRONLY
open $in/seed.txt
open $w/out/count O_WRONLY
open /usr/include/stdio.h
EOF
"$pw" explain --policy "$t/learnt.toml" --batch "$t/queries" --format result >"$t/answers" 2>"$t/explain.err" ||
  [ $? -eq 1 ] || fail "explain: $(cat "$t/explain.err")"
[ "$(tr '\n' ' ' <"$t/answers")" = "EACCES EACCES EACCES EACCES EACCES ok ok ok " ] ||
  fail "explain under the learnt policy: $(paste "$t/queries" "$t/answers")"
note "ok: what the job did is allowed, five things it did not are denied"
