#!/usr/bin/python3
"""A sequence of file operations run as several users in forked children on
DIR; one line per operation: what, as whom, the result (ok or the errno
name) and, for what it touches, the type, mode, owner and group after.
Run on a FUSE mount and on a plain tmpfs, the outputs must be the same but
for the divergences docs/fileserver.md lists. Usage: ops.py DIR."""
import errno
import os
import stat
import sys

from as_user import Shown, as_user

D = sys.argv[1]
USERS = {
    "root": (0, 0, []),
    "u1": (1000, 1000, [1000, 2000]),
    "u2": (1001, 1001, [2000]),
    "u3": (1002, 1002, []),
}


def p(rel):
    return os.path.join(D, rel) if rel else D


def describe(rel):
    try:
        st = os.lstat(p(rel))
    except OSError as e:
        return "-" + errno.errorcode[e.errno]
    return "%s %04o %d:%d" % (stat.filemode(st.st_mode)[0], stat.S_IMODE(st.st_mode),
                              st.st_uid, st.st_gid)


def run(user, what, fn, shows=(), mask=0o022):
    uid, gid, groups = USERS[user]
    res = as_user(uid, gid, groups, fn, mask)
    after = " ".join("%s=%s" % (s or "/", describe(s)) for s in shows)
    print("%-5s %-40s %-8s %s" % (user, what, res, after))


def write(rel, flags=os.O_WRONLY, mode=0o644, data=b"x"):
    def f():
        fd = os.open(p(rel), flags, mode)
        try:
            if data and (flags & 3):
                os.write(fd, data)
        finally:
            os.close(fd)
    return f


def read(rel, flags=os.O_RDONLY):
    def f():
        fd = os.open(p(rel), flags)
        os.close(fd)
    return f


def setup():
    os.chmod(D, 0o755)
    mk = [("pub", 0o755, 0, 0), ("priv", 0o700, 1000, 1000), ("tmp", 0o1777, 0, 0),
          ("grp", 0o2775, 0, 2000), ("ronly", 0o555, 1000, 1000), ("xonly", 0o711, 1000, 1000),
          ("gw", 0o770, 0, 2000)]
    for name, mode, uid, gid in mk:
        os.mkdir(p(name))
        os.chown(p(name), uid, gid)
        os.chmod(p(name), mode)
    files = [("pub/f644", 0o644, 1000, 1000), ("pub/f600", 0o600, 0, 0),
             ("pub/f666", 0o666, 1001, 1001), ("pub/suid", 0o6755, 1000, 2000),
             ("pub/sgidnx", 0o2644, 1000, 2000), ("priv/secret", 0o644, 1000, 1000),
             ("xonly/f", 0o644, 1000, 1000), ("tmp/u1file", 0o666, 1000, 1000),
             ("tmp/u2file", 0o644, 1001, 1001), ("gw/f", 0o660, 0, 2000),
             ("pub/exe", 0o755, 0, 0), ("pub/noexe", 0o644, 0, 0)]
    for name, mode, uid, gid in files:
        fd = os.open(p(name), os.O_CREAT | os.O_WRONLY, 0)
        os.write(fd, b"data")
        os.close(fd)
        os.chown(p(name), uid, gid)
        os.chmod(p(name), mode)
    os.symlink("f644", p("pub/link"))
    os.lchown(p("pub/link"), 1000, 1000)


