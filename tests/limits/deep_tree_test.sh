#!/usr/bin/env bash
# check --both on trees far deeper than PATH_MAX allows a path: the kernel's
# final tree is read back relative to each directory (no whole path, no
# descriptor per level), the engine's and the kernel's compared by parent
# and name. It used to fail past 256 levels ("internal: capture: the tree
# is too large"), and whole paths would have cost 10 GB at 100,000.
#
#  1. 1,000 levels, a file, a symlink, a fifo and a directory at the
#     bottom with "/" bound on it (so the chain is there twice, the second
#     left by ".." across a mount): the kernel's tree (check --kernel
#     --show-tree) is the engine's, line for line, and ends with the
#     bottom's whole path.
#  2. 100,000 levels (20,000 under a sanitizer): check --both passes, the
#     final trees agreeing; its time and maximum resident set are printed
#     (not asserted).
#
# Needs root and Landlock (exit 77 elsewhere, as check --both does).
#
# Usage: deep_tree_test.sh PATHWARDEN [SANITIZERS]
set -euo pipefail
pw=$1
sanitized=${2:-}
. "$(dirname "$0")/../lib.sh"
scratch dir

chain() {  # chain N FILE: N mkdir + chdir steps, then objects at the bottom
  {
    echo 'format = 1'
    for ((i = 0; i < $1; i++)); do
      printf '[[step]]\nop = "mkdir"\npath = "d"\nexpect = "ok"\n[[step]]\nop = "chdir"\npath = "d"\nexpect = "ok"\n'
    done
    printf '[[step]]\nop = "open"\npath = "f"\nflags = "O_WRONLY|O_CREAT"\nmode = 0o600\nexpect = "ok"\n'
    printf '[[step]]\nop = "symlink"\npath = "l"\ntarget = "../f"\nexpect = "ok"\n'
    printf '[[step]]\nop = "mknod"\npath = "p"\ntype = "fifo"\nmode = 0o640\nexpect = "ok"\n'
    printf '[[step]]\nop = "mkdir"\npath = "e"\nmode = 0o700\nexpect = "ok"\n'
    # A bind of "/" at the bottom (with BIND=1): the whole chain again below
    # it, left by ".." across the mount's root.
    if [ "${BIND:-0}" = 1 ]; then
      printf '[[step]]\nop = "bind_mount"\npath = "/"\npath2 = "e"\nexpect = "ok"\n'
    fi
  } > "$2"
}

# 1. The trees themselves, 1,000 deep.
BIND=1 chain 1000 "$dir/c1000.toml"
status=0
"$pw" check --kernel --show-tree --quiet "$dir/c1000.toml" > "$dir/kernel.out" 2>&1 || status=$?
if [ "$status" -eq 77 ]; then
  echo "deep_tree: the kernel cannot run scenario files here: skipped"
  exit 77
fi
[ "$status" -eq 0 ] || fail "check --kernel --show-tree, 1,000 deep: exit $status: $(tail -n 3 "$dir/kernel.out")"
"$pw" check --show-tree --quiet "$dir/c1000.toml" > "$dir/engine.out" 2>&1 ||
  fail "check --show-tree, 1,000 deep: $(tail -n 3 "$dir/engine.out")"
grep '^  /' "$dir/kernel.out" > "$dir/kernel.tree" || true
grep '^  /' "$dir/engine.out" > "$dir/engine.tree" || true
# "/", 1,000 "d", f, l, p and e; below e all but "/" again.
[ "$(wc -l < "$dir/kernel.tree")" -eq 2009 ] ||
  fail "the kernel's tree, 1,000 deep, has $(wc -l < "$dir/kernel.tree") entries, not 2,009"
cmp -s "$dir/kernel.tree" "$dir/engine.tree" ||
  fail "the kernel's tree and the engine's differ: $(diff "$dir/engine.tree" "$dir/kernel.tree" | head -c 600)"
bottom=$(printf '/d%.0s' $(seq 1000))
[ "$(tail -n 1 "$dir/kernel.tree")" = "  $bottom/p fifo 0640 0:0 nlink 1" ] ||
  fail "the last entry is not the fifo at the bottom: $(tail -n 1 "$dir/kernel.tree" | tail -c 200)"
grep -qxF "  $bottom/l symlink 0777 0:0 nlink 1 -> \"../f\"" "$dir/kernel.tree" ||
  fail "no symlink at the bottom of the kernel's tree"
grep -qxF "  $bottom/e$bottom/p fifo 0640 0:0 nlink 1" "$dir/kernel.tree" ||
  fail "no fifo at the bottom of the chain below the bind on $bottom/e"

# 2. check --both, 100,000 deep.
depth=100000
[ -n "$sanitized" ] && depth=20000
chain "$depth" "$dir/deep.toml"
status=0
/usr/bin/time -f '%e s, %M KB' -o "$dir/time" "$pw" check --both --quiet "$dir/deep.toml" \
  > "$dir/deep.out" 2>&1 || status=$?
[ "$status" -eq 0 ] || fail "check --both, $depth deep: exit $status: $(tail -c 600 "$dir/deep.out")"
steps=$((2 * depth + 4))  # no bind
grep -q "1 file, $steps steps, $steps passed, 0 failed$" "$dir/deep.out" ||
  fail "check --both, $depth deep: $(tail -c 600 "$dir/deep.out")"
! grep -q "final trees differ" "$dir/deep.out" || fail "the final trees differ, $depth deep"
echo "deep_tree: check --both, $depth deep: ok ($(tail -n 1 "$dir/time"))"
