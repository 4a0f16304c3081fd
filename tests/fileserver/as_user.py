"""One call made as another user, in a forked child, for the file
server's tests (ops.py, probe.py)."""

import errno
import os


def as_user(uid, gid, groups, fn, mask=None):
    """fn() in a child with these ids (and umask `mask` when given):
    "ok" (with " " and its result when it returns a str subclass of
    `shown`), or the errno's name."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            if mask is not None:
                os.umask(mask)
            os.setgroups(groups)
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            out = fn()
            res = "ok" + (" " + out if isinstance(out, Shown) else "")
        except OSError as e:
            res = errno.errorcode.get(e.errno, str(e.errno))
        os.write(w, res.encode())
        os._exit(0)
    os.close(w)
    res = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        res += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return res.decode()


class Shown(str):
    """What an operation returns to be printed after its "ok"."""