def main():
    run("root", "setup", setup, ["pub", "tmp", "grp"])
    for u in ("u1", "u2", "u3"):
        run(u, "stat pub/f644", lambda: os.stat(p("pub/f644")))
        run(u, "stat priv/secret", lambda: os.stat(p("priv/secret")))
        run(u, "listdir priv", lambda: os.listdir(p("priv")))
        run(u, "listdir xonly", lambda: os.listdir(p("xonly")))
        run(u, "open xonly/f", read("xonly/f"))
        run(u, "read pub/f600", read("pub/f600"))
        run(u, "write pub/f644", write("pub/f644"))
        run(u, "write pub/f666", write("pub/f666"))
        run(u, "rdwr pub/f666", write("pub/f666", os.O_RDWR))
        run(u, "trunc-open pub/f644", write("pub/f644", os.O_WRONLY | os.O_TRUNC, data=b""))
        run(u, "rdonly|trunc pub/f666", read("pub/f666", os.O_RDONLY | os.O_TRUNC))
        run(u, "write gw/f", write("gw/f"))
        for m in (os.R_OK, os.W_OK, os.X_OK, os.R_OK | os.W_OK):
            run(u, "access pub/f644 %d" % m, lambda m=m: os.access(p("pub/f644"), m) or
                (_ for _ in ()).throw(OSError(errno.EACCES, "")))
            run(u, "access priv %d" % m, lambda m=m: os.access(p("priv"), m) or
                (_ for _ in ()).throw(OSError(errno.EACCES, "")))
        run(u, "chdir priv", lambda: os.chdir(p("priv")))
        run(u, "chdir xonly", lambda: os.chdir(p("xonly")))
        run(u, "create pub/new", write("pub/new" + u, os.O_CREAT | os.O_WRONLY), ["pub/new" + u])
        run(u, "create priv/new", write("priv/new" + u, os.O_CREAT | os.O_WRONLY),
            ["priv/new" + u])
        run(u, "create tmp/new", write("tmp/new" + u, os.O_CREAT | os.O_WRONLY, 0o666),
            ["tmp/new" + u])
        run(u, "create grp/new umask077", write("grp/n" + u, os.O_CREAT | os.O_WRONLY, 0o2777),
            ["grp/n" + u], mask=0o077)
        run(u, "create grp/excl", write("grp/e" + u, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o640),
            ["grp/e" + u])
        run(u, "create grp/excl again",
            write("grp/e" + u, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o640))
        run(u, "mkdir grp/d", lambda: os.mkdir(p("grp/d" + u), 0o777), ["grp/d" + u], mask=0o002)
        run(u, "mkdir tmp/d", lambda: os.mkdir(p("tmp/d" + u), 0o750), ["tmp/d" + u])
        run(u, "mkdir ronly/d", lambda: os.mkdir(p("ronly/d" + u)))
        run(u, "mkfifo tmp/fifo", lambda: os.mkfifo(p("tmp/fifo" + u), 0o640), ["tmp/fifo" + u])
        run(u, "mknod tmp/reg", lambda: os.mknod(p("tmp/reg" + u), 0o600 | stat.S_IFREG),
            ["tmp/reg" + u])
        run(u, "mknod tmp/chr", lambda: os.mknod(p("tmp/chr" + u), 0o600 | stat.S_IFCHR,
                                                 os.makedev(1, 3)))
        run(u, "symlink tmp/sl", lambda: os.symlink("target", p("tmp/sl" + u)), ["tmp/sl" + u])
        run(u, "readlink pub/link", lambda: os.readlink(p("pub/link")))
        run(u, "link pub/f644 tmp/hl", lambda: os.link(p("pub/f644"), p("tmp/hl" + u)))
        run(u, "link pub/f600 tmp/hl2", lambda: os.link(p("pub/f600"), p("tmp/hm" + u)))
        run(u, "chmod pub/f644 600", lambda: os.chmod(p("pub/f644"), 0o640), ["pub/f644"])
        run(u, "chmod pub/f666 2755", lambda: os.chmod(p("pub/f666"), 0o2755), ["pub/f666"])
        run(u, "chmod pub/f666 666", lambda: os.chmod(p("pub/f666"), 0o666), ["pub/f666"])
        run(u, "chown pub/f644 -1:2000", lambda: os.chown(p("pub/f644"), -1, 2000), ["pub/f644"])
        run(u, "chown pub/f644 1001:-1", lambda: os.chown(p("pub/f644"), 1001, -1), ["pub/f644"])
        run(u, "chown pub/f644 -1:1000", lambda: os.chown(p("pub/f644"), -1, 1000), ["pub/f644"])
        run(u, "lchown pub/link -1:2000", lambda: os.lchown(p("pub/link"), -1, 2000),
            ["pub/link"])
        run(u, "utime now pub/f666", lambda: os.utime(p("pub/f666")))
        run(u, "utime set pub/f666", lambda: os.utime(p("pub/f666"), (1, 1)))
        run(u, "utime now pub/f644", lambda: os.utime(p("pub/f644")))
        run(u, "utime set pub/f644", lambda: os.utime(p("pub/f644"), (1, 1)))
        run(u, "truncate pub/f666", lambda: os.truncate(p("pub/f666"), 0))
        run(u, "truncate pub/f644", lambda: os.truncate(p("pub/f644"), 0))
        run(u, "write pub/suid", write("pub/suid"), ["pub/suid"])
        run(u, "exec pub/exe", lambda: os.execv(p("pub/exe"), ["x"]) if False else
            os.access(p("pub/exe"), os.X_OK) or (_ for _ in ()).throw(OSError(errno.EACCES, "")))
        run(u, "unlink tmp/u1file", lambda: os.unlink(p("tmp/u1file")) if u != "u1" else None)
        run(u, "unlink tmp/u2file", lambda: os.unlink(p("tmp/u2file")))
        run(u, "unlink pub/f600", lambda: os.unlink(p("pub/f600")))
        run(u, "rename tmp/new tmp/ren", lambda: os.rename(p("tmp/new" + u), p("tmp/ren" + u)),
            ["tmp/ren" + u])
        run(u, "rename tmp/ren pub/ren", lambda: os.rename(p("tmp/ren" + u), p("pub/ren" + u)))
        run(u, "rename tmp/d tmp/d2", lambda: os.rename(p("tmp/d" + u), p("tmp/e" + u)))
        run(u, "rmdir tmp/e", lambda: os.rmdir(p("tmp/e" + u)))
        run(u, "rmdir priv", lambda: os.rmdir(p("priv")))
        run(u, "unlink grp/n", lambda: os.unlink(p("grp/n" + u)))
    for u in ("u2", "u3", "u1"):
        run(u, "unlink tmp/fifo u1", lambda: os.unlink(p("tmp/fifou1")))
        run(u, "rmdir grp/du1", lambda: os.rmdir(p("grp/du1")))
        run(u, "rename tmp/slu1 over", lambda: os.rename(p("tmp/slu2"), p("tmp/slu1")))
    run("root", "chmod pub/suid 6755", lambda: os.chmod(p("pub/suid"), 0o6755), ["pub/suid"])
    run("root", "chown pub/suid 1000:1000", lambda: os.chown(p("pub/suid"), 1000, 1000),
        ["pub/suid"])
    run("root", "truncate pub/suid", lambda: os.truncate(p("pub/suid"), 0), ["pub/suid"])
    run("u1", "chown pub/sgidnx -1:1000", lambda: os.chown(p("pub/sgidnx"), -1, 1000),
        ["pub/sgidnx"])
    removed_while_open()
    divergences()


