#!/usr/bin/env bash
# trace.programs: real programs under a real policy with `trace --enforce
# --json`: shell pipelines, cp -r, tar, find, Python, make of a small C
# project (the compiler driver, cc1, as, ld and the built program) and git
# init + commit. The policy: the system readable and executable, /etc and
# /proc readable, /dev/null read-write, /dev/urandom readable, the work dir
# (HOME and TMPDIR too) everything; TCP bind and connect handled and
# denied, signals and abstract sockets scoped. Each program must succeed
# and leave its result, and its run must show 0 disagreements, every
# record predicted == actual, and no unknown but what the model leaves
# out by design (procfs's process directories: tar chmods through
# /proc/self/fd; a device whose driver's open is not modelled),
# each of those listed with its reason; the counts are printed
# (docs/testing.md records them). Skipped (77) when not root or without
# Landlock. Usage: programs_test.sh PATHWARDEN CALLS
set -euo pipefail
name=trace.programs
pw="$1"
. "$(dirname "$0")/lib.sh"
TRACE_UNKNOWN_OK=1
require_trace

w="$t/w"
mkdir -p "$w/home" "$w/tmp" "$w/src/sub/deep" "$w/proj"
echo one >"$w/src/a.txt"
echo two >"$w/src/sub/b.txt"
printf 'three\n' >"$w/src/sub/deep/c.txt"
ln -s ../a.txt "$w/src/sub/link"
chmod 700 "$w/src/sub/deep"
cat >"$w/proj/hello.c" <<'EOF'
#include <stdio.h>
#include "greet.h"
int main(void) { printf("%s\n", GREETING); return 0; }
EOF
echo '#define GREETING "hello from make"' >"$w/proj/greet.h"
printf 'hello: hello.o\n\tcc -o $@ hello.o\nhello.o: hello.c greet.h\n\tcc -c -O1 -o $@ hello.c\ncheck: hello\n\t./hello > out.txt\n' >"$w/proj/Makefile"

{
  printf 'abi = 6\n\n[[ruleset]]\nhandled_access_fs = ["abi.all"]\nhandled_access_net = ["abi.all"]\nscoped = ["abi.all"]\n\n'
  system_rules
  printf '\n[[path_beneath]]\nallowed_access = ["read_file"]\nparent = ["/dev/urandom"]\n\n'
  printf '[[path_beneath]]\nallowed_access = ["abi.all"]\nparent = ["%s"]\n' "$w"
} >"$t/policy.toml"

export HOME="$w/home" TMPDIR="$w/tmp" LC_ALL=C
export GIT_AUTHOR_NAME=Trace GIT_AUTHOR_EMAIL=trace@example.invalid
export GIT_COMMITTER_NAME=Trace GIT_COMMITTER_EMAIL=trace@example.invalid GIT_CONFIG_NOSYSTEM=1

# program LABEL CMD...: CMD under trace in $w; must exit 0 and agree.
# Its counts go to $t/counts before the checks (so they are printed even
# when a check fails).
program() {
  local label="$1" rc summary n d
  shift
  set +e
  (cd "$w" && "$pw" trace --enforce --json -o "$t/$label.jsonl" --policy "$t/policy.toml" -- "$@") \
    >"$t/$label.out" 2>"$t/$label.err"
  rc=$?
  set -e
  name="trace.programs[$label]"
  local procs line
  line="$(last_line "$t/$label.err")"
  procs="$(jq -s 'map(.pid) | unique | length' "$t/$label.jsonl" 2>/dev/null || echo '?')"
  echo "$label: ${line#trace: }; $procs processes; exit $rc" >>"$t/counts"
  [ "$rc" -eq 0 ] || fail "exit $rc: $(tail -n 20 "$t/$label.err")"
  summary="$(check_summary "$t/$label.err")"
  read -r n d <<<"$summary"
  check_records "$t/$label.jsonl" "$n" "$d"
  note "$n calls evaluated, $d denials predicted (all as the kernel answered), $procs processes"
}

p_sh_pipeline() {
  program sh-pipeline /bin/sh -c "ls /usr/include | sort -r | head -n 5 | wc -l >'$w/count'; cat /etc/passwd | grep -c root >>'$w/count'; (echo a; echo b) | tr a-z A-Z >'$w/upper'"
  [ "$(head -n 1 "$w/count")" = 5 ] || fail "count $(cat "$w/count")"
  [ "$(cat "$w/upper")" = $'A\nB' ] || fail "upper $(cat "$w/upper")"
}
p_cp_r() {
  program cp-r cp -r "$w/src" "$w/copy"
  diff -r "$w/src" "$w/copy" >/dev/null || fail "the copy differs"
}
p_tar() {
  program tar /bin/sh -c "tar -cf '$w/src.tar' -C '$w' src && mkdir '$w/untar' && tar -xf '$w/src.tar' -C '$w/untar'"
  diff -r "$w/src" "$w/untar/src" >/dev/null || fail "the extraction differs"
}
p_find() {
  program find find "$w/src" /usr/include/linux -name '*.txt' -o -name fs.h -o -type l
  [ "$(sort "$t/find.out" | tr '\n' ' ')" = "$w/src/a.txt $w/src/sub/b.txt $w/src/sub/deep/c.txt $w/src/sub/link /usr/include/linux/fs.h " ] ||
    fail "found $(cat "$t/find.out")"
}
p_python() {
  program python /usr/bin/python3 -c 'import json, os, tempfile
with tempfile.NamedTemporaryFile("w", delete=False, dir=os.environ["TMPDIR"]) as f:
    json.dump({"k": [1, 2]}, f)
os.replace(f.name, os.path.join(os.environ["HOME"], "out.json"))
print(json.load(open(os.path.join(os.environ["HOME"], "out.json"))))'
  [ "$(cat "$t/python.out")" = "{'k': [1, 2]}" ] || fail "printed $(cat "$t/python.out")"
}
p_make() {
  program make make -C "$w/proj" check
  [ "$(cat "$w/proj/out.txt")" = "hello from make" ] || fail "out.txt is $(cat "$w/proj/out.txt")"
}
p_git() {
  mkdir "$w/repo"
  echo content >"$w/repo/file.txt"
  program git /bin/sh -c "cd '$w/repo' && git init -q && git add file.txt && git commit -q -m first && git log --oneline"
  grep -q first "$t/git.out" || fail "no commit: $(cat "$t/git.out")"
}
for p in sh-pipeline cp-r tar find python make git; do each "$p" "p_${p//-/_}"; done

name=trace.programs
[ ! -e "$t/counts" ] || cat "$t/counts"
finish
note ok
