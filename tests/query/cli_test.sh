#!/usr/bin/env bash
# `pathwarden explain` and `map` as users run them: exit statuses (0
# allowed, 1 denied, 3 unknown, 2 bad input; batches 0/3/2; map 0/3/2),
# every bad input's message on stderr, nothing answered after bad input.
set -euo pipefail
pw="$1"
. "$(dirname "$0")/../lib.sh"
scratch out
# Bad input (2) answers nothing.
expect_also() {
  local want="$1"
  shift
  if [ "$want" -eq 2 ] && [ -n "$stdout" ]; then fail "$*: answered after bad input: $stdout"; fi
}

# Answers and their statuses.
expect 0 "" "$pw" explain --colour never stat /
expect 1 "" "$pw" explain --uid 65534 --gid 65534 --colour never access /root W_OK
case "$stdout" in *"EACCES"*) ;; *) fail "access /root W_OK as nobody: $stdout" ;; esac
expect 1 "" "$pw" explain --colour never stat /no/such/path
case "$stdout" in *"ENOENT"*) ;; *) fail "stat of a missing path: $stdout" ;; esac
expect 3 "" "$pw" explain --uid 65534 --gid 65534 open /proc/self/status
case "$stdout" in *"unknown"*"/proc/self names the asking task"*) ;; *) fail "open under /proc: $stdout" ;; esac
# The walk up to there is the kernel's, nothing refused (text and JSON):
# /proc itself is modelled; /proc/self, which names the asking task, is
# not followed.
case "$stdout" in *refused*) fail "an unknown answer's walk says refused: $stdout" ;; esac
expect 3 "" "$pw" explain --json --uid 65534 --gid 65534 open /proc/self/status
/usr/bin/python3 -c '
import json, sys
walk = json.loads(sys.argv[1])["walk"]
assert walk[-1]["path"] == "/proc" and walk[-1]["granted"] is True, walk
' "$stdout" || fail "the JSON walk of an unknown answer: $stdout"
# A path over 4096 bytes is a question Linux answers, not bad input.
long="/$(head -c 5000 /dev/zero | tr '\0' a)"
expect 1 "" "$pw" explain stat "$long"
case "$stdout" in *ENAMETOOLONG*) ;; *) fail "a long path: $stdout" ;; esac
# JSON: one object, the result and the walk.
expect 0 "" "$pw" explain --json stat /usr
/usr/bin/python3 -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["result"]=="ok" and j["op"]=="stat" and j["path"]=="/usr" and len(j["walk"])==1, j' "$stdout" \
  || fail "--json: $stdout"

# --uid keeps the caller's working directory and umask (as sudo -u does):
# a relative path is the caller's, and so is a relative rule path of the
# sandboxer's environment, whatever --cwd says (the sandboxer opens it).
chmod 0755 "$out"
mkdir -m 0755 "$out/rel"
echo x >"$out/rel/f" && chmod 0644 "$out/rel/f"
(
  cd "$out/rel"
  expect 0 "" "$pw" explain --uid 65534 --gid 65534 --colour never stat f
  case "$stdout" in *"$out/rel/f"*) ;; *) fail "--uid, a relative path: $stdout" ;; esac
  expect 1 "" env LL_FS_RO=. LL_FS_RW= "$pw" explain --from-env --uid 65534 --gid 65534 open /etc/passwd
  expect 1 "" env LL_FS_RO=. LL_FS_RW= "$pw" explain --from-env --cwd /etc open /etc/passwd
  expect 0 "" env LL_FS_RO=. LL_FS_RW= "$pw" explain --from-env --uid 65534 --gid 65534 open f
)

# Bad queries and identities.
expect 2 "no query" "$pw" explain
expect 2 '<query>:1:1: unknown operation "frob"' "$pw" explain frob /x
expect 2 '<query>:1:9: "O_BOGUS" is neither open flags' "$pw" explain open /x O_BOGUS
expect 2 '<query>:1:10: "99999" is not a port' "$pw" explain bind_tcp 99999
expect 2 'stat takes PATH' "$pw" explain stat
expect 2 '--uid "x" is not an id' "$pw" explain --uid x stat /
expect 2 'uid 4123456789 is not in the user database: give --gid' "$pw" explain --uid 4123456789 stat /
expect 2 '--caps: "cap_frob" is not a capability' "$pw" explain --caps cap_frob stat /
expect 2 '--groups: group "a" is not an id' "$pw" explain --groups 1,a stat /
expect 2 '--umask: umask "9" is not an octal mode' "$pw" explain --umask 9 stat /
expect 2 '--cwd "rel" is not an absolute path' "$pw" explain --cwd rel stat /
expect 2 '--pid 0 is not a process id' "$pw" explain --pid 0 stat /
expect 2 '--userns: range 1 "0:1000" at character 1: not INSIDE:OUTSIDE:COUNT' "$pw" explain --userns 0:1000 stat /
expect 2 '--userns: range 2 "1:1000:1" at character 10: it overlaps 0:1000:1 outside' "$pw" explain --userns 0:1000:1,1:1000:1 stat /
expect 2 'uid 5 has no mapping in --userns' "$pw" explain --userns 0:1000:1 --uid 5 --gid 0 stat /
expect 2 '--userns-gids needs --userns' "$pw" explain --userns-gids 0:0:1 stat /
expect 2 '--userns and --pid' "$pw" explain --userns 0:0:1 --pid $$ stat /
# unshare -r by uid 1000: its capabilities do not reach root's files.
run "$pw" explain --userns 0:1000:1 --gid 0 open /etc/shadow
[ "$rc" -eq 1 ] || fail "explain --userns open /etc/shadow: exit $rc, not 1: $stdout $stderr"
case "$stdout" in *"owner 0 does not map into it"*) ;; *) fail "--userns: no reason: $stdout" ;; esac
# The walk table shows each owner and group as the namespace has it too.
grep -Eq '^ +/etc/shadow +file +-rw-r----- +0 \(-\) +42 \(-\) ' <<<"$stdout" ||
  fail "--userns: the table's ids: $stdout"
