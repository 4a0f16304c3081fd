#!/usr/bin/env bash
# Chains of mkdir + chdir steps, 4,000, 8,000 and 16,000 deep: check
# --quiet must use memory in proportion to the steps, not to the steps
# times the depth (every step's reason used to name the whole path: 1.6 GB
# at 20,000 deep, and 131 s). From 8,000 to 16,000 the memory may grow at
# most 3 times what it grew from 4,000 to 8,000: twice is linear, four
# times is a path kept per step. Then the same with --cross-check, 2,500,
# 5,000 and 10,000 deep (past 2,048 levels a path of "/d"s is longer than
# PATH_MAX): every variant's reasons are kept and compared, and each names
# its path, cut to its last 4,096 bytes past that (it grew with the depth:
# 10,000 levels took 454 s), and World::Verify() is not run after every
# step once the world is large.
#
# Usage: deep_chain_test.sh PATHWARDEN
set -euo pipefail
pw=$1
# Under ASan the resident set is mostly its quarantine (freed memory held
# back to catch a use after free: 1.1 GB already at 2,500 levels with
# --cross-check, and filling unevenly), not what pathwarden keeps; with the
# quarantine off the same runs measure 104, 207 and 409 MB. A build
# without ASan ignores the variable.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
. "$(dirname "$0")/../lib.sh"
scratch dir

chain() {  # chain N FILE
  {
    echo 'format = 1'
    for ((i = 0; i < $1; i++)); do
      printf '[[step]]\nop = "mkdir"\npath = "d"\nexpect = "ok"\n[[step]]\nop = "chdir"\npath = "d"\nexpect = "ok"\n'
    done
    # One failing step at the bottom: its reason is printed, path and all.
    printf '[[step]]\nop = "rmdir"\npath = "."\nexpect = "ok"\n'
  } > "$2"
}

rss() {  # rss N [OPTION]: the maximum resident set (KB) of check --quiet on a chain
  chain "$1" "$dir/chain$1.toml"
  local status=0
  /usr/bin/time -f '%M' -o "$dir/rss$1" "$pw" check --quiet ${2:-} "$dir/chain$1.toml" \
    > "$dir/out$1" 2>&1 || status=$?
  # The last step fails (rmdir "." is EINVAL): exit 1, its reason shown.
  if [ "$status" -ne 1 ] || ! grep -q "FAIL .*rmdir" "$dir/out$1"; then
    echo "deep_chain: the $1-deep chain: exit $status" >&2
    cat "$dir/out$1" >&2
    exit 1
  fi
  grep -q "$((2 * $1 + 1)) steps, $((2 * $1)) passed, 1 failed" "$dir/out$1" || {
    echo "deep_chain: the $1-deep chain: unexpected summary" >&2
    cat "$dir/out$1" >&2
    exit 1
  }
  tail -n 1 "$dir/rss$1"  # after time's own "Command exited with ..."
}

r4=$(rss 4000)
r8=$(rss 8000)
r16=$(rss 16000)
echo "deep_chain: maximum resident set 4,000 deep ${r4} KB, 8,000 ${r8} KB, 16,000 ${r16} KB"
if [ $((r16 - r8)) -gt $((3 * (r8 - r4))) ]; then
  echo "deep_chain: memory grows faster than the steps" \
    "(+$((r16 - r8)) KB for the last 8,000 levels, +$((r8 - r4)) KB for the 4,000 before)" >&2
  exit 1
fi

c2=$(rss 2500 --cross-check)
c5=$(rss 5000 --cross-check)
c10=$(rss 10000 --cross-check)
echo "deep_chain: --cross-check, maximum resident set 2,500 deep ${c2} KB, 5,000 ${c5} KB, 10,000 ${c10} KB"
if [ $((c10 - c5)) -gt $((3 * (c5 - c2))) ]; then
  echo "deep_chain: --cross-check: memory grows faster than the steps" \
    "(+$((c10 - c5)) KB for the last 5,000 levels, +$((c5 - c2)) KB for the 2,500 before)" >&2
  exit 1
fi
