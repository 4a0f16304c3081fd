#!/usr/bin/env bash
# The example policies (examples/policies/) do what their headers say:
# each passes `policy check`; then copies of them, with their path
# variables pointed at a scratch tree, answer a table of queries (explain
# --batch), the kernel agrees on the read-only ones (explain --verify), and
# `run` confines /bin/sh to what they allow.
#
# The copies: each policy takes every site-specific path from a variable
# (`[[variable]]`, one `literal = [...]` line); setvar rewrites that line in
# the copy. The system paths (/usr, /bin, /lib, /etc, /dev/null) stay the
# real ones. Usage: policies_test.sh PATHWARDEN EXAMPLES_DIR
set -euo pipefail
pw="$1"
src="$2"
. "$(dirname "$0")/../lib.sh"
scratch t /tmp/pw-examples.XXXXXX

policies=(web-server.toml build-job.toml ci-step.json coding-agent.toml pdf-viewer.toml backup-job.toml)
for p in "${policies[@]}"; do
  "$pw" policy check "$src/$p" || fail "policy check $p"
done

# The scratch tree (searchable by all: some queries are asked as uid 33).
chmod 755 "$t"
mkdir -p "$t"/srv/www "$t"/var/www "$t"/var/log/nginx "$t"/etc/ssl/private "$t"/etc/nginx \
  "$t"/ws/src "$t"/ws/build "$t"/tmp "$t"/home/alice/Documents "$t"/home/alice/Downloads \
  "$t"/home/alice/.cache/pdfviewer "$t"/home/alice/.ssh "$t"/backup "$t"/outside "$t"/pol
echo '<h1>hi</h1>' >"$t"/srv/www/index.html
echo old >"$t"/var/www/old.html
echo log >"$t"/var/log/nginx/access.log
echo key >"$t"/etc/ssl/private/key.pem
chmod 600 "$t"/etc/ssl/private/key.pem
echo conf >"$t"/etc/nginx/nginx.conf
echo 'int main(void) { return 0; }' >"$t"/ws/src/main.c
printf '#!/bin/sh\necho built\n' >"$t"/ws/run.sh
cp "$t"/ws/run.sh "$t"/tmp/a.out
cp "$t"/ws/run.sh "$t"/home/alice/run.sh
chmod 755 "$t"/ws/run.sh "$t"/tmp/a.out "$t"/home/alice/run.sh
echo pdf >"$t"/home/alice/Documents/paper.pdf
echo pdf >"$t"/home/alice/Downloads/x.pdf
echo png >"$t"/home/alice/.cache/pdfviewer/thumb.png
echo secret >"$t"/home/alice/.ssh/id_ed25519
chmod 600 "$t"/home/alice/.ssh/id_ed25519
echo notes >"$t"/home/alice/notes.txt
echo tar >"$t"/backup/old.tar
echo file >"$t"/outside/file

# setvar FILE NAME VALUE...: the variable NAME of the copy FILE takes the
# VALUEs (TOML: the literal line after `name = "NAME"`; JSON: the
# variable's one line).
setvar() {
  local f="$1" name="$2"; shift 2
  local lit="" v
  for v in "$@"; do lit="$lit${lit:+, }\"$v\""; done
  case "$f" in
    *.toml)
      awk -v name="$name" -v lit="$lit" '
        $0 == "name = \"" name "\"" { armed = 1; print; next }
        armed && /^literal = / { print "literal = [" lit "]"; armed = 0; done = 1; next }
        { print }
        END { exit done ? 0 : 1 }' "$f" >"$f.new" || fail "setvar $f $name: no such variable"
      mv "$f.new" "$f" ;;
    *.json)
      grep -q "\"name\": \"$name\"" "$f" || fail "setvar $f $name: no such variable"
      sed -i "/\"name\": \"$name\"/s|\"literal\": \[[^]]*\]|\"literal\": [$lit]|" "$f" ;;
  esac
  grep -qF "$1" "$f" || fail "setvar $f $name: not substituted"
}
for p in "${policies[@]}"; do cp "$src/$p" "$t/pol/$p"; done
P="$t/pol"
setvar "$P/web-server.toml" docroot "$t/srv/www" "$t/var/www"
setvar "$P/web-server.toml" logs "$t/var/log/nginx"
setvar "$P/web-server.toml" tls "$t/etc/ssl"
setvar "$P/web-server.toml" conf "$t/etc/nginx"
for p in build-job.toml ci-step.json coding-agent.toml; do
  setvar "$P/$p" workspace "$t/ws"
  setvar "$P/$p" tmp "$t/tmp"
