# Shared by the trace tests (tests/trace/*_test.sh), sourced after `set
# -euo pipefail` with $pw (the pathwarden binary) set: the temp dir, skips,
# the system part of every policy, and checks of one traced run.

# A temp dir removed on every exit; 755 so that nothing but the policy
# decides.
pw="$(readlink -f "$pw")"
t="$(mktemp -d /tmp/pw-trace.XXXXXX)"
chmod 755 "$t"
cleanup_hooks=()
cleanup() {
  local h
  for h in "${cleanup_hooks[@]}"; do eval "$h" || true; done
  rm -rf "$t"
}
trap cleanup EXIT

test_name=$name
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# each LABEL CMD...: CMD in a subshell (its fail ends only it), so that
# every case runs and reports; finish then fails when any did.
failed=()
each() {
  local label="$1" rc
  shift
  set +e
  ( set -e; "$@" )
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || failed+=("$label")
}
finish() {
  [ "${#failed[@]}" -eq 0 ] || { echo "$name: FAIL: ${#failed[@]} failed: ${failed[*]}" >&2; exit 1; }
}

# Skips (77) unless root with Landlock enforcing, and unless the binary
# has trace at all.
require_trace() {
  require_root
  command -v jq >/dev/null || fail "jq is missing (scripts/setup installs it)"
  "$pw" trace --help >/dev/null 2>&1 || fail "this pathwarden has no trace command"
  printf '[[ruleset]]\nhandled_access_fs = ["write_file"]\n' >"$t/probe.toml"
  "$pw" run --hard --policy "$t/probe.toml" -- /bin/true 2>/dev/null ||
    skip "no Landlock here"
}

# system_rules: the path_beneath rules every policy here starts with: read
# and execute the system, read /etc and /proc, read and write /dev/null.
system_rules() {
  cat <<'EOF'
[[path_beneath]]
allowed_access = ["execute", "read_file", "read_dir"]
parent = ["/usr", "/bin", "/sbin", "/lib", "/lib64"]

[[path_beneath]]
allowed_access = ["read_file", "read_dir"]
parent = ["/etc", "/proc"]

[[path_beneath]]
allowed_access = ["read_file", "write_file"]
parent = ["/dev/null"]
EOF
}

# last_line FILE: the summary trace writes last on stderr.
last_line() { tail -n 1 "$1"; }

# summary_counts ERR: the last stderr line has the contract's form;
# prints "N D U C K" (calls, denials, unknown, consequences,
# disagreements).
summary_counts() {
  local line
  line="$(last_line "$1")"
  [[ "$line" =~ ^trace:\ ([0-9]+)\ calls\ evaluated,\ ([0-9]+)\ denials\ predicted,\ ([0-9]+)\ unknown,\ ([0-9]+)\ consequences,\ ([0-9]+)\ disagreements$ ]] ||
    fail "last stderr line is not trace's summary: '$line'"
  echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]} ${BASH_REMATCH[5]}"
}

# check_summary ERR: the same, with 0 disagreements and 0 unknown (with
# TRACE_UNKNOWN_OK=1, unknowns are allowed: check_form then says which);
# prints "N D" (calls, denials).
check_summary() {
  local n d u c k
  read -r n d u c k <<<"$(summary_counts "$1")"
  [ "$u" -eq 0 ] || [ "${TRACE_UNKNOWN_OK:-0}" = 1 ] || fail "$u unknown predictions: $(last_line "$1")"
  [ "$k" -eq 0 ] || fail "$k disagreements: $(last_line "$1")"
  echo "$n $d"
}

# check_predictions JSONL SUMMARY_CALLS SUMMARY_DENIALS: the same for a
# run without --enforce: well formed, none unknown, no "actual", the
# summary's counts.
check_predictions() {
  local f="$1" bad
  check_form "$@"
  bad="$(jq -c 'select(has("actual") or has("agrees"))' "$f")"
  [ -z "$bad" ] || fail "a kernel result without --enforce:"$'\n'"$bad"
}

