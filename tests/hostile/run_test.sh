#!/usr/bin/env bash
# Hostile inputs (tests/hostile/): every file under this directory is one
# case, run through the pathwarden binary; each says what it tries and
# what must happen (README.md gives the convention). For each case the
# exit status must be exactly the one expected, stderr must match every
# `message:` regex and hold the location `at:` names, stdout the
# `stdout:` regex, a bad input (exit 2) must answer nothing on stdout,
# and no sanitizer may report anything: under ASan a crash exits
# non-2 and its report lands on stderr, which fails the case too.
#
# Usage: run_test.sh PATHWARDEN            (every case)
#        run_test.sh PATHWARDEN CASE...    (these, paths under tests/hostile/)
# HOSTILE_SHOW=1 prints each case's status and output.
set -euo pipefail
pw=$(realpath "$1")
shift
here="$(cd "$(dirname "$0")" && pwd)"
. "$(dirname "$0")/../lib.sh"
scratch tmp
cd "$here"

if [ $# -gt 0 ]; then
  cases=("$@")
else
  mapfile -t cases < <(find . -type f ! -name run_test.sh ! -name README.md ! -name '*.expect' \
                         -printf '%P\n' | LC_ALL=C sort)
fi
[ "${#cases[@]}" -ge 60 ] || [ $# -gt 0 ] || { echo "hostile: only ${#cases[@]} cases found" >&2; exit 1; }

# ERE-quotes a literal (paths here hold [A-Za-z0-9_./-] and tmp's own).
quote_ere() { printf '%s' "$1" | sed 's/[][\.^$*+?(){}|\\]/\\&/g'; }

passed=0
failed=0
bad() {
  echo "FAIL $c: $*" >&2
  failed=$((failed + 1))
}
n=0
for c in "${cases[@]}"; do
  n=$((n + 1))
  header="$c"
  [ -f "$c.expect" ] && header="$c.expect"
  tries="" run="" stdin="" expect="" at="" input="" stdout_re=""
  messages=()
  # The header: the leading '#' lines (of the sidecar, every line).
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      '# tries: '*) tries=${line#'# tries: '} ;;
      '# run: '*) run=${line#'# run: '} ;;
      '# stdin: '*) stdin=${line#'# stdin: '} ;;
      '# expect: exit '*) expect=${line#'# expect: exit '} ;;
      '# message: '*) messages+=("${line#'# message: '}") ;;
      '# stdout: '*) stdout_re=${line#'# stdout: '} ;;
      '# at: '*) at=${line#'# at: '} ;;
      '# input: '*) input=${line#'# input: '} ;;
      '#'*) ;;
      *) [ "$header" = "$c" ] && break ;;
    esac
  done < "$header"
  if [ -z "$tries" ] || [ -z "$run" ] || [ -z "$expect" ]; then
    bad "the header lacks tries:, run: or expect: exit N"
    continue
  fi
  if [ "$expect" = 2 ] && [ -z "$at" ] && [ -z "${HOSTILE_SHOW:-}" ]; then
    bad "an exit 2 case names its location (at: LINE:COL, or at: none)"
    continue
  fi
  # The input: the case file itself, or what a .gen script makes.
  path="$c"
  if [[ "$c" == *.gen ]]; then
    [ -n "$input" ] || { bad "a .gen case names its input: NAME"; continue; }
    mkdir -p "$tmp/$n"
    path="$tmp/$n/$input"
    if ! bash "$c" "$path" 2>"$tmp/gen.err"; then
      bad "its generator failed: $(cat "$tmp/gen.err")"
      continue
    fi
  fi
  read -ra args <<<"$run"
  for i in "${!args[@]}"; do
    args[$i]=${args[$i]//'{}'/$path}
  done
  in=/dev/null
  [ -n "$stdin" ] && in=${stdin//"{}"/$path}
  set +e
  timeout 300 "$pw" "${args[@]}" <"$in" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  set -e
  err="$(cat "$tmp/stderr")"
  if [ -n "${HOSTILE_SHOW:-}" ]; then
    echo "=== $c: exit $rc"
    head -c 2000 "$tmp/stderr"
    head -c 500 "$tmp/stdout" | sed 's/^/stdout: /'
  fi
  fails=()
  [ "$rc" = "$expect" ] || fails+=("exit $rc, not $expect")
  if grep -qE 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:|Sanitizer:DEADLYSIGNAL' "$tmp/stderr"; then
    fails+=("a sanitizer report")
  fi
  qpath="$(quote_ere "$path")"
  for m in "${messages[@]}"; do
    re=${m//'{}'/$qpath}
    [[ "$err" =~ $re ]] || fails+=("stderr does not match /$m/")
  done
  # at: LINE:COL is in the input; anything else names its file ({} the
  # input, as in at: {}/b.toml:3:22, or <stdin>:2:6).
  if [ -n "$at" ] && [ "$at" != none ]; then
    where=${at//'{}'/$path}
    [[ "$at" =~ ^[0-9]+:[0-9]+$ ]] && where="$path:$at"
    grep -qF -- "$where:" "$tmp/stderr" || fails+=("stderr lacks the location $where:")
  fi
  if [ -n "$stdout_re" ]; then
    out="$(cat "$tmp/stdout")"
    re=${stdout_re//'\n'/$'\n'}
    [[ "$out" =~ $re ]] || fails+=("stdout does not match /$stdout_re/")
  fi
  if [ "$expect" = 2 ] && [ -s "$tmp/stdout" ]; then
    fails+=("answered after bad input: $(head -c 300 "$tmp/stdout")")
  fi
  if [ "${#fails[@]}" -gt 0 ]; then
    bad "$(IFS=';'; echo "${fails[*]}") (tries: $tries); stderr: $(head -c 1000 "$tmp/stderr")"
  else
    passed=$((passed + 1))
  fi
done
echo "hostile: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
