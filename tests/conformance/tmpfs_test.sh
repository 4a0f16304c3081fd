#!/usr/bin/env bash
# conformance.tmpfs: pathwarden-conformance on a scratch tmpfs, mounted in
# a private mount namespace (gone with it, also on failure), must pass
# every check; its lines must be canonical (one per listed check, NAME
# TAB ok TAB got ... TAB want ...) and independent of which other checks
# ran (each group run alone with --only gives the same lines); usage
# errors exit 2; a run that cannot take its identities fails its checks
# (exit 1) and says why. Usage: tmpfs_test.sh PATHWARDEN_CONFORMANCE LOG
# Skipped (77) when not root.
set -euo pipefail
tool="$1"
log="$2"
if [ "$(id -u)" != 0 ]; then
  echo "conformance.tmpfs: not root, skipped"
  exit 77
fi
. "$(dirname "$0")/../lib.sh"
# The host's protected_* sysctls decide the link and open checks, and the
# kernel executor sets them machine-wide while it holds /run/pathwarden's
# sysctl.lock (src/kernel/sysctl_guard.cc): hold that lock for the run,
# so that another pathwarden or another ctest cannot change them between
# the full run and the groups run alone (ctest's RESOURCE_LOCK covers only
# this ctest). Seen: a second ctest beside a fresh clone's ./test made
# "--only ^link\." differ.
mkdir -p /run/pathwarden
exec 9>>/run/pathwarden/sysctl.lock
flock 9
mnt="$(mktemp -d /tmp/pw-conformance.XXXXXX)"
trap 'rmdir "$mnt"' EXIT

# on_tmpfs [UNSHARE_FLAGS] -- ARGS...: the tool on a fresh tmpfs at $mnt.
on_tmpfs() {
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  unshare -m --propagation private "${flags[@]}" -- /bin/sh -c '
    mnt="$1"; tool="$2"; shift 2
    mount -t tmpfs -o mode=0755,size=64m pw-conformance "$mnt" || exit 9
    exec "$tool" "$@" "$mnt/"' sh "$mnt" "$tool" "$@"
}

# The whole suite passes.
rc=0
on_tmpfs -- --log "$log" >"$log.stdout" || rc=$?
[ "$rc" = 0 ] || { grep -P '\tFAIL\t' "$log" >&2 || true; fail "exit $rc, want 0"; }
cmp -s "$log" "$log.stdout" || fail "the log and stdout differ"
"$tool" --list >"$log.names"
[ "$(wc -l <"$log.names")" -ge 800 ] || fail "fewer than 800 checks listed"
cut -f1 "$log" | cmp -s - "$log.names" || fail "the log's names are not --list's, in order"
bad=$(grep -cvP '^[a-z0-9][a-z0-9.-]*\tok\tgot [^\t]*\twant [^\t]*$' "$log" || true)
[ "$bad" = 0 ] || fail "$bad log lines are not canonical"
if grep -F "$mnt" "$log" >/dev/null; then fail "the log names the directory"; fi

# Each group alone, on its own tmpfs, gives the same lines.
for group in $(cut -d. -f1 "$log.names" | sort -u); do
  on_tmpfs -- --only "^$group\\." >"$log.only" 2>/dev/null || fail "--only ^$group\\. failed"
  grep "^$group\\." "$log" | cmp -s - "$log.only" || fail "--only ^$group\\. differs from the full run"
done

# Usage errors: exit 2.
for args in "" "--bogus $mnt" "--only ( $mnt" "--only no-such-check $mnt" "$mnt $mnt" "/nonexistent" "/etc"; do
  rc=0
  # shellcheck disable=SC2086  # the words are the arguments
  "$tool" $args >/dev/null 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "'$args': exit $rc, want 2"
done

# In a user namespace mapping only root, no identity can be taken (no
# setgroups) and no fixture given to another uid: the checks fail with
# the reason, exit 1.
rc=0
out=$(on_tmpfs -U --map-root-user -- --only '^chmod\.(owner|root-nocaps\.own)$' 2>/dev/null) || rc=$?
[ "$rc" = 1 ] || fail "in a user namespace: exit $rc, want 1"
grep -qP '^chmod\.owner\tFAIL\tgot setup: chown f: EINVAL\t' <<<"$out" ||
  fail "in a user namespace: no setup failure: $out"
grep -qP '^chmod\.root-nocaps\.own\tFAIL\tgot identity root-nocaps: setgroups: EPERM ' <<<"$out" ||
  fail "in a user namespace: no identity failure: $out"
rm -f "$log.stdout" "$log.names" "$log.only"
echo "conformance.tmpfs: $(wc -l <"$log") checks passed"
