# The shell tests' helpers, sourced after `set -euo pipefail`:
#
#   . "$(dirname "$0")/../lib.sh"
#
# The name a test reports under is $test_name (default: its folder and
# file, "query/cli_test"). `run` and `expect` write the command's output
# under $out, a temporary directory the test makes and removes.

test_name=${test_name:-$(basename "$(dirname "$0")")/$(basename "$0" .sh)}

# fail MESSAGE: the test fails, saying why.
fail() { echo "$test_name: $*" >&2; exit 1; }

# skip MESSAGE: ctest's skip status (77, SKIP_RETURN_CODE), saying why.
skip() { echo "$test_name: skipped: $*" >&2; exit 77; }

# note MESSAGE: progress on stdout.
note() { echo "$test_name: $*"; }

# require_root: skips unless root.
require_root() { [ "$(id -u)" -eq 0 ] || skip "not root"; }

# in_private_mount_ns "$@": runs the calling test again, once, in a
# mount namespace of its own with private propagation (root only), so
# that what it mounts is gone with it, however it ends.
in_private_mount_ns() {
  local var="PATHWARDEN_NS_${test_name//[^A-Za-z0-9]/_}"
  [ -n "${!var:-}" ] && return 0
  export "$var"=1
  exec unshare -m --propagation private "$0" "$@"
}

# scratch VAR [TEMPLATE]: VAR names a new temporary directory (mktemp -d
# [TEMPLATE]), removed with everything in it when the test exits, however
# it exits.
_scratch_dirs=()
scratch() {
  local d
  d=$(mktemp -d ${2:+"$2"})
  _scratch_dirs+=("$d")
  trap 'rm -rf -- "${_scratch_dirs[@]}"' EXIT
  printf -v "$1" '%s' "$d"
}

# run CMD...: sets $rc, $stdout, $stderr and $last (stderr's last line).
run() {
  : "${out:?run needs \$out, a temporary directory}"
  set +e
  "$@" >"$out/stdout" 2>"$out/stderr"
  rc=$?
  set -e
  stdout="$(cat "$out/stdout")"
  stderr="$(cat "$out/stderr")"
  last="$(tail -n 1 "$out/stderr")"
}

# expect RC 'stderr substring' CMD...: runs CMD, which must exit RC with
# the substring (when not empty) on stderr; then calls the test's own
# expect_also RC CMD... when it defines one.
expect() {
  local want="$1" msg="$2"
  shift 2
  run "$@"
  [ "$rc" -eq "$want" ] || fail "$*: exit $rc, not $want (stderr: $stderr)"
  if [ -n "$msg" ]; then
    case "$stderr" in *"$msg"*) ;; *) fail "$*: stderr lacks \"$msg\": $stderr" ;; esac
  fi
  if declare -F expect_also >/dev/null; then expect_also "$want" "$@"; fi
}
