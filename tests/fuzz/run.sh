#!/usr/bin/env bash
# Runs one coverage-guided fuzz target (tests/fuzz/CMakeLists.txt):
#
#   run.sh replay NAME BINARY SOURCE_DIR WORK_DIR [0 ARGS...]
#       every seed and saved regression through the target once (ARGS
#       before them: -runs=0 for a libFuzzer binary, which replays the
#       directories it is given and stops);
#   run.sh fuzz NAME BINARY SOURCE_DIR WORK_DIR SECONDS [LIBFUZZER_ARGS...]
#       libFuzzer for SECONDS from those, keeping what it finds in
#       WORK_DIR/corpus/NAME; a crash is saved in WORK_DIR/artifacts/NAME/.
#
# The seeds (WORK_DIR/seeds/NAME, made afresh each run) come from the
# suites (tests/scenarios/, examples/), the policy tests and examples,
# tests/fuzz/seeds/ and the hostile inputs (tests/hostile/, but for the
# run target); the scenario suites are also given to the JSON reader as
# JSON (/usr/bin/python3's tomllib). Saved regressions are the files
# of tests/fuzz/regressions/NAME/.
set -euo pipefail
mode=$1 name=$2 bin=$3 src=$4 work=$5
secs=${6:-60}
[ $# -gt 6 ] && shift 6 || shift $#
seeds=$work/seeds/$name
rm -rf "$seeds"
mkdir -p "$seeds"

# copy_seeds DIR PATTERN...: the matching files under DIR, flattened.
copy_seeds() {
  local dir=$1 f
  shift
  while IFS= read -r -d '' f; do
    cp "$f" "$seeds/$(printf '%s' "${f#"$src"/}" | tr '/' '_')"
  done < <(find "$dir" -type f \( "$@" \) -print0)
}

case $name in
  scenario_toml | run)
    copy_seeds "$src/tests/scenarios" -name '*.toml'
    copy_seeds "$src/examples" -maxdepth 1 -name '*.toml'
    [ "$name" = run ] || copy_seeds "$src/tests/hostile/scenario" -name '*.toml'
    ;;
  scenario_json)
    /usr/bin/python3 - "$src" "$seeds" <<'PY'
import json, pathlib, sys, tomllib
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for f in sorted((src / "tests/scenarios").rglob("*.toml")):
    try:
        doc = tomllib.loads(f.read_text())
    except Exception:
        continue  # a file of the hostile kind: not a seed
    name = str(f.relative_to(src)).replace("/", "_")[:-5] + ".json"
    (out / name).write_text(json.dumps(doc, indent=1))
PY
    ;;
  policy)
    copy_seeds "$src/tests/policy" -name '*.toml' -o -name '*.json'
    copy_seeds "$src/examples/policies" -name '*.toml' -o -name '*.json'
    copy_seeds "$src/tests/hostile/policy" -name '*.toml' -o -name '*.json'
    # A directory of policies, as the target reads one: files between "%%" lines.
    first=1
    for f in "$src"/tests/policy/dir/*.toml "$src"/tests/policy/dir/*.json; do
      [ $first = 1 ] || printf '\n%%%%\n'
      cat "$f"
      first=0
    done > "$seeds/composed-dir"
    ;;
  query)
    copy_seeds "$src/tests/fuzz/seeds/query" -name '*'
    copy_seeds "$src/tests/hostile/batch" -name '*.txt'
    ;;
  *)
    echo "run.sh: unknown target $name" >&2
    exit 2
    ;;
esac
dirs=("$seeds")
[ -d "$src/tests/fuzz/regressions/$name" ] && dirs+=("$src/tests/fuzz/regressions/$name")

case $mode in
  replay)
    exec "$bin" "$@" "${dirs[@]}"
    ;;
  fuzz)
    corpus=$work/corpus/$name
    artifacts=$work/artifacts/$name
    mkdir -p "$corpus" "$artifacts"
    # A dictionary of the words the seeds use (keys, operations, flag and
    # right names) and the formats' punctuation: mutations that splice
    # whole words reach far more of the readers than byte flips.
    dict=$work/$name.dict
    {
      printf '"%s"\n' '[[step]]' '[[node]]' '[[process]]' '[sysctl]' '= ' '"""' '${' '$$' \
        '%%' '{"' '":' '[]' '0o' '|' '\\u0000' '1e999'
      find "${dirs[@]}" -type f -exec grep -ohaE '[A-Za-z_][A-Za-z0-9_.]{1,40}' {} + |
        sort -u | head -n 4000 | sed 's/.*/"&"/'
    } > "$dict"
    status=0
    "$bin" -dict="$dict" -max_total_time="$secs" -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$@" "$corpus" "${dirs[@]}" || status=$?
    if [ $status -ne 0 ]; then
      echo "run.sh: $name failed (status $status); the input is in $artifacts/." >&2
      echo "run.sh: replay it with $bin FILE; once fixed, keep it in tests/fuzz/regressions/$name/." >&2
    fi
    exit $status
    ;;
  *)
    echo "run.sh: unknown mode $mode (replay, fuzz)" >&2
    exit 2
    ;;
esac