if [ "$(id -u)" -eq 0 ]; then
  echo x >"$out/alices"
  chown 1000:1000 "$out/alices"
  run "$pw" explain --userns 0:1000:1 open "$out/alices"
  grep -Eq ' 1000 \(0\) +1000 \(0\) +r ' <<<"$stdout" ||
    fail "--userns: a mapped owner: $stdout"
fi
expect 2 '/proc/999999999/status' "$pw" explain --pid 999999999 stat /
expect 2 "$out/missing.toml" "$pw" explain --policy "$out/missing.toml" stat /
printf 'abi = 1\n[[ruleset]]\nhandled_access_fs = ["read_fil"]\n' >"$out/bad.toml"
expect 2 "$out/bad.toml:3:" "$pw" explain --policy "$out/bad.toml" stat /
expect 2 "" "$pw" explain --bogus-flag stat /

# Batches: everything is read first; a bad line answers nothing.
printf 'stat /\n\n# a comment\nopen "/etc/pass wd"\naccess /root W_OK\n' >"$out/ok.txt"
expect 0 "" "$pw" explain --uid 65534 --gid 65534 --batch "$out/ok.txt" --format result
[ "$stdout" = "$(printf 'ok\nENOENT\nEACCES')" ] || fail "batch results: $stdout"
expect 0 "" "$pw" explain --batch "$out/ok.txt" --json --format result
[ "$(printf '%s\n' "$stdout" | wc -l)" -eq 3 ] || fail "batch --json: $stdout"
case "$stdout" in *'"path":"/etc/pass wd"'*) ;; *) fail "batch --json echoes the path: $stdout" ;; esac
printf 'stat /\nopen /proc/self/status\n' >"$out/unknown.txt"
expect 3 "" "$pw" explain --uid 65534 --gid 65534 --batch "$out/unknown.txt"
printf 'stat /\nstat "/a\\q"\n' >"$out/bad.txt"
expect 2 "$out/bad.txt:2:9: unknown escape" "$pw" explain --batch "$out/bad.txt"
printf 'stat /\nstat /a\0b\n' >"$out/nul.txt"
expect 2 "$out/nul.txt:2:8: a NUL byte" "$pw" explain --batch "$out/nul.txt"
expect 2 "a query on the command line and --batch" "$pw" explain --batch "$out/ok.txt" stat /
printf 'stat /\n' | "$pw" explain --batch - --format result >"$out/stdin" || fail "batch from stdin"
[ "$(cat "$out/stdin")" = "ok" ] || fail "batch from stdin: $(cat "$out/stdin")"
# The batch reader is the one input reader: a directory is refused by
# name, an endless device stops at the 64 MiB input limit (it read until
# memory ran out), and so does a pipe on stdin; a last line without its
# newline is still a line.
expect 2 "explain: $out: is a directory, not a file" "$pw" explain --batch "$out"
expect 2 "explain: /dev/zero: input larger than 67108864 bytes" "$pw" explain --batch /dev/zero
set +e
head -c 70000000 /dev/zero | "$pw" explain --batch - >"$out/stdout" 2>"$out/stderr"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "an endless stdin: exit $rc"
grep -qxF "explain: <stdin>: input larger than 67108864 bytes" "$out/stderr" || fail "an endless stdin: $(cat "$out/stderr")"
printf 'stat /
stat /no/such' | "$pw" explain --batch - --format result >"$out/stdin" || true
[ "$(cat "$out/stdin")" = "$(printf 'ok\nENOENT')" ] || fail "batch from stdin without a last newline: $(cat "$out/stdin")"

# Names that are not UTF-8 (any byte but '/' and NUL is a name): JSON
# output replaces such bytes by U+FFFD and is still valid JSON; it never
# ends the process (nlohmann-json throws on them by default).
bad=$'\xff\xfe'
mkdir -m 0755 "$out/u8"
: >"$out/u8/x${bad}y"
json_ok() {  # json_ok WHAT: every line of $stdout is a JSON object
  printf '%s\n' "$stdout" | /usr/bin/python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin if l.strip()]' \
    || fail "$1: not JSON: $stdout"
}
expect 0 "" "$pw" explain --json stat "$out/u8/x${bad}y"
json_ok "explain --json of a non-UTF-8 name"
case "$stdout" in *"x"$'\xef\xbf\xbd\xef\xbf\xbd'"y"*) ;; *) fail "each byte as U+FFFD: $stdout" ;; esac
printf 'stat %s\nopen %s\n' "$out/u8/x${bad}y" "$out/u8/x${bad}y" >"$out/u8.txt"
expect 0 "" "$pw" explain --batch "$out/u8.txt" --json
json_ok "explain --batch --json"
expect 0 "" "$pw" explain --batch "$out/u8.txt" --json --format result
json_ok "explain --batch --json --format result"
expect 0 "" "$pw" map --json "$out/u8"
json_ok "map --json"
[ "$(printf '%s\n' "$stdout" | wc -l)" -eq 2 ] || fail "map --json lists both: $stdout"

