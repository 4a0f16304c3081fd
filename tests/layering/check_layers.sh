#!/usr/bin/env bash
# The layering, checked from the #includes: a folder of src/ includes only
# folders at or below its own layer, and the public headers
# (include/pathwarden/) include no src/ header and no <expected>. Unit
# tests (*_test.cc) and their helpers (*_test_util.h) may use any layer to
# build their fixtures. The order is written here and in
# docs/architecture.md ("The layers"), lowest first.
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
cd "$root"

layers=(base vfs perm explain walk task security landlock ops engine api input policy identity scenario kernel query sandbox trace fuzz bench capi fileserver cli)
declare -A rank
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done

bad=0
complain() { echo "layering: $*" >&2; bad=1; }

# The folder a path belongs to: src/X/..., bench/..., cli/....
folder_of() {
  case "$1" in
    src/*) local rest="${1#src/}"; echo "${rest%%/*}" ;;
    bench/*) echo bench ;;
    cli/*) echo cli ;;
    fileserver/*) echo fileserver ;;
    *) echo "" ;;
  esac
}

while IFS= read -r file; do
  case "$file" in *_test.cc|*_test_util.h) continue ;; esac
  from=$(folder_of "$file")
  [ -n "$from" ] || continue
  if [ -z "${rank[$from]+x}" ]; then complain "$file: folder \"$from\" has no place in the layer order"; continue; fi
  while IFS= read -r inc; do
    to=$(folder_of "$inc")
    [ -n "$to" ] || continue
    if [ -z "${rank[$to]+x}" ]; then complain "$file includes $inc: folder \"$to\" has no place in the layer order"; continue; fi
    if [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
      complain "$file ($from) includes $inc ($to), a layer above it"
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find src bench fileserver cli -name '*.h' -o -name '*.cc' | sort)

while IFS= read -r file; do
  while IFS= read -r inc; do
    case "$inc" in
      pathwarden/*) ;;
      *) complain "$file (public) includes \"$inc\": public headers include only pathwarden/ headers" ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
  if grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*<expected>' "$file"; then
    complain "$file (public) includes <expected>, which clang 14 with libstdc++ 12 lacks"
  fi
done < <(find include -name '*.h' | sort)

if [ "$bad" -ne 0 ]; then exit 1; fi
echo "layering: ${#layers[@]} layers, every include goes down"
