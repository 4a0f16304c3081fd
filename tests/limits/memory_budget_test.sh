#!/usr/bin/env bash
# --memory-budget: a run that needs more stops with one message and exit 2
# (never std::bad_alloc, an abort or the OOM killer); one that fits is not
# disturbed. Under ASan or TSan no limit is set (their shadow memory is
# terabytes of data), so only the flag's parsing is checked there.
#
# Usage: memory_budget_test.sh PATHWARDEN SANITIZERS
set -euo pipefail
pw=$1
sanitized=${2:-}
. "$(dirname "$0")/../lib.sh"
scratch dir

chain() {  # chain N FILE: N mkdir + chdir steps
  {
    echo 'format = 1'
    for ((i = 0; i < $1; i++)); do
      printf '[[step]]\nop = "mkdir"\npath = "d"\nexpect = "ok"\n[[step]]\nop = "chdir"\npath = "d"\nexpect = "ok"\n'
    done
  } > "$2"
}

# A bad budget is bad input.
status=0
"$pw" --memory-budget 0 check "$dir/none.toml" > "$dir/out" 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "--memory-budget 0: exit $status, not 2"
grep -q -- "--memory-budget" "$dir/out" || fail "--memory-budget 0: no message naming the flag"

chain 100 "$dir/small.toml"
"$pw" --memory-budget 100 check --quiet "$dir/small.toml" > "$dir/out" 2>&1 ||
  fail "a 100-step file under 100 MiB failed: $(cat "$dir/out")"

if [ -n "$sanitized" ]; then
  echo "memory_budget: built with -fsanitize=$sanitized: no limit is set, the rest is skipped"
  exit 0
fi

chain 40000 "$dir/large.toml"
status=0
"$pw" --memory-budget 100 check --quiet "$dir/large.toml" > "$dir/out" 2> "$dir/err" || status=$?
[ "$status" -eq 2 ] || fail "80,000 steps under 100 MiB: exit $status, not 2: $(cat "$dir/err")"
[ "$(cat "$dir/err")" = "pathwarden: out of memory: this run needs more than its budget of 100 MiB (--memory-budget)" ] ||
  fail "80,000 steps under 100 MiB: the message is: $(cat "$dir/err")"
# Without the budget the same file runs.
"$pw" check --quiet "$dir/large.toml" > "$dir/out" 2>&1 ||
  fail "80,000 steps with the default budget failed: $(cat "$dir/out")"
grep -q "80000 steps, 80000 passed" "$dir/out" || fail "80,000 steps: $(cat "$dir/out")"
echo "memory_budget: ok"