# map.
expect 0 "" "$pw" map --colour never --depth 1 /usr/include
case "$stdout" in *"paths:"*readable*) ;; *) fail "map summary: $stdout" ;; esac
expect 2 "no/such: " "$pw" map /no/such
expect 2 "not a directory" "$pw" map /etc/passwd
expect 3 "" "$pw" map --depth 1 /proc/self

# map's tree prints rights where they change from the parent: a directory
# against its parent directory, another entry against the files: of its
# directory (what most entries there that are not directories may do). A
# world-writable directory after a sibling like it is not blank, a blank
# line is its parent's rights, and directories end in "/".
mkdir -m 0755 "$out/tr" "$out/tr/P" "$out/tr/P/C"
mkdir "$out/tr/P/A" "$out/tr/P/B"
chmod 0777 "$out/tr/P/A" "$out/tr/P/B"
for f in f1 f2 f3; do : >"$out/tr/P/$f"; done
chmod 0644 "$out/tr/P/f1" "$out/tr/P/f2"
chmod 0666 "$out/tr/P/f3"
creates="create_file,create_dir,create_symlink,create_fifo,create_socket"
line_is() {  # line_is 'exact line' WHAT: $stdout holds that line
  printf '%s\n' "$stdout" | grep -qxF -- "$1" || fail "$2: no line \"$1\" in: $stdout"
}
line_starts() {  # line_starts 'prefix' WHAT: $stdout holds a line starting so
  printf '%s\n' "$stdout" | PREFIX="$1" /usr/bin/python3 -c \
    'import os,sys; p=os.environ["PREFIX"]; sys.exit(0 if any(l.startswith(p) for l in sys.stdin) else 1)' ||
    fail "$2: no line starting \"$1\" in: $stdout"
}
expect 0 "" "$pw" map --uid 1000 --gid 1000 --groups none --colour never "$out/tr/P"
line_starts "$out/tr/P/  list,search  (list,search: every class has it; " "the top: every right and its source"
case "$stdout" in *"  files: read  (read: every class has it; write,truncate: other refuses w; "*"; as for f1)"*) ;;
  *) fail "the top's files: $stdout" ;;
esac
line_is "  A/  list,search,$creates  ($creates: every class has it)" "A changes from P"
line_is "  B/  list,search,$creates  ($creates: every class has it)" "B changes from P too, not from A"
line_is "  C/" "C has P's rights"
line_is "  f1" "f1 has the files: rights"
line_is "  f2" "f2 has the files: rights"
line_is "  f3  read,write,truncate  (write,truncate: every class has it)" "f3 changes from the files: rights"
case "$stdout" in *"(a line shows rights where they differ from its parent directory's"*) ;;
  *) fail "the tree's legend: $stdout" ;; esac
expect 0 "" "$pw" map --uid 1000 --gid 1000 --groups none --colour never --only writable "$out/tr/P"
line_starts "$out/tr/P/A/  list,search,$creates  (" "--only: A whole"
line_starts "$out/tr/P/B/  list,search,$creates  (" "--only: B whole, not blank"
line_starts "$out/tr/P/f3  read,write,truncate  (" "--only: f3 whole"
case "$stdout" in *"$out/tr/P/C"*|*"$out/tr/P/f1"*) fail "--only writable: $stdout" ;; esac
map_help="$("$pw" help map)"
case "$map_help" in *"where they differ from its parent"*) ;; *) fail "map's help: $map_help" ;; esac

# remove of a non-empty directory: the permission checks pass (Linux makes
# them before the emptiness check), so it is allowed, with the note; link
# is a right of its own, not for directories.
expect 0 "" "$pw" map --json --depth 1 "$out/tr"
printf '%s\n' "$stdout" | /usr/bin/python3 -c '
import json, sys
rows = {j["path"]: j for j in map(json.loads, sys.stdin)}
p = rows[sys.argv[1] + "/P"]
assert p["rights"]["remove"] is True, p
assert "ENOTEMPTY" in p["notes"]["remove"] and "once empty" in p["sources"]["remove"], p
assert "link" not in p["rights"], p
' "$out/tr" || fail "map --json of a non-empty directory: $stdout"
expect 0 "" "$pw" map --json "$out/tr/P"
printf '%s\n' "$stdout" | /usr/bin/python3 -c '
import json, sys
rows = {j["path"]: j for j in map(json.loads, sys.stdin)}
f = rows[sys.argv[1] + "/f1"]
assert f["rights"]["link"] is True and f["rights"]["rename"] is True, f
' "$out/tr/P" || fail "map --json: link: $stdout"
# The queries' own new name as an entry: renaming a name onto itself
# succeeds whoever asks, so its rename asks about another name.
mkdir -m 0755 "$out/nw"
: >"$out/nw/~pw-new"
chmod 0644 "$out/nw/~pw-new"
expect 0 "" "$pw" map --uid 1000 --gid 1000 --groups none --json "$out/nw"
printf '%s\n' "$stdout" | /usr/bin/python3 -c '
import json, sys
rows = {j["path"]: j for j in map(json.loads, sys.stdin)}
f = rows[sys.argv[1] + "/~pw-new"]
assert f["rights"]["rename"] is False and f["rights"]["link"] is False, f
' "$out/nw" || fail "map --json: the entry ~pw-new: $stdout"
expect 0 "" "$pw" explain --uid 1000 --gid 1000 --groups none rename "$out/nw/~pw-new" "$out/nw/~pw-new"