done
setvar "$P/pdf-viewer.toml" documents "$t/home/alice/Documents" "$t/home/alice/Downloads"
setvar "$P/pdf-viewer.toml" cache "$t/home/alice/.cache/pdfviewer"
setvar "$P/backup-job.toml" sources "$t/home" "$t/etc"
setvar "$P/backup-job.toml" destination "$t/backup"
for p in "${policies[@]}"; do
  "$pw" policy check "$P/$p" || fail "policy check of the copy of $p"
done

# expect POLICY [IDENTITY...] <<TABLE: each line "QUERY = RESULT" ($T for
# the scratch tree); one batch, every answer compared. Asked as the caller (root: Unix
# permissions pass on the scratch tree, so Landlock decides; another user
# owns the scratch tree, so the same).
expect() {
  local p="$1" line q want n=0 errs=0
  shift
  local -a who=("$@")
  local -a qs wants
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    q="${line% = *}"; want="${line##* = }"
    qs+=("${q//\$T/$t}"); wants+=("$want")
  done
  printf '%s\n' "${qs[@]}" >"$t/queries"
  set +e
  # The tree is this test's own: no process explain cannot see runs a
  # program from it (--assume-unseen-run-nothing).
  "$pw" explain --policy "$P/$p" "${who[@]}" --assume-unseen-run-nothing --batch "$t/queries" \
    --format result >"$t/answers" 2>"$t/err"
  local rc=$?
  set -e
  [ "$rc" -le 1 ] || fail "$p: explain --batch exit $rc: $(cat "$t/err")"
  # No rule is silently weakened (a directory right on a file is dropped
  # with a warning); only a system path this machine lacks may be skipped.
  if grep -v 'no such file or directory; skipped' "$t/err" | grep -q .; then
    fail "$p: warnings: $(cat "$t/err")"
  fi
  mapfile -t got <"$t/answers"
  [ "${#got[@]}" -eq "${#qs[@]}" ] || fail "$p: ${#got[@]} answers to ${#qs[@]} queries"
  for ((n = 0; n < ${#qs[@]}; n++)); do
    if [ "${got[n]}" != "${wants[n]}" ]; then
      echo "policies_test: $p: ${qs[n]} = ${got[n]}, expected ${wants[n]}" >&2
      errs=$((errs + 1))
    fi
  done
  [ "$errs" -eq 0 ] || fail "$p: $errs unexpected answers"
  echo "policies_test: $p: ${#qs[@]} queries as expected"
}

expect web-server.toml <<'Q'
open $T/srv/www/index.html = ok
open $T/var/www/old.html = ok
stat $T/srv/www/index.html = ok
open $T/srv/www/index.html O_WRONLY = EACCES
open $T/srv/www/new.html O_WRONLY|O_CREAT = EACCES
mkdir $T/srv/www/uploads = EACCES
open $T/var/log/nginx/access.log O_WRONLY|O_APPEND = ok
open $T/var/log/nginx/error.log O_WRONLY|O_CREAT|O_APPEND = ok
open $T/var/log/nginx/access.log O_WRONLY|O_TRUNC = EACCES
unlink $T/var/log/nginx/access.log = EACCES
open $T/etc/ssl/private/key.pem = ok
open $T/etc/nginx/nginx.conf = ok
open $T/etc/nginx/nginx.conf O_RDWR = EACCES
open $T/outside/file = EACCES
open /etc/passwd = EACCES
exec_check /usr/bin/env = ok
open /dev/null O_WRONLY = ok
bind_tcp 8080 = EACCES
connect_tcp 443 = EACCES
Q
# Ports below 1024 need CAP_NET_BIND_SERVICE besides the policy: www-data
# with it may bind 80 and 443 (Landlock allows), without it not (Unix).
expect web-server.toml --uid 33 --gid 33 --groups none --caps NET_BIND_SERVICE <<'Q'
bind_tcp 80 = ok
bind_tcp 443 = ok
bind_tcp 8080 = EACCES
connect_tcp 443 = EACCES
Q
expect web-server.toml --uid 33 --gid 33 --groups none --caps none <<'Q'
bind_tcp 80 = EACCES
bind_tcp 8080 = EACCES
Q

build_common() {
cat <<'Q'
open $T/ws/src/main.c O_RDWR = ok
open $T/ws/build/main.o O_WRONLY|O_CREAT|O_TRUNC = ok
mkdir $T/ws/build/obj = ok
rename $T/ws/src/main.c $T/ws/build/main.c = ok
unlink $T/ws/src/main.c = ok
exec_check $T/ws/run.sh = ok
open $T/tmp/cc1.s O_WRONLY|O_CREAT = ok
exec_check $T/tmp/a.out = EACCES
open /etc/passwd = ok
open /etc/passwd O_WRONLY = EACCES
exec_check /usr/bin/env = ok
open /usr/bin/env O_WRONLY = EACCES
open $T/outside/file O_WRONLY = EACCES
open $T/outside/file = EACCES
mkdir $T/outside/d = EACCES
open $T/home/alice/notes.txt = EACCES
bind_tcp 8080 = EACCES
Q
}
{ build_common; echo 'connect_tcp 443 = EACCES'; echo 'connect_tcp 80 = EACCES'; } | expect build-job.toml
{ build_common; echo 'connect_tcp 443 = ok'; echo 'connect_tcp 80 = EACCES'; } | expect ci-step.json

expect coding-agent.toml <<'Q'
open $T/ws/src/main.c O_RDWR = ok
unlink $T/ws/src/main.c = ok
symlink $T/ws/link src/main.c = ok
exec_check $T/ws/run.sh = ok
open $T/tmp/scratch O_WRONLY|O_CREAT = ok
exec_check $T/tmp/a.out = EACCES
open $T/home/alice/notes.txt = EACCES
open $T/home/alice/.ssh/id_ed25519 = EACCES
open $T/outside/file O_WRONLY = EACCES
rename $T/ws/src/main.c $T/outside/main.c = EACCES
open /etc/passwd = ok
open /etc/passwd O_WRONLY = EACCES
connect_tcp 443 = ok
connect_tcp 22 = EACCES
bind_tcp 8000 = EACCES
Q

expect pdf-viewer.toml <<'Q'
open $T/home/alice/Documents/paper.pdf = ok
open $T/home/alice/Downloads/x.pdf = ok
open $T/home/alice/Documents/paper.pdf O_RDWR = EACCES
unlink $T/home/alice/Documents/paper.pdf = EACCES
open $T/home/alice/Documents/copy.pdf O_WRONLY|O_CREAT = EACCES
open $T/home/alice/.cache/pdfviewer/thumb.png O_WRONLY|O_TRUNC = ok
open $T/home/alice/.cache/pdfviewer/new.png O_WRONLY|O_CREAT = ok
unlink $T/home/alice/.cache/pdfviewer/thumb.png = ok
open $T/home/alice/.ssh/id_ed25519 = EACCES
open $T/home/alice/notes.txt = EACCES
open $T/tmp/x O_WRONLY|O_CREAT = EACCES
exec_check $T/home/alice/run.sh = EACCES
open /etc/passwd = ok
connect_tcp 443 = EACCES
bind_tcp 8000 = EACCES
Q

expect backup-job.toml <<'Q'
open $T/home/alice/.ssh/id_ed25519 = ok
open $T/home/alice/notes.txt = ok
open $T/etc/ssl/private/key.pem = ok
open $T/home/alice/notes.txt O_WRONLY = EACCES
unlink $T/home/alice/notes.txt = EACCES
exec_check $T/home/alice/run.sh = EACCES
open $T/backup/home.tar O_WRONLY|O_CREAT|O_TRUNC = ok
rename $T/backup/old.tar $T/backup/older.tar = ok
unlink $T/backup/old.tar = ok
rename $T/home/alice/notes.txt $T/backup/notes.txt = EACCES
open $T/outside/file = EACCES
open $T/ws/src/main.c O_WRONLY = EACCES
connect_tcp 443 = ok
Q

# The kernel agrees on the read-only queries (as root with Landlock;
# otherwise --verify has nothing to ask and says why: skipped).
verify() {
  local p="$1" q
  while IFS= read -r q; do [ -n "$q" ] && printf '%s\n' "${q//\$T/$t}"; done >"$t/queries"
  "$pw" explain --policy "$P/$p" --assume-unseen-run-nothing --verify --json --batch "$t/queries" \
    >"$t/answers" 2>"$t/err" \
    || [ $? -eq 1 ] || fail "$p: explain --verify: $(cat "$t/err")"
  local total agreed
  total=$(wc -l <"$t/queries")
  agreed=$(grep -c '"verified":{"agrees":true' "$t/answers" || true)
  if [ "$agreed" -ne "$total" ]; then
    if grep -q '"agrees":false' "$t/answers"; then
      fail "$p: the kernel disagrees: $(grep '"agrees":false' "$t/answers")"
    fi
    [ "$can_verify" = no ] || fail "$p: only $agreed of $total verified: $(grep -v '"agrees":true' "$t/answers")"
    echo "policies_test: $p: --verify skipped (not root, or no Landlock)"
    return
  fi
  echo "policies_test: $p: the kernel agrees on $total queries"
}
can_verify=no
if [ "$(id -u)" -eq 0 ] && "$pw" run --hard --policy "$P/backup-job.toml" -- true 2>/dev/null; then
  can_verify=yes
fi

verify web-server.toml <<'Q'
open $T/srv/www/index.html
open $T/srv/www/index.html O_WRONLY
open $T/var/log/nginx/access.log O_WRONLY|O_APPEND
open $T/etc/ssl/private/key.pem
open $T/outside/file
exec_check /usr/bin/env
Q
verify build-job.toml <<'Q'
open $T/ws/src/main.c O_RDWR
exec_check $T/ws/run.sh
exec_check $T/tmp/a.out
open /etc/passwd O_WRONLY
open $T/outside/file O_WRONLY
Q
verify coding-agent.toml <<'Q'
open $T/ws/src/main.c O_RDWR
open $T/home/alice/.ssh/id_ed25519
stat $T/home/alice/notes.txt
access $T/ws/run.sh X_OK
Q
verify pdf-viewer.toml <<'Q'
open $T/home/alice/Documents/paper.pdf
open $T/home/alice/Documents/paper.pdf O_RDWR
open $T/home/alice/.cache/pdfviewer/thumb.png O_WRONLY
exec_check $T/home/alice/run.sh
Q
verify backup-job.toml <<'Q'
open $T/home/alice/.ssh/id_ed25519
open $T/etc/ssl/private/key.pem
open $T/home/alice/notes.txt O_WRONLY
open $T/backup/old.tar O_RDWR
Q

# Real confinement: `run` under each policy, /bin/sh doing what the
# policy allows and what it denies (skipped without Landlock: best effort
# would run the shell unconfined).
if ! "$pw" run --hard --policy "$P/backup-job.toml" -- true 2>/dev/null; then
  echo "policies_test: run skipped (no Landlock here)"
  echo "policies_test: ok"
  exit 0
fi
# confined POLICY WANT SCRIPT: run /bin/sh -c SCRIPT under the policy copy;
# WANT is ok (exit 0) or denied (a non-zero exit that is not run's own
# 125, with "Permission denied" from the shell or the command).
confined() {
  local p="$1" want="$2" script="$3" rc
  set +e
  "$pw" run --policy "$P/$p" -- /bin/sh -c "$script" >"$t/out" 2>"$t/err"
  rc=$?
  set -e
  case "$want" in
    ok) [ "$rc" -eq 0 ] || fail "$p: run: exit $rc for: $script: $(cat "$t/err")" ;;
    denied)
      [ "$rc" -ne 0 ] && [ "$rc" -ne 125 ] || fail "$p: run: exit $rc (wanted a denial) for: $script"
      grep -q 'Permission denied' "$t/err" || fail "$p: run: not a denial for: $script: $(cat "$t/err")" ;;
  esac
}
confined web-server.toml ok "echo GET >>'$t/var/log/nginx/access.log' && cat '$t/srv/www/index.html'"
confined web-server.toml denied "echo defaced >'$t/srv/www/index.html'"
grep -q '<h1>hi</h1>' "$t/srv/www/index.html" || fail "web-server.toml: the docroot changed"
grep -q GET "$t/var/log/nginx/access.log" || fail "web-server.toml: no log line"
confined build-job.toml ok "echo obj >'$t/ws/build/main.o' && echo s >'$t/tmp/cc1.s' && '$t/ws/run.sh'"
confined build-job.toml denied "echo x >'$t/outside/new'"
confined build-job.toml denied "'$t/tmp/a.out'"
[ ! -e "$t/outside/new" ] || fail "build-job.toml: wrote outside the workspace"
[ -s "$t/ws/build/main.o" ] || fail "build-job.toml: no object in the workspace"
confined ci-step.json ok "mkdir '$t/ws/build/ci' && rm -r '$t/ws/build/ci'"
confined ci-step.json denied "rm '$t/outside/file'"
[ -e "$t/outside/file" ] || fail "ci-step.json: removed a file outside the workspace"
confined coding-agent.toml ok "echo edit >>'$t/ws/src/main.c' && mv '$t/ws/src/main.c' '$t/ws/src/main2.c'"
confined coding-agent.toml denied "cat '$t/home/alice/.ssh/id_ed25519'"
confined coding-agent.toml denied "mv '$t/ws/src/main2.c' '$t/outside/main2.c'"
[ -e "$t/ws/src/main2.c" ] || fail "coding-agent.toml: moved a file out of the workspace"
confined pdf-viewer.toml ok "cat '$t/home/alice/Documents/paper.pdf' >'$t/home/alice/.cache/pdfviewer/paper.png'"
confined pdf-viewer.toml denied "echo x >>'$t/home/alice/Documents/paper.pdf'"
[ "$(cat "$t/home/alice/Documents/paper.pdf")" = pdf ] || fail "pdf-viewer.toml: the document changed"
confined backup-job.toml ok "tar -cf '$t/backup/home.tar' -C '$t/home' alice/.ssh alice/notes.txt"
confined backup-job.toml denied "rm '$t/home/alice/notes.txt'"
confined backup-job.toml denied "echo x >'$t/ws/new'"
[ -e "$t/home/alice/notes.txt" ] || fail "backup-job.toml: removed a source file"
tar -tf "$t/backup/home.tar" >"$t/list"
grep -q 'alice/.ssh/id_ed25519' "$t/list" || fail "backup-job.toml: no key in the archive"
echo "policies_test: ok"
