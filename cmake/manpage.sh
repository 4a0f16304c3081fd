#!/usr/bin/env bash
# pathwarden.1: help2man over `pathwarden --help` and --version, with a
# COMMANDS section holding each command's own help (`pathwarden help
# CMD...`, every command the completion knows, nested ones included).
# Usage: manpage.sh PATHWARDEN HELP2MAN OUT
set -euo pipefail
bin=$1 help2man=$2 out=$3
inc=$(mktemp)
trap 'rm -f "$inc"' EXIT
# The command paths: the keys of the completion's table of options.
mapfile -t paths < <("$bin" completion bash |
                     sed -n '/local -A opts=(/,/)/s/^ *\["pathwarden \(..*\)"\]=.*/\1/p')
{
  echo "[COMMANDS]"
  for p in "${paths[@]}"; do
    echo ".SS \"pathwarden $p\""
    echo ".nf"
    # shellcheck disable=SC2086 # a path is its words
    "$bin" help $p | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
    echo ".fi"
  done
  echo "[SEE ALSO]"
  echo "The project's README.md and docs/ (scenario format, architecture, testing)."
} >"$inc"
"$help2man" --no-info --no-discard-stderr \
  --name "what Linux answers when a process touches a path, and why" \
  --include "$inc" --output "$out" "$bin"
