#!/usr/bin/env bash
# `pathwarden selftest` as users run it: as root (with Landlock) the
# report names each probed rule with the call it made, runs every suite
# the binary carries on both executors and a fuzz batch, and exits 0
# when all agree; the JSON form has the same parts and agrees with the
# text; as an unprivileged user the rules are still probed (a memfd needs
# no privilege) and the rest is "not run", exit 3; bad flags exit 2.
# Usage: selftest_test.sh PATHWARDEN
set -euo pipefail
bin=$(realpath "$1")
. "$(dirname "$0")/../lib.sh"
require_root
rc=0
out=$("$bin" selftest --fuzz-cases 100 --colour never 2>/dev/null) || rc=$?
if [ "$rc" -eq 77 ] || [[ $out == *"not run"* ]]; then
  echo "selftest_test: no kernel executor here: skipped" >&2
  exit 77
fi
[ "$rc" -eq 0 ] || fail "selftest exited $rc:
$out"
grep -q '^kernel: Linux ' <<<"$out" || fail "no kernel line: $out"
grep -Eq '^  empty_file_caps +(stored|refused) +setxattr\(\) of an empty security\.capability$' <<<"$out" ||
  fail "no empty_file_caps rule: $out"
grep -q 'fsetxattr(memfd, "security.capability", "", 0, 0): ' <<<"$out" || fail "no observed call: $out"
grep -Eq '^Suites .*: ([0-9]+) files, [0-9]+ run, ([0-9]+) steps, \2 agreeing$' <<<"$out" ||
  fail "the suites line does not say every step agrees: $out"
files=$(sed -n 's/^Suites .*: \([0-9]*\) files.*/\1/p' <<<"$out")
[ "$files" -ge 40 ] || fail "only $files suite files carried"
# The file written for the other value of the rule is skipped, saying so.
value=$(sed -n 's/^  empty_file_caps *\([a-z]*\) .*/\1/p' <<<"$out")
other=stored; [ "$value" = stored ] && other=refused
grep -q "SKIP tests/scenarios/xattr/empty_caps_$other.toml: written for \[kernel\] empty_file_caps = \"$other\"" <<<"$out" ||
  fail "empty_caps_$other.toml not skipped with the reason: $out"
grep -Eq '^Fuzz \(seed [0-9]+\): [0-9]+ random scenarios, [0-9]+ steps, 0 differences$' <<<"$out" ||
  fail "no clean fuzz line: $out"
grep -q '^selftest: this kernel answers as the engine models it' <<<"$out" || fail "no verdict: $out"

json=$("$bin" selftest --fuzz-cases 20 --json)
jq -e --arg v "$value" '.exit == 0 and .rules[0].key == "empty_file_caps" and .rules[0].value == $v
  and .rules[0].mainline == "stored" and (.rules[0].observed | test("^fsetxattr"))
  and .suites.steps == .suites.steps_agreeing and .suites.steps > 1000
  and (.suites.differences | length) == 0 and .fuzz.cases == 20 and .kernel_unavailable == ""' \
  <<<"$json" >/dev/null || fail "JSON: $json"

# Unprivileged: the probe, and nothing it cannot run.
rc=0
out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$bin" selftest --colour never 2>/dev/null) || rc=$?
[ "$rc" -eq 3 ] || fail "unprivileged selftest exited $rc, not 3: $out"
grep -Eq "^  empty_file_caps +$value " <<<"$out" || fail "unprivileged probe differs: $out"
grep -q '^Suites and fuzz: not run: not root' <<<"$out" || fail "unprivileged: $out"
grep -q '^selftest: not everything could be checked' <<<"$out" || fail "unprivileged verdict: $out"

rc=0
"$bin" selftest --fuzz-cases x >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "a bad --fuzz-cases exited $rc, not 2"
echo "selftest_test: passed"
