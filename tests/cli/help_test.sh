#!/usr/bin/env bash
# `pathwarden help` and the bash completion: `help` is the overview,
# `help CMD...` is that command's --help, an unknown command is exit 2
# with a message; and the completion script (as bash runs it) offers every
# command and subcommand, and every flag each command's --help lists.
# Usage: help_test.sh PATHWARDEN COMPLETION_FILE
set -euo pipefail
bin=$1 completion=$2
. "$(dirname "$0")/../lib.sh"

[ "$("$bin" help)" = "$("$bin" --help)" ] || fail "help is not --help"
[ "$("$bin" help check)" = "$("$bin" check --help)" ] || fail "help check is not check --help"
[ "$("$bin" help policy print)" = "$("$bin" policy print --help)" ] ||
  fail "help policy print is not policy print --help"
rc=0
err=$("$bin" help nosuch 2>&1 >/dev/null) || rc=$?
[ "$rc" -eq 2 ] || fail "help nosuch exited $rc, not 2"
[[ $err == *'no command "nosuch"'* && $err == *check* ]] || fail "help nosuch said: $err"
rc=0
err=$("$bin" help policy nosuch 2>&1 >/dev/null) || rc=$?
[ "$rc" -eq 2 ] && [[ $err == *'pathwarden policy has no command "nosuch"'* ]] ||
  fail "help policy nosuch: $rc, $err"

# The flags of one --help (the Options section's first column) and its
# subcommands.
flags_of() {
  "$bin" help "$@" | awk '/^[A-Za-z].*:$/ {sec=$0} sec=="Options:" && /^  -/ {print $1}' |
    tr ',' '\n' | sed -n 's/^\(--*[A-Za-z][A-Za-z0-9-]*\).*/\1/p'
}
subs_of() {
  "$bin" help "$@" | awk '/^[A-Za-z].*:$/ {sec=$0; next} sec=="Subcommands:" && /^  [a-z]/ {print $1}'
}

# What the completion offers after `pathwarden WORDS... CUR`.
# shellcheck disable=SC1090
source "$completion"
complete_words() {
  local cur=$1
  shift
  COMP_WORDS=(pathwarden "$@" "$cur")
  COMP_CWORD=$(($# + 1))
  COMPREPLY=()
  _pathwarden
  printf '%s\n' "${COMPREPLY[@]}"
}

checked=0
check_command() {
  local offered
  offered=$(complete_words - "$@")
  local f
  for f in $(flags_of "$@"); do
    grep -qx -- "$f" <<<"$offered" || fail "completion of \"pathwarden $* -\" lacks $f"
    checked=$((checked + 1))
  done
  local subs s
  subs=$(subs_of "$@")
  offered=$(complete_words "" "$@")
  for s in $subs; do
    grep -qx -- "$s" <<<"$offered" || fail "completion of \"pathwarden $* \" lacks the command $s"
    checked=$((checked + 1))
    check_command "$@" "$s"
  done
}
check_command
[ "$checked" -gt 50 ] || fail "only $checked flags and commands found: is --help's layout read right?"
# Options with values do not end the command: after --policy FILE, still run's.
offered=$(complete_words --v run --policy p.toml)
grep -qx -- --verbose <<<"$offered" || fail "run --policy FILE --v does not complete --verbose"
echo "help_test: ok ($checked flags and commands in the completion)"