# The Landlock rule that grants a right is named with its policy file:line.
printf '%s\n' 'abi = 1' '[[ruleset]]' 'handled_access_fs = ["read_file", "read_dir", "write_file"]' \
  '[[path_beneath]]' 'allowed_access = ["read_file", "read_dir"]' 'parent = ["/"]' \
  '[[path_beneath]]' 'allowed_access = ["write_file"]' "parent = [\"$out/tr/P\"]" >"$out/ll.toml"
expect 0 "" "$pw" map --policy "$out/ll.toml" --colour never --only writable "$out/tr/P"
case "$stdout" in
  *"$out/tr/P/f1  "*"write"*"Landlock layer 1 ($out/ll.toml) rule $out/tr/P ($out/ll.toml:9)"*) ;;
  *) fail "the rule granting write: $stdout" ;;
esac

# Names are written with C escapes, quoted when needed: a name cannot
# forge a line or send a terminal escape.
mkdir -m 0755 "$out/esc"
: >"$out/esc/"$'\e[2Jevil\nfake  line'
: >"$out/esc/plain name"
expect 0 "" "$pw" map --colour never "$out/esc"
case "$stdout" in *$'\e'*) fail "map printed a raw escape: $stdout" ;; esac
line_starts '  "\033[2Jevil\nfake  line"' "the escaped name"
line_starts '  "plain name"' "a name with a blank"
if printf '%s\n' "$stdout" | grep -q '^fake'; then fail "a forged line: $stdout"; fi
expect 0 "" "$pw" map --colour never --only readable "$out/esc"
line_starts "\"$out/esc/\\033[2Jevil\\nfake  line\"  read" "--only: the escaped path"
case "$stdout" in *$'\e'*) fail "map --only printed a raw escape: $stdout" ;; esac
expect 0 "" "$pw" map --json "$out/esc"
json_ok "map --json of escapes"
[ "$(printf '%s\n' "$stdout" | wc -l)" -eq 3 ] || fail "map --json, one line each: $stdout"

# Deeper than PATH_MAX: every entry is listed (read relative to its
# directory); an entry whose path is 4096 bytes or more is unknown with
# the reason, and counted; exit 3.
/usr/bin/python3 -c '
import os, sys
os.mkdir(sys.argv[1], 0o755)
fd = os.open(sys.argv[1], os.O_RDONLY)
for _ in range(2100):
    os.mkdir("d", 0o755, dir_fd=fd)
    n = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = n
os.close(fd)
' "$out/deep"
toolong=$(/usr/bin/python3 -c 'import sys; b = len(sys.argv[1]); print(sum(1 for k in range(2101) if b + 2 * k >= 4096))' "$out/deep")
expect 3 "" "$pw" map --colour never "$out/deep"
case "$stdout" in *"2101 paths: "*" unknown ($toolong longer than PATH_MAX)"*) ;;
  *) fail "map of a deep tree: $(printf '%s\n' "$stdout" | tail -3)" ;;
esac
case "$stdout" in *"unknown: path longer than PATH_MAX: reachable only relative to a directory"*) ;;
  *) fail "map of a deep tree: no reason" ;;
esac
expect 3 "" "$pw" map --json "$out/deep"
printf '%s\n' "$stdout" | /usr/bin/python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) == 2101, len(rows)
deep = [r for r in rows if len(r["path"].encode()) >= 4096]
assert deep and all(set(r["rights"].values()) == {"unknown"} for r in deep), deep[:1]
assert all("PATH_MAX" in s for r in deep for s in r["sources"].values()), deep[:1]
# Short of PATH_MAX by more than the name a query adds, nothing is unknown.
known = [r for r in rows if len(r["path"].encode()) < 4088]
bad = [r for r in known if "unknown" in r["rights"].values()]
assert not bad, bad[:1]
' || fail "map --json of a deep tree"

# --diff-uid for a uid the user database lacks: its gid and groups given
# as --gid and --groups give the first identity's.
expect 2 "uid 4123456789 is not in the user database: give --diff-gid" "$pw" map --diff-uid 4123456789 "$out/tr"
expect 2 "" "$pw" map --diff-gid 5 "$out/tr"
expect 0 "" "$pw" map --colour never --diff-uid 4123456789 --diff-gid 4123456789 --diff-groups none "$out/tr/P"
case "$stdout" in *"paths differ"*) ;; *) fail "--diff-uid with --diff-gid: $stdout" ;; esac

