#!/usr/bin/env bash
# conformance.tmpfs: pathwarden-conformance on a scratch tmpfs, mounted in
# a private mount namespace (gone with it, also on failure), must pass
# every check. Usage: tmpfs_test.sh PATHWARDEN_CONFORMANCE LOG
# Skipped (77) when not root.
set -euo pipefail
tool="$1"
log="$2"
if [ "$(id -u)" != 0 ]; then
  echo "conformance.tmpfs: not root, skipped"
  exit 77
fi
mnt="$(mktemp -d /tmp/pw-conformance.XXXXXX)"
trap 'rmdir "$mnt"' EXIT
# Inside: every mount private, then the tmpfs on the scratch dir; the
# namespace (and the tmpfs) ends with the shell.
unshare -m --propagation private -- /bin/sh -c '
  mount -t tmpfs -o mode=0755,size=64m pw-conformance "$1" || exit 1
  exec "$2" --log "$3" "$1/"' sh "$mnt" "$tool" "$log"
