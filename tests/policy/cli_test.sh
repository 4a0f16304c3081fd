#!/usr/bin/env bash
# `pathwarden policy check|print`: exit statuses, messages on stderr, and
# printed policies that read back to the same policy.
set -euo pipefail
pw="$1"
here="$(cd "$(dirname "$0")" && pwd)"
. "$(dirname "$0")/../lib.sh"
scratch out

"$pw" policy check "$here/good.json" "$here/good.toml" "$here/dir" || fail "check of good policies"

set +e
"$pw" policy check "$here/good.json" "$here/bad/port.json" 2>"$out/err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "check of a bad policy: exit $rc, not 2"
grep -qF "$here/bad/port.json:2:57: /netPort/0/port/0: port 65536 is out of range [0, 65535]" "$out/err" \
  || fail "check: message: $(cat "$out/err")"

set +e
"$pw" policy print "$here/bad" 2>"$out/err" >"$out/stdout"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "print of a bad directory: exit $rc, not 2"
[ ! -s "$out/stdout" ] || fail "print of a bad policy printed something"

set +e
"$pw" policy check "$here/missing.json" 2>"$out/err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "check of a missing file: exit $rc, not 2"

# JSON and TOML of one policy print the same; each printed form reads back
# to itself.
"$pw" policy print --json "$here/good.json" >"$out/a.json"
"$pw" policy print --json "$here/good.toml" >"$out/b.json"
cmp -s "$out/a.json" "$out/b.json" || fail "good.json and good.toml differ"
"$pw" policy print --toml "$here/good.json" >"$out/a.toml"
"$pw" policy print --json "$out/a.toml" >"$out/c.json"
cmp -s "$out/a.json" "$out/c.json" || fail "--toml does not read back"
"$pw" policy print --json "$out/a.json" >"$out/d.json"
cmp -s "$out/a.json" "$out/d.json" || fail "--json does not read back"
grep -q '"parent": \[' "$out/a.json" || fail "no pathBeneath printed"
"$pw" policy print "$here/dir" >"$out/text"
grep -q '^abi 4$' "$out/text" || fail "directory: abi not the minimum: $(cat "$out/text")"
grep -q '^path /srv: write_file read_file' "$out/text" || fail "directory: $(cat "$out/text")"

set +e
"$pw" policy print --json --toml "$here/good.json" >/dev/null 2>&1; rc=$?
set -e
[ "$rc" -ne 0 ] || fail "--json with --toml accepted"
echo "cli_test: ok"