# --verify --scratch: changing queries run on the kernel inside the scratch
# directory only, which is put back exactly (listing with xattrs and
# mtimes before and after); escapes through symlinks are refused.
if [ "$(id -u)" -eq 0 ]; then
  scr="$out/scratch"
  mkdir -p "$scr/sub"
  printf 'hi\n' >"$scr/f"
  chmod 0640 "$scr/f"
  chown 1000:1000 "$scr/sub"
  /usr/bin/python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.pw", b"v")' "$scr/f"
  ln -s /etc "$scr/etc"
  listing() {
    /usr/bin/python3 - "$scr" <<'PY'
import os, sys
root = sys.argv[1]
for d, dirs, files in os.walk(root):
    for n in sorted([d] + [os.path.join(d, x) for x in dirs + files]):
        st = os.lstat(n)
        xs = sorted((a, os.getxattr(n, a, follow_symlinks=False)) for a in os.listxattr(n, follow_symlinks=False)) if not os.path.islink(n) else []
        body = open(n, 'rb').read() if os.path.isfile(n) and not os.path.islink(n) else b''
        print(n, oct(st.st_mode), st.st_uid, st.st_gid, st.st_size, st.st_nlink, st.st_mtime_ns, xs, body)
PY
  }
  listing | sort -u >"$out/before"
  for q in "unlink $scr/f" "rename $scr/f $scr/sub/g" "chmod $scr/f 0600" "truncate $scr/f" \
           "mkdir $scr/new" "rmdir $scr/sub" "link $scr/f $scr/h" "chown $scr/f 1000:1000" \
           "open $scr/n O_WRONLY|O_CREAT|O_EXCL"; do
    # shellcheck disable=SC2086
    expect 0 "" "$pw" explain --verify --scratch "$scr" --colour never $q
    case "$stdout" in *"kernel: ok — agrees"*) ;; *) fail "verify $q: $stdout" ;; esac
  done
  # As uid 1000: refused by the kernel as by the model.
  expect 1 "" "$pw" explain --uid 1000 --gid 1000 --verify --scratch "$scr" --colour never unlink "$scr/f"
  case "$stdout" in *"kernel: EACCES — agrees"*) ;; *) fail "verify as 1000: $stdout" ;; esac
  listing | sort -u >"$out/after"
  cmp -s "$out/before" "$out/after" || fail "the scratch directory changed: $(diff "$out/before" "$out/after")"
  expect 0 "" "$pw" explain --verify --scratch "$scr" --colour never chmod "$scr/etc" 0700
  case "$stdout" in *"unverified"*"symlink the call would follow"*) ;; *) fail "escape: $stdout" ;; esac
  # Landlock has no right for xattrs: a setxattr through a symlink would
  # change its target outside (the target here is the test's own file).
  printf 'outside\n' >"$out/outside"
  ln -s "$out/outside" "$scr/evil"
  for q in "setxattr $scr/evil user.pw x" "removexattr $scr/evil user.pw"; do
    # shellcheck disable=SC2086
    run "$pw" explain --verify --scratch "$scr" --colour never $q
    case "$stdout" in *"unverified"*"symlink the call would follow"*) ;; *) fail "escape through $q: $stdout" ;; esac
  done
  /usr/bin/python3 -c 'import os,sys; assert os.listxattr(sys.argv[1]) == [], os.listxattr(sys.argv[1])' "$out/outside" \
    || fail "setxattr through a symlink changed a file outside the scratch directory"
  rm "$scr/evil"
  expect 1 "" "$pw" explain --verify --scratch "$scr" --colour never unlink "$scr/etc/nonexistent-pw"
  case "$stdout" in *"unverified"*"outside --scratch"*) ;; *) fail "escape 2: $stdout" ;; esac
  expect 1 "" "$pw" explain --verify --colour never unlink /nonexistent-pw
  case "$stdout" in *"unverified"*"--scratch"*) ;; *) fail "no scratch: $stdout" ;; esac
  expect 2 "--scratch is for --verify" "$pw" explain --scratch "$scr" stat /
fi

# Names hold any byte but '/' and NUL. Text output writes them with C
# escapes, quoted when needed (src/input/text_quote.h): one batch answer
# is one line, and no name reaches the terminal as a control character.
esc="$out/names"
mkdir -m 0755 "$esc"
evil=$'\e[2Jevil\nfake  line'
mkdir -m 0755 "$esc/$evil"
: >"$esc/$evil/f"
: >"$esc/a"$'\n'"b"
printf '%s\n' "stat \"$esc/a\\nb\"" "stat \"$esc/\\033[2Jevil\\nfake  line/f\"" \
  "stat \"$esc/no\\nsuch\"" "stat /" >"$out/esc.txt"