# check_records JSONL SUMMARY_CALLS SUMMARY_DENIALS: every record of an
# --enforce run is well formed, predicted equals actual, none is unknown,
# who refuses is said for every failure ("unix" or "policy" with its
# layer), and the counts of the summary are the records' (the denials:
# EACCES, EPERM, EROFS, and whatever the policy refuses, such as EXDEV;
# not ENOENT and the like).
# Fails with the offending records.
check_records() {
  local f="$1" bad
  check_form "$@"
  bad="$(jq -c 'select((.actual | type) != "string")' "$f")"
  [ -z "$bad" ] || fail "records without the kernel's result:"$'\n'"$bad"
  # The one failure a prediction leaves to someone else: a device ioctl
  # the checks allow gets the driver's own answer (ENOTTY for a tty
  # ioctl on /dev/null); the model predicts the checks, not the driver.
  bad="$(jq -c 'select(.predicted != .actual and .predicted != "unknown" and
      (.op == "ioctl" and .predicted == "ok" and .agrees == true | not))' "$f")"
  [ -z "$bad" ] || fail "predicted != actual (the kernel):"$'\n'"$bad"
  bad="$(jq -c 'select(.agrees != true)' "$f")"
  [ -z "$bad" ] || fail "records trace itself says disagree:"$'\n'"$bad"
}

# check_form JSONL SUMMARY_CALLS SUMMARY_DENIALS: the records' shape,
# none unknown, the summary's counts.
check_form() {
  local f="$1" calls="$2" denials="$3" bad n d
  [ -e "$f" ] || fail "no $f"
  jq -e . "$f" >/dev/null 2>&1 || fail "$f: not JSON lines"
  bad="$(jq -c 'select(
      (.pid | type) != "number" or (.tid | type) != "number" or
      (.call | type) != "string" or (.op | type) != "string" or
      ((.path | type) != "string") or
      (([.op] | inside(["signal", "bind_tcp", "connect_tcp", "connect_abstract"]) | not) and
         (.path | startswith("/") | not)) or
      (.predicted | type) != "string" or
      (.predicted == "ok" and .by != null) or
      (.by != null and .by != "unix" and .by != "policy") or
      (.by != null and (.predicted == "ok" or .predicted == "unknown")) or
      (.predicted != "ok" and .predicted != "unknown" and .predicted != "consequence" and
         .by == null) or
      ((.predicted == "consequence") != ((.consequence_of | type) == "string")) or
      (.by == "policy" and (.layer | type) != "number"))' "$f")"
  [ -z "$bad" ] || fail "malformed records:"$'\n'"$bad"
  # Unknown: never for the calls program; for real programs only what the
  # model does not cover by design (procfs's process directories, /proc/self
  # and its own files; a device driver's own open).
  if [ "${TRACE_UNKNOWN_OK:-0}" = 1 ]; then
    bad="$(jq -c 'select(.predicted == "unknown" and
        ((.unknown_why // "") | test("^/proc/[^ ]+ follows the process.s ptrace access|^/proc/[^ ]+ names the asking task|^/proc/[^ ]+ is procfs.s own|whose driver.s open is not modelled") | not))' "$f")"
  else
    bad="$(jq -c 'select(.predicted == "unknown")' "$f")"
  fi
  [ -z "$bad" ] || fail "unknown predictions:"$'\n'"$bad"
  n="$(jq -s length "$f")"
  d="$(jq -s 'map(select(.predicted == "EACCES" or .predicted == "EPERM" or .predicted == "EROFS"
                          or .by == "policy")) | length' "$f")"
  [ "$n" -eq "$calls" ] || fail "the summary says $calls calls, $n records"
  [ "$d" -eq "$denials" ] || fail "the summary says $denials denials, $d records predict one"
}
