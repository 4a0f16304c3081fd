#!/usr/bin/env bash
# `explain --verify --scratch DIR --batch` of changing queries, killed in
# the middle: with SIGKILL, and with SIGINT to its process group (what a
# terminal's Ctrl-C sends; explain runs in a session of its own here, as
# a shell's foreground job would run in a group of its own). Whenever it dies, the scratch directory must be
# exactly as it was once its guardian is done (the next changing query
# waits for it): names, modes, owners, ACLs, xattrs, contents, access and
# modification times (a symlink's access time aside). Root only (the kernel's child takes other ids);
# skipped with 77 elsewhere.
set -euo pipefail
pw="$1"
if [ "$(id -u)" -ne 0 ]; then
  echo "scratch_kill_test: skipped: needs root"
  exit 77
fi
. "$(dirname "$0")/../lib.sh"
scratch out

chmod 0755 "$out"
scr="$out/scratch"
mkdir -p "$scr/a/sub" "$scr/b" "$scr/empty"
chmod 0777 "$scr"
chmod 02775 "$scr/b"
chown 0:1000 "$scr/b"
chmod 01777 "$scr/a"
printf 'one\n' >"$scr/a/f"
printf 'two\n' >"$scr/b/g"
printf 'three\n' >"$scr/a/sub/h"
chown 1000:1000 "$scr/a/f"
chmod 0664 "$scr/a/f"
ln -s a/f "$scr/l"
mkfifo "$scr/p"
/usr/bin/python3 - "$scr" <<'PY'
import os, struct, sys
root = sys.argv[1]
os.setxattr(root + "/a/f", "user.k", b"v")
# An access ACL u:1000:rw- (the system.posix_acl_access xattr).
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in
    [(1, 6, 0xffffffff), (2, 6, 1000), (4, 4, 0xffffffff), (0x10, 6, 0xffffffff), (0x20, 4, 0xffffffff)])
os.setxattr(root + "/b/g", "system.posix_acl_access", acl)
t = 1000000000
for p in ["a/sub/h", "a/sub", "a/f", "a", "b/g", "b", "empty", "l", "p", ""]:
    os.utime(os.path.join(root, p) if p else root, ns=(t * 10**9 + 1, (t + 7) * 10**9 + 2), follow_symlinks=False)
    t += 3600
PY

listing() {
  /usr/bin/python3 - "$scr" <<'PY'
import os, stat, sys
root = sys.argv[1]
def show(p):
    st = os.lstat(p)
    # A symlink's access time aside: explain's model reads symlinks on the
    # host as any reader does (readlink() moves it, outside what the guard
    # puts back; src/query/scratch_test.cc checks that the guard does).
    atime = 0 if stat.S_ISLNK(st.st_mode) else st.st_atime_ns
    line = [p, oct(st.st_mode), st.st_uid, st.st_gid, st.st_size, st.st_nlink, atime, st.st_mtime_ns]
    if stat.S_ISLNK(st.st_mode):
        line.append(os.readlink(p))
    else:
        line.append(sorted((a, os.getxattr(p, a, follow_symlinks=False)) for a in os.listxattr(p, follow_symlinks=False)))
    if stat.S_ISREG(st.st_mode):
        fd = os.open(p, os.O_RDONLY | os.O_NOATIME | os.O_NOFOLLOW)
        line.append(os.read(fd, 1 << 16))
        os.close(fd)
    print(*line)
    if stat.S_ISDIR(st.st_mode):
        fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOATIME)
        names = sorted(os.listdir(fd))
        os.close(fd)
        for n in names:
            show(os.path.join(p, n))
show(root)
PY
}

# A batch of changing queries, long enough to be killed in the middle.
for i in $(seq 1 40); do
  cat <<EOF
rename $scr/a $scr/empty RENAME_EXCHANGE
unlink $scr/a/f
rename $scr/b/g $scr/a/sub/g
chmod $scr/a/f 0600
chown $scr/b/g 1000:1000
truncate $scr/a/sub/h
mkdir $scr/b/n$i
link $scr/a/f $scr/b/h
symlink $scr/b/s$i /etc
mknod $scr/a/q fifo
open $scr/b/new O_WRONLY|O_CREAT|O_TRUNC 0600
rmdir $scr/empty
rename $scr/l $scr/p RENAME_EXCHANGE
setxattr $scr/a/f user.k w
EOF
done >"$out/batch"

before="$(listing)"
# Waits for the lock (a guardian still at work), repairs what a run that
# died with its guardian left, and changes nothing itself.
settle() {
  "$pw" explain --verify --scratch "$scr" --colour never chmod "$scr/a/f" 0664 >"$out/settle" 2>&1 \
    || fail "settling: $(cat "$out/settle")"
  grep -q "kernel: ok — agrees" "$out/settle" || fail "settling: $(cat "$out/settle")"
}
settle
[ "$(listing)" = "$before" ] || fail "a query that changes nothing changed the tree"

killed=0
for delay in 0.05 0.2 0.45 0.8; do
  for sig in KILL INT; do
    for who in 0 1000; do
      # A session of its own, SIGINT back to its default (a shell's
      # background job starts with it ignored).
      /usr/bin/python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execv(sys.argv[1], sys.argv[1:])' "$pw" explain --uid "$who" --gid "$who" --verify \
        --scratch "$scr" --batch "$out/batch" --format result >"$out/stdout" 2>"$out/stderr" &
      pid=$!
      sleep "$delay"
      if [ "$sig" = INT ]; then
        kill -INT -- "-$pid" 2>/dev/null || true
      else
        kill -KILL "$pid" 2>/dev/null || true
      fi
      wait "$pid" 2>/dev/null && rc=0 || rc=$?
      # Killed (or done, on a fast machine) -- never an error of its own.
      case "$rc" in 0 | 130 | 137) ;; *) fail "explain exited $rc: $(cat "$out/stderr")" ;; esac
      [ "$rc" -ne 0 ] && killed=$((killed + 1))
      settle
      now="$(listing)"
      [ "$now" = "$before" ] || fail "SIG$sig after ${delay}s as uid $who: the scratch directory changed: $(diff <(echo "$before") <(echo "$now"))"
    done
  done
done
[ "$killed" -ge 8 ] || fail "only $killed runs were killed before they ended: the batch is too short"
echo "scratch_kill_test: ok ($killed runs killed in the middle)"