expect 0 "" "$pw" explain --colour never --batch "$out/esc.txt"
[ "$(printf '%s\n' "$stdout" | wc -l)" -eq 4 ] || fail "one answer per line: $stdout"
case "$stdout" in *$'\e'*) fail "a name's ESC reached the output: $stdout" ;; esac
grep -qF "stat \"$esc/a\\nb\": ok walk: $esc/a\\nb (" <<<"$stdout" || fail "a newline in a name: $stdout"
grep -qF "stat \"$esc/\\033[2Jevil\\nfake  line/f\": ok walk: $esc/\\033[2Jevil\\nfake  line/f (" <<<"$stdout" \
  || fail "ESC in a name: $stdout"
grep -qF "stat \"$esc/no\\nsuch\": ENOENT walk: $esc/no\\nsuch does not exist" <<<"$stdout" \
  || fail "a name in a reason: $stdout"
# One query: the header, the walk table and the reason the same way.
expect 0 "" "$pw" explain --uid 65534 --gid 65534 --colour never stat "$esc/$evil/f"
case "$stdout" in *$'\e'*) fail "a name's ESC reached the output: $stdout" ;; esac
grep -qF "stat \"$esc/\\033[2Jevil\\nfake  line/f\": ok" <<<"$stdout" || fail "the header: $stdout"
grep -qE "^    \"$esc/\\\\033\[2Jevil\\\\nfake  line\" +dir " <<<"$stdout" || fail "the walk table: $stdout"
expect 1 "" "$pw" explain --colour never stat "$esc/$evil/none"
grep -qF "walk: $esc/\\033[2Jevil\\nfake  line/none does not exist" <<<"$stdout" || fail "the reason: $stdout"
# A name that is not UTF-8, a quote, a backslash and a blank.
: >"$esc/q\"b\\s p"$'\xff'
expect 0 "" "$pw" explain --colour never stat "$esc/q\"b\\s p"$'\xff'
grep -qxF "stat \"$esc/q\\\"b\\\\s p\\377\": ok" <<<"$stdout" || fail "quote, backslash, blank, 0xff: $stdout"
# What is printed reads back: the printed name, as a batch line, is the same file.
printf '%s\n' "$(sed -n 's/: ok$//p' <<<"$stdout" | head -1)" >"$out/back.txt"
expect 0 "" "$pw" explain --batch "$out/back.txt" --format result
[ "$stdout" = ok ] || fail "a printed name read back: $(cat "$out/back.txt"): $stdout"

# --help lists every flag the grammar takes.
expect 0 "" "$pw" explain --help
for form in 'access PATH [F_OK|R_OK|W_OK|X_OK|AT_EACCESS|AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH]' \
            'rename PATH PATH2 [RENAME_NOREPLACE|RENAME_EXCHANGE|RENAME_WHITEOUT]' \
            'link PATH PATH2 [AT_SYMLINK_FOLLOW|AT_EMPTY_PATH]' 'unlink PATH [AT_REMOVEDIR]' \
            'open PATH [O_RDONLY|O_WRONLY|O_RDWR|O_CREAT|O_EXCL|'; do
  grep -qF -- "$form" <<<"$stdout" || fail "explain --help lacks $form: $stdout"
done

# --batch --format result --json: path2 when the query has one.
printf 'rename /no/a /no/b\nstat /\nsymlink /no/l target\n' >"$out/p2.txt"
expect 0 "" "$pw" explain --batch "$out/p2.txt" --json --format result
/usr/bin/python3 -c '
import json, sys
a = [json.loads(l) for l in sys.argv[1].splitlines()]
assert a[0]["path"] == "/no/a" and a[0]["path2"] == "/no/b", a[0]
assert "path2" not in a[1], a[1]
assert a[2]["path"] == "/no/l" and a[2]["path2"] == "target", a[2]' "$stdout" || fail "path2: $stdout"

# Batch text marks what --verify could not check, and colours like a
# single query (--colour always|never; auto: only on a terminal).
printf 'stat /\naccess /root R_OK\n' >"$out/col.txt"
expect 0 "" "$pw" explain --colour always --batch "$out/col.txt"
case "$stdout" in *$'\e[32m'ok$'\e[0m'*) ;; *) fail "batch --colour always: $stdout" ;; esac
expect 0 "" "$pw" explain --colour never --batch "$out/col.txt"
case "$stdout" in *$'\e'*) fail "batch --colour never: $stdout" ;; esac
expect 0 "" "$pw" explain --batch "$out/col.txt"
case "$stdout" in *$'\e'*) fail "batch --colour auto, piped: $stdout" ;; esac
printf 'stat /\nstat /no/such\n' >"$out/col2.txt"
expect 0 "" "$pw" explain --colour always --batch "$out/col2.txt" --format result
[ "$stdout" = $'\e[32mok\e[0m\n\e[31mENOENT\e[0m' ] || fail "batch --format result --colour always: $stdout"
expect 0 "" "$pw" explain --batch "$out/col2.txt" --format result
[ "$stdout" = $'ok\nENOENT' ] || fail "batch --format result, piped: $stdout"

# An allowed bind_tcp or connect_tcp names the layer and the port rule
# that granted it, as a filesystem grant does.
cat >"$out/net.toml" <<'T'
[[ruleset]]
handled_access_net = ["bind_tcp", "connect_tcp"]