def removed_while_open():
    """fchmod(), fchown(), futimens() and ftruncate() through a file whose
    name was removed while it is open: the owner's, and a non-owner's."""
    def files():
        os.mkdir(p("open"))
        os.chmod(p("open"), 0o777)
        for name in ("open/own", "open/other"):
            fd = os.open(p(name), os.O_CREAT | os.O_WRONLY, 0)
            os.write(fd, b"data")
            os.close(fd)
            os.chown(p(name), 1000, 1000)
            os.chmod(p(name), 0o2666)
    run("root", "setup removed while open", files, ["open/own", "open/other"])

    def files_passed():
        fd = os.open(p("open/passed"), os.O_CREAT | os.O_WRONLY, 0)
        os.write(fd, b"data")
        os.close(fd)
        os.chown(p("open/passed"), 1000, 1000)
        os.chmod(p("open/passed"), 0o2666)

    def steps(fd):
        res = []
        for what, step in [("fchown-1:2000", lambda: os.fchown(fd, -1, 2000)),
                           ("fchmod2640", lambda: os.fchmod(fd, 0o2640)),
                           ("fchown-1:1001", lambda: os.fchown(fd, -1, 1001)),
                           ("fchmod0644", lambda: os.fchmod(fd, 0o644)),
                           ("futimens-set", lambda: os.utime(fd, (1, 2))),
                           ("futimens-now", lambda: os.utime(fd)),
                           ("ftruncate", lambda: os.ftruncate(fd, 1))]:
            try:
                step()
                res.append(what + "=ok")
            except OSError as e:
                res.append(what + "=" + errno.errorcode[e.errno])
        st = os.fstat(fd)
        res.append("%04o %d:%d size %d" % (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid,
                                           st.st_size))
        return Shown(" ".join(res))

    def through(rel):
        def f():
            fd = os.open(p(rel), os.O_RDWR)
            try:
                os.unlink(p(rel))
                return steps(fd)
            finally:
                os.close(fd)
        return f
    run("u1", "open+unlink+f* open/own", through("open/own"))
    run("u2", "open+unlink+f* open/other", through("open/other"))
    # Opened by root, inherited by the users' children: another opener.
    for u in ("u1", "u2"):
        run("root", "setup open/passed", files_passed, ["open/passed"])
        fd = os.open(p("open/passed"), os.O_RDWR)
        os.unlink(p("open/passed"))
        try:
            run(u, "inherited fd, unlinked: f*", lambda: steps(fd))
        finally:
            os.close(fd)