[[net_port]]
allowed_access = ["bind_tcp"]
port = [8080]
T
expect 0 "" "$pw" explain --policy "$out/net.toml" --colour never bind_tcp 8080
grep -qE "landlock layer 1 \($out/net.toml\): asked bind_tcp; bind_tcp granted by the rule on port 8080 \($out/net.toml:[0-9]+\)" <<<"$stdout" \
  || fail "a net grant: $stdout"
expect 0 "" "$pw" explain --policy "$out/net.toml" --json bind_tcp 8080
/usr/bin/python3 -c '
import json, sys, re
j = json.loads(sys.argv[1])
[l] = j["layers"]
assert l["layer"] == 1 and l["kind"] == "net" and l["requested"] == ["bind_tcp"] and l["missing"] == [], l
[g] = l["grants"]
assert g["port"] == 8080 and g["rights"] == ["bind_tcp"] and re.fullmatch(r".*/net\.toml:\d+", g["origin"]), g' "$stdout" \
  || fail "a net grant in JSON: $stdout"
expect 1 "" "$pw" explain --policy "$out/net.toml" --json connect_tcp 8080
/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
[l] = j["layers"]
assert l["missing"] == ["net.connect_tcp"] and l["grants"] == [], l' "$stdout" || fail "a net denial: $stdout"

# --from-env's layer stands where --from-env stands among the --policy
# options.
order() {  # order ARGS...: the policy of each layer, in order
  run env LL_FS_RO=/ LL_FS_RW= "$pw" explain "$@" --json open / "O_RDONLY|O_DIRECTORY"
  /usr/bin/python3 -c 'import json,sys; print(" ".join(l["policy"].rsplit("/",1)[-1] for l in json.loads(sys.argv[1])["layers"]))' "$stdout"
}
cat >"$out/fs.toml" <<'T'
[[ruleset]]
handled_access_fs = ["read_dir"]

[[path_beneath]]
allowed_access = ["read_dir"]
parent = ["/"]
T
[ "$(order --from-env --policy "$out/fs.toml")" = "environment fs.toml" ] || fail "--from-env first: $(order --from-env --policy "$out/fs.toml")"
[ "$(order --policy "$out/fs.toml" --from-env)" = "fs.toml environment" ] || fail "--from-env last"
[ "$(order --policy "$out/fs.toml" --from-env --policy "$out/fs.toml")" = "fs.toml environment fs.toml" ] \
  || fail "--from-env between: $(order --policy "$out/fs.toml" --from-env --policy "$out/fs.toml")"

# A rename or link across directories: each layer's verdict in "layers"
# (both sides merged), the sides in "refer".
mkdir -p "$out/mv/a" "$out/mv/b"
: >"$out/mv/a/f"
cat >"$out/mv.toml" <<T
[[ruleset]]
handled_access_fs = ["make_reg", "remove_file", "refer"]

[[path_beneath]]
allowed_access = ["make_reg", "remove_file", "refer"]
parent = ["$out/mv/a"]

[[path_beneath]]
allowed_access = ["make_reg"]
parent = ["$out/mv/b"]
T
# (The kernel gives the same: --verify below, as root.)
expect 1 "" "$pw" explain --policy "$out/mv.toml" --json rename "$out/mv/a/f" "$out/mv/b/f"
/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["result"] == "EXDEV", j["result"]
[l] = j["layers"]
assert l["layer"] == 1 and l["missing"] == ["fs.refer"], l
rules = sorted(g["rule"].rsplit("/", 1)[-1] for g in l["grants"])
assert rules == ["a", "b"], l
sides = j["refer"]
assert len(sides) == 2 and sides[0]["source"] and not sides[1]["source"], sides
assert sides[0]["layers"][0]["missing"] == [] and sides[1]["layers"][0]["missing"] == ["fs.refer"], sides' "$stdout" \
  || fail "rename layers: $stdout"
expect 1 "" "$pw" explain --policy "$out/mv.toml" --colour never rename "$out/mv/a/f" "$out/mv/b/f"
grep -qE "^  landlock layer 1 \([^)]*mv.toml\): asked [^;]*; .*missing fs\.refer " <<<"$stdout" \
  || fail "rename: the merged layer line: $stdout"
grep -qF "  landlock layer 1 ($out/mv.toml), to $out/mv/b: asked" <<<"$stdout" || fail "rename: the sides: $stdout"

if [ "$(id -u)" -eq 0 ]; then
  # --verify of an unknown: the kernel's answer, not compared.
  expect 3 "" "$pw" explain --verify --colour never open /proc/self/status
  case "$stdout" in *"kernel: ok — not compared (the model's answer is unknown)"*) ;; *) fail "verify unknown: $stdout" ;; esac
  case "$stdout" in *DISAGREES*) fail "verify unknown: a disagreement: $stdout" ;; esac
  expect 3 "" "$pw" explain --verify --json open /proc/self/status
  /usr/bin/python3 -c '
import json, sys
v = json.loads(sys.argv[1])["verified"]
assert v["kernel"] == "ok" and v["agrees"] is None and "not compared" in v["why"], v' "$stdout" \
    || fail "verify unknown, JSON: $stdout"
  printf 'open /proc/self/status\n' >"$out/unk.txt"
  expect 3 "" "$pw" explain --verify --colour never --batch "$out/unk.txt"
  grep -qF "[kernel: ok, not compared: the model's answer is unknown]" <<<"$stdout" || fail "verify unknown, batch: $stdout"
  # --verify of relative paths from any working directory, as the caller
  # and as another uid: the kernel's child stands where the asker stands.
  mkdir -m 0700 "$out/rel/priv"
  (
    cd "$out/rel"
    expect 0 "" "$pw" explain --verify --colour never stat f
    case "$stdout" in *"kernel: ok — agrees"*) ;; *) fail "verify a relative path: $stdout" ;; esac
    expect 1 "" "$pw" explain --uid 65534 --gid 65534 --verify --colour never stat priv/x
    case "$stdout" in *"EACCES"*"kernel: EACCES — agrees"*) ;; *) fail "verify a relative path as 65534: $stdout" ;; esac
    expect 1 "" "$pw" explain --verify --colour never stat ../no-such
    case "$stdout" in *"kernel: ENOENT — agrees"*) ;; *) fail "verify ..: $stdout" ;; esac
    # Batch text marks each answer: agreed, or unverified and why.
    printf 'stat f\nmkdir newd\naccess priv R_OK\n' >"$out/vb.txt"
    expect 0 "" "$pw" explain --uid 65534 --gid 65534 --verify --colour never --batch "$out/vb.txt"
    printf '%s\n' "$stdout" | sed -n 1p | grep -qE "^stat f: ok .*\[kernel agrees\]$" || fail "batch verify: $stdout"
    printf '%s\n' "$stdout" | sed -n 2p | grep -qF "[unverified: changes the host: run only inside a directory given with --scratch]" \
      || fail "batch unverified: $stdout"
    printf '%s\n' "$stdout" | sed -n 3p | grep -qE "^access priv: EACCES .*\[kernel agrees\]$" || fail "batch verify EACCES: $stdout"
  )
  # The rename across directories above, on the kernel too (inside a
  # scratch directory): denied with EXDEV, and allowed once the rule
  # covers both sides.
  expect 1 "" "$pw" explain --policy "$out/mv.toml" --verify --scratch "$out/mv" --colour never \
    rename "$out/mv/a/f" "$out/mv/b/f"
  case "$stdout" in *"kernel: EXDEV — agrees"*) ;; *) fail "verify the rename: $stdout" ;; esac
  sed -i 's/^allowed_access = \["make_reg"\]$/allowed_access = ["make_reg", "refer"]/' "$out/mv.toml"
  expect 0 "" "$pw" explain --policy "$out/mv.toml" --verify --scratch "$out/mv" --json \
    rename "$out/mv/a/f" "$out/mv/b/f"
  /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["result"] == "ok" and j["verified"]["agrees"] is True, j
[l] = j["layers"]
assert l["missing"] == [] and sorted(g["rule"].rsplit("/", 1)[-1] for g in l["grants"]) == ["a", "b"], l' "$stdout" \
    || fail "verify the allowed rename: $stdout"
fi
# /dev/tty opens the caller's controlling terminal: explain run in a
# session of its own (setsid) has none, and is answered ENXIO.
if [ -c /dev/tty ]; then
  expect 1 "" setsid -w "$pw" explain --colour never open /dev/tty O_RDWR
  case "$stdout" in *"ENXIO"*"which opens the process's controlling terminal, and it has none"*) ;;
    *) fail "/dev/tty without a controlling terminal: $stdout" ;; esac
fi
# Security modules besides capabilities and Landlock (docs/commands.md):
# -v lists each with its state; where one could refuse, an allowed answer
# is unknown (exit 3) and names it; a denial stays a denial.
expect 0 "" "$pw" explain -v --colour never stat /
case "$stderr" in *"security module landlock: modelled: refuses nothing"*) ;; *) fail "-v: $stderr" ;; esac
expect 2 '--trust-lsm: "nosuch" is not a security module' "$pw" explain --trust-lsm nosuch stat /
if [ "$(id -u)" -eq 0 ]; then
  bpf_idle=0
  expect 0 "" "$pw" explain -v stat /
  case "$stderr" in *"security module bpf: no LSM program attached"*) bpf_idle=1 ;; esac
  if [ "$bpf_idle" = 1 ]; then
    # Which BPF LSM programs are attached takes CAP_SYS_ADMIN to read:
    # another user cannot know that none is.
    # (From /: where the test runs may be a directory nobody may search,
    # a clone under mktemp -d's 0700, which would leave explain's working
    # directory unknown.)
    as_nobody() { (cd / && setpriv --reuid 65534 --regid 65534 --clear-groups "$@"); }
    expect 3 "" as_nobody "$pw" explain --colour never stat /
    case "$stdout" in *"unknown: bpf (LSM programs not known: reading which are attached takes CAP_SYS_ADMIN) also decides; not modelled (Unix and Landlock allow it"*) ;;
      *) fail "stat / as nobody under the BPF LSM: $stdout" ;; esac
    expect 1 "" as_nobody "$pw" explain --colour never access /root W_OK
    expect 0 "" as_nobody "$pw" explain --trust-lsm bpf --colour never stat /
    expect 0 "" as_nobody "$pw" explain --trust-lsm yama,bpf --format result stat /
  fi
fi
echo "cli_test: ok"