def divergences():
    """Checks the kernel makes in the VFS from cached attributes, never
    asking a FUSE server (docs/fileserver.md, "Divergences")."""
    def more():
        os.mkfifo(p("pub/fifo600"), 0o600)
        os.mknod(p("pub/null600"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        os.mkdir(p("stick"))
        os.chmod(p("stick"), 0o1775)
        fd = os.open(p("stick/f"), os.O_CREAT | os.O_WRONLY, 0o644)
        os.close(fd)
        os.chown(p("stick/f"), 1001, 1001)
    run("root", "setup divergences", more, ["pub/fifo600", "pub/null600", "stick"])
    # 1. "." and "..": may_lookup() asks the FUSE inode for MAY_EXEC, which
    # fuse_permission() grants a directory without asking the server.
    run("u2", "stat priv/.", lambda: os.stat(p("priv/.")))
    run("u2", "stat priv/../pub/f666", lambda: os.stat(p("priv/../pub/f666")))
    # 2. FIFOs and devices are opened by the VFS (init_special_inode()):
    # no FUSE_OPEN, and fuse_permission() grants MAY_READ/MAY_WRITE.
    run("u1", "open fifo 0600 root", read("pub/fifo600", os.O_RDONLY | os.O_NONBLOCK))
    run("u1", "open chr 0600 root", read("pub/null600"))
    # 3. check_sticky() in may_delete() runs before the server is asked, on
    # the cached owners: EPERM where a local filesystem answers EACCES for
    # the directory's missing write permission first.
    run("u3", "unlink stick/f", lambda: os.unlink(p("stick/f")))
    run("u3", "rename stick/f", lambda: os.rename(p("stick/f"), p("tmp/stolen")))
    # 4. The server's own reading: the setuid kill before a write reaches it
    # as a mode change, which it tells from chmod() by a file open for
    # writing: a non-owner's chmod() dropping only that bit then succeeds.
    def suid_files():
        for name in ("pub/suid666", "pub/suid666b"):
            fd = os.open(p(name), os.O_CREAT | os.O_WRONLY, 0)
            os.close(fd)
            os.chown(p(name), 1000, 1000)
            os.chmod(p(name), 0o4666)
    run("root", "setup suid666", suid_files, ["pub/suid666", "pub/suid666b"])

    def chmod_while_open():
        fd = os.open(p("pub/suid666"), os.O_WRONLY)
        try:
            os.chmod(p("pub/suid666"), 0o666)
        finally:
            os.close(fd)
    run("u2", "chmod -s pub/suid666 open", chmod_while_open, ["pub/suid666"])
    run("u2", "chmod -s pub/suid666b", lambda: os.chmod(p("pub/suid666b"), 0o666),
        ["pub/suid666b"])


main()
