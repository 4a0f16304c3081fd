"""pathwarden: what Linux answers when a process touches a path, and why.

A Python module over libpathwarden's C API (ctypes; no compiled
extension). The library is found, in order, at $PATHWARDEN_LIBRARY, where
the install put it (_libpath.py), or by the dynamic loader
("libpathwarden.so.0").

Example:
    import errno, os, pathwarden
    m = pathwarden.Model()
    m.mkdir("/home", 0o755)
    m.mkdir("/home/alice", 0o700, uid=1000, gid=1000)
    m.create("/home/alice/key", 0o600, uid=1000, gid=1000)
    backup = m.process(uid=34, gid=34, name="backup")
    d = backup.ask(pathwarden.Op.ACCESS, "/home/alice/key", mode=os.R_OK)
    assert d.denied and d.errno == errno.EACCES and d.stage == "walk"
    print(d.reason)   # walk: no search permission on /home/alice (...)

Errors of the API itself (a bad argument, a builder call Linux would
refuse) raise pathwarden.Error, an OSError whose errno is the C API's and
whose message is pathwarden_last_error(). A denial is not an error: it is
a Decision. Thread safety is the C API's: many readers (ask), one writer.
"""

import ctypes
import enum
import errno as _errno
import json as _json
import os

__all__ = ["Error", "Model", "Process", "Ruleset", "Decision", "Learner", "Op", "Verdict",
           "FileType", "Check", "Layer", "Grant", "AT_FDCWD", "CAPS_ALL", "version"]

AT_FDCWD = -100
CAPS_ALL = 0x1FFFFFFFFFF
_SNAPSHOT, _REVALIDATE = 0, 1
_HOST_ASSUME_UNSEEN_RUN_NOTHING = 1 << 0


def _load():
    path = os.environ.get("PATHWARDEN_LIBRARY")
    if not path:
        try:
            from . import _libpath  # written by the install
            path = _libpath.LIBRARY
        except ImportError:
            path = "libpathwarden.so.0"
    return ctypes.CDLL(path)


_lib = _load()


def _op_names():
    """The library's operations in pathwarden_op's order (pathwarden_op_name())."""
    name = _lib.pathwarden_op_name
    name.restype = ctypes.c_char_p
    name.argtypes = [ctypes.c_int]
    names = []
    while (n := name(len(names))) is not None:
        names.append((n.decode().upper(), len(names)))
    return names


# pathwarden_op: one per request of the C++ API (Op.OPEN, Op.EXEC_CHECK,
# ...), as the library names them, so that an operation the library adds
# needs no change here.
Op = enum.IntEnum("Op", _op_names(), module=__name__)


class Verdict(enum.IntEnum):
    ALLOWED = 0
    DENIED = 1
    UNKNOWN = 2


class FileType(enum.IntEnum):
    REGULAR = 0
    DIRECTORY = 1
    SYMLINK = 2
    FIFO = 3
    SOCKET = 4
    CHAR = 5
    BLOCK = 6


class Error(OSError):
    """An error of the C API: errno, and pathwarden_last_error()."""


# The C structs (pathwarden.h).
class _Cred(ctypes.Structure):
    _fields_ = [("uid", ctypes.c_uint32), ("gid", ctypes.c_uint32),
                ("groups", ctypes.POINTER(ctypes.c_uint32)), ("ngroups", ctypes.c_size_t),
                ("caps", ctypes.c_uint64), ("umask", ctypes.c_uint32)]


class _Request(ctypes.Structure):
    _fields_ = [("op", ctypes.c_int), ("dirfd", ctypes.c_int),
                ("path", ctypes.c_char_p), ("path2", ctypes.c_char_p),
                ("flags", ctypes.c_uint64), ("mode", ctypes.c_uint32), ("type", ctypes.c_uint32),
                ("rdev_major", ctypes.c_uint32), ("rdev_minor", ctypes.c_uint32),
                ("uid", ctypes.c_int64), ("gid", ctypes.c_int64), ("fd", ctypes.c_int),
                ("cmd", ctypes.c_uint32), ("port", ctypes.c_uint32), ("has_times", ctypes.c_int),
                ("times", ctypes.c_int * 2), ("target", ctypes.c_void_p),
                ("ruleset", ctypes.c_void_p), ("name", ctypes.c_char_p),
                ("value", ctypes.c_void_p), ("value_len", ctypes.c_size_t),
                ("xattr_flags", ctypes.c_uint32), ("offset", ctypes.c_uint64),
                ("len", ctypes.c_uint64), ("attr_set", ctypes.c_uint64),
                ("attr_clr", ctypes.c_uint64)]


class _Check(ctypes.Structure):
    _fields_ = [("path", ctypes.c_char_p), ("want", ctypes.c_uint32), ("granted", ctypes.c_int),
                ("fast", ctypes.c_int), ("decided_by", ctypes.c_char_p),
                ("capability", ctypes.c_int), ("mode", ctypes.c_uint32),
                ("uid", ctypes.c_uint32), ("gid", ctypes.c_uint32), ("has_acl", ctypes.c_int),
                ("layer", ctypes.c_char_p)]


class _Layer(ctypes.Structure):
    _fields_ = [("layer", ctypes.c_int), ("kind", ctypes.c_int),
                ("requested", ctypes.c_uint64), ("missing", ctypes.c_uint64),
                ("missing_names", ctypes.c_char_p), ("policy", ctypes.c_char_p),
                ("grant_count", ctypes.c_size_t)]


class _Grant(ctypes.Structure):
    _fields_ = [("path", ctypes.c_char_p), ("granted", ctypes.c_uint64),
                ("origin", ctypes.c_char_p)]


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_u32, _u64, _i64, _int, _str, _size = (ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64,
                                       ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t)
_SIGNATURES = {
    "pathwarden_version": (_str, []),
    "pathwarden_last_error": (_str, []),
    "pathwarden_model_new": (_int, [_PP, _int, _u32]),
    "pathwarden_model_from_host": (_int, [_PP, _str, _int, _u32]),
    "pathwarden_model_free": (None, [_P]),
    "pathwarden_model_mkdir": (_int, [_P, _str, _u32, _u32, _u32, _u32]),
    "pathwarden_model_create": (_int, [_P, _str, _int, _str, _u32, _u32, _u32, _u32]),
    "pathwarden_model_chmod": (_int, [_P, _str, _u32, _u32]),
    "pathwarden_model_chown": (_int, [_P, _str, _i64, _i64, _u32]),
    "pathwarden_model_setfacl": (_int, [_P, _str, _str, _str, _u32]),
    "pathwarden_model_mount_tmpfs": (_int, [_P, _str, _u32, _u32, _u32, _u32, _u32]),
    "pathwarden_model_remount": (_int, [_P, _str, _u32, _u32]),
    "pathwarden_model_set_sysctl": (_int, [_P, _str, _int, _u32]),
    "pathwarden_process_new": (_int, [_P, _str, ctypes.POINTER(_Cred), _PP, _u32]),
    "pathwarden_process_from_pid": (_int, [_P, _int, _PP, _u32]),
    "pathwarden_process_free": (None, [_P]),
    "pathwarden_process_layers": (_int, [_P, _u32]),
    "pathwarden_process_chdir": (_int, [_P, _str, _u32]),
    "pathwarden_process_set_userns": (_int, [_P, _str, _str, _u32]),
    "pathwarden_process_restrict": (_int, [_P, _P, _u32]),
    "pathwarden_ruleset_load": (_int, [_PP, _str, _u32]),
    "pathwarden_ruleset_new": (_int, [_PP, _u64, _u64, _u64, _u32]),
    "pathwarden_ruleset_allow_path": (_int, [_P, _str, _u64, _u32]),
    "pathwarden_ruleset_allow_port": (_int, [_P, _u64, _u64, _u32]),
    "pathwarden_ruleset_free": (None, [_P]),
    "pathwarden_request_init": (_int, [ctypes.POINTER(_Request), _int]),
    "pathwarden_ask": (_int, [_P, ctypes.POINTER(_Request), _int, _PP, _u32]),
    "pathwarden_apply": (_int, [_P, ctypes.POINTER(_Request), _int, _PP, _u32]),
    "pathwarden_ask_line": (_int, [_P, _str, _PP, _u32]),
    "pathwarden_decision_free": (None, [_P]),
    "pathwarden_decision_verdict": (_int, [_P]),
    "pathwarden_decision_errno": (_int, [_P]),
    "pathwarden_decision_fd": (_int, [_P]),
    "pathwarden_decision_stage": (_str, [_P]),
    "pathwarden_decision_reason": (_str, [_P]),
    "pathwarden_decision_unknown_why": (_str, [_P]),
    "pathwarden_decision_result": (_str, [_P]),
    "pathwarden_decision_json": (_str, [_P, _u32]),
    "pathwarden_decision_component_count": (_int, [_P]),
    "pathwarden_decision_component": (_int, [_P, _size, ctypes.POINTER(_Check), _u32]),
    "pathwarden_decision_dac": (_int, [_P, ctypes.POINTER(_Check), _u32]),
    "pathwarden_decision_layer_count": (_int, [_P]),
    "pathwarden_decision_layer": (_int, [_P, _size, ctypes.POINTER(_Layer), _u32]),
    "pathwarden_decision_grant": (_int, [_P, _size, _size, ctypes.POINTER(_Grant), _u32]),
    "pathwarden_learner_new": (_int, [_PP, _u32]),
    "pathwarden_learner_add_path": (_int, [_P, _str, _u64, _int, _u32]),
    "pathwarden_learner_add_port": (_int, [_P, _u64, _u64, _u32]),
    "pathwarden_learner_need_unscoped": (_int, [_P, _u64, _u32]),
    "pathwarden_learner_policy": (_int, [_P, _int, ctypes.POINTER(_str), _u32]),
    "pathwarden_learner_beyond": (_str, [_P, _size]),
    "pathwarden_learner_free": (None, [_P]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    _f = getattr(_lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def _check(rc):
    """The C API's -errno as Error (with the thread's last error)."""
    if rc < 0:
        err = -rc
        raise Error(err, _lib.pathwarden_last_error().decode() or os.strerror(err))
    return rc


def _b(s):
    return None if s is None else os.fsencode(s)


def _s(b):
    return "" if b is None else b.decode()


def version():
    """The library's version ("0.1.0")."""
    return _lib.pathwarden_version().decode()


class _Handle:
    """Owns one C handle (`_h`), freed by the C function named `_free`
    when the Python object goes."""

    _free = None

    def __init__(self, handle):
        self._h = handle

    def __del__(self):
        if getattr(self, "_h", None):
            getattr(_lib, self._free)(self._h)
            self._h = None


class Model(_Handle):
    """A filesystem tree and its processes (pathwarden_model).

    Model() is a tmpfs root "/" in a model of Landlock ABI `abi` (0: the
    latest); Model.from_host() is the machine this runs on.
    """

    _free = "pathwarden_model_free"

    def __init__(self, abi=0, _handle=None):
        if _handle is None:
            h = ctypes.c_void_p()
            _check(_lib.pathwarden_model_new(ctypes.byref(h), abi, 0))
            _handle = h
        super().__init__(_handle)

    @classmethod
    def from_host(cls, mountinfo=None, revalidate=False, assume_unseen_run_nothing=False):
        """The machine this runs on. `assume_unseen_run_nothing`: the
        processes whose program cannot be read run none of the files asked
        about, so writing a file with an execute bit is answered rather
        than unknown (for trees only the caller uses)."""
        h = ctypes.c_void_p()
        flags = _HOST_ASSUME_UNSEEN_RUN_NOTHING if assume_unseen_run_nothing else 0
        _check(_lib.pathwarden_model_from_host(ctypes.byref(h), _b(mountinfo),
                                               _REVALIDATE if revalidate else _SNAPSHOT, flags))
        return cls(_handle=h)

    # The builder: as root, umask 0, no permission checked.
    def mkdir(self, path, mode=0o755, uid=0, gid=0):
        _check(_lib.pathwarden_model_mkdir(self._h, _b(path), mode, uid, gid, 0))

    def create(self, path, mode=0o644, uid=0, gid=0, type=FileType.REGULAR, target=None):
        _check(_lib.pathwarden_model_create(self._h, _b(path), int(type), _b(target), mode,
                                            uid, gid, 0))

    def symlink(self, path, target, uid=0, gid=0):
        self.create(path, 0o777, uid, gid, FileType.SYMLINK, target)

    def chmod(self, path, mode):
        _check(_lib.pathwarden_model_chmod(self._h, _b(path), mode, 0))

    def chown(self, path, uid=-1, gid=-1):
        _check(_lib.pathwarden_model_chown(self._h, _b(path), uid, gid, 0))

    def setfacl(self, path, acl=None, default_acl=None):
        _check(_lib.pathwarden_model_setfacl(self._h, _b(path), _b(acl), _b(default_acl), 0))

    def mount_tmpfs(self, path, mode=0o755, uid=0, gid=0, mount_flags=0):
        _check(_lib.pathwarden_model_mount_tmpfs(self._h, _b(path), mode, uid, gid,
                                                 mount_flags, 0))

    def remount(self, path, mount_flags):
        _check(_lib.pathwarden_model_remount(self._h, _b(path), mount_flags, 0))

    def set_sysctl(self, name, value):
        _check(_lib.pathwarden_model_set_sysctl(self._h, _b(name), value, 0))

    def process(self, uid, gid, groups=(), caps=None, umask=0o022, name=None):
        """A process with these credentials (caps: all for uid 0 by default, else none)."""
        if caps is None:
            caps = CAPS_ALL if uid == 0 else 0
        arr = (ctypes.c_uint32 * len(groups))(*groups) if groups else None
        cred = _Cred(uid, gid, arr, len(groups), caps, umask)
        h = ctypes.c_void_p()
        _check(_lib.pathwarden_process_new(self._h, _b(name), ctypes.byref(cred),
                                           ctypes.byref(h), 0))
        return Process(h)

    def process_from_pid(self, pid):
        """The running process `pid`, as `pathwarden --pid` takes it."""
        h = ctypes.c_void_p()
        _check(_lib.pathwarden_process_from_pid(self._h, pid, ctypes.byref(h), 0))
        return Process(h)


class Ruleset(_Handle):
    """One Landlock layer (pathwarden_ruleset): Ruleset.load(policy file)
    or Ruleset(handled_fs, handled_net, scoped) and rules by hand."""

    _free = "pathwarden_ruleset_free"

    def __init__(self, handled_fs=0, handled_net=0, scoped=0, _handle=None):
        if _handle is None:
            h = ctypes.c_void_p()
            _check(_lib.pathwarden_ruleset_new(ctypes.byref(h), handled_fs, handled_net,
                                               scoped, 0))
            _handle = h
        super().__init__(_handle)

    @classmethod
    def load(cls, file_or_dir):
        h = ctypes.c_void_p()
        _check(_lib.pathwarden_ruleset_load(ctypes.byref(h), _b(os.fspath(file_or_dir)), 0))
        return cls(_handle=h)

    def allow_path(self, path, access):
        _check(_lib.pathwarden_ruleset_allow_path(self._h, _b(path), access, 0))
        return self

    def allow_port(self, port, access):
        _check(_lib.pathwarden_ruleset_allow_port(self._h, port, access, 0))
        return self


class Learner(_Handle):
    """A policy learnt from what a program needed (pathwarden_learner), as
    `pathwarden trace --learn` learns it: add each successful call's need,
    then policy() is the landlockconfig TOML for this machine (Ruleset.load
    reads it back) and beyond the notes on what it grants more.

    Example (LANDLOCK_ACCESS_FS_READ_FILE, _MAKE_REG, _REMOVE_FILE):
        READ_FILE, MAKE_REG, REMOVE_FILE = 1 << 2, 1 << 8, 1 << 5
        l = pathwarden.Learner()
        l.add_path("/etc/hosts", READ_FILE)
        l.add_path("/var/cache/app", MAKE_REG | REMOVE_FILE, directory=True)
        open("policy.toml", "w").write(l.policy())
    """

    _free = "pathwarden_learner_free"

    def __init__(self):
        h = ctypes.c_void_p()
        _check(_lib.pathwarden_learner_new(ctypes.byref(h), 0))
        super().__init__(h)
        self.beyond = []

    def add_path(self, path, access, directory=False):
        """Filesystem rights (LANDLOCK_ACCESS_FS_*) a call needed on `path`
        (absolute, normalised): the object's, or its parent's for make_*,
        remove_* and refer. Error (EINVAL) for what the learner refuses."""
        _check(_lib.pathwarden_learner_add_path(self._h, _b(path), access, int(directory), 0))
        return self

    def add_port(self, port, access):
        """Network rights (LANDLOCK_ACCESS_NET_*) a call needed on TCP `port`."""
        _check(_lib.pathwarden_learner_add_port(self._h, port, access, 0))
        return self

    def need_unscoped(self, scopes):
        """Scopes (LANDLOCK_SCOPE_*) the program crossed: left unscoped."""
        _check(_lib.pathwarden_learner_need_unscoped(self._h, scopes, 0))
        return self

    def policy(self, abi=0):
        """The TOML policy at Landlock ABI `abi` (0: this kernel's); sets
        `beyond`, one note per directory a right was widened to."""
        text = ctypes.c_char_p()
        n = _check(_lib.pathwarden_learner_policy(self._h, abi, ctypes.byref(text), 0))
        self.beyond = [_s(_lib.pathwarden_learner_beyond(self._h, i)) for i in range(n)]
        return _s(text.value)


class Process(_Handle):
    """One process of a model (pathwarden_process)."""

    _free = "pathwarden_process_free"

    @property
    def layers(self):
        return _check(_lib.pathwarden_process_layers(self._h, 0))

    def chdir(self, path):
        _check(_lib.pathwarden_process_chdir(self._h, _b(path), 0))

    def set_userns(self, uid_map, gid_map=None):
        """Into a user namespace of its own: maps "INSIDE:OUTSIDE:COUNT[,...]"
        (gid_map: the uid map by default), OUTSIDE in the model's ids."""
        _check(_lib.pathwarden_process_set_userns(self._h, _b(uid_map), _b(gid_map), 0))

    def restrict(self, ruleset):
        """One more Landlock layer; the kernel's refusal raises Error."""
        _check(_lib.pathwarden_process_restrict(self._h, ruleset._h, 0))

    def _request(self, op, path, path2, **args):
        r = _Request()
        _check(_lib.pathwarden_request_init(ctypes.byref(r), int(op)))
        r.path = _b(path)
        r.path2 = _b(path2)
        keep = []
        for k, v in args.items():
            if k == "target":
                r.target = v._h
            elif k == "ruleset":
                r.ruleset = v._h
                keep.append(v)
            elif k == "times":
                r.has_times = 1
                r.times[0], r.times[1] = v
            elif k == "name":
                r.name = _b(v)
            elif k == "value":
                buf = ctypes.create_string_buffer(bytes(v), len(v))
                r.value = ctypes.cast(buf, ctypes.c_void_p)
                r.value_len = len(v)
                keep.append(buf)
            elif hasattr(r, k) and k not in ("op", "path", "path2"):
                setattr(r, k, v)
            else:
                raise TypeError(f"ask() got an unexpected argument {k!r}")
        return r, keep

    def ask(self, op, path=None, path2=None, verdict_only=False, **args):
        """What `op` on `path` gives, changing nothing. Arguments as in
        struct pathwarden_request: flags, mode, type, uid, gid, fd, cmd,
        port, dirfd, times=(atime, mtime), target=Process, ruleset=Ruleset,
        name, value (bytes), xattr_flags, offset, len."""
        r, _keep = self._request(op, path, path2, **args)
        h = ctypes.c_void_p()
        _check(_lib.pathwarden_ask(self._h, ctypes.byref(r), 1 if verdict_only else 0,
                                   ctypes.byref(h), 0))
        return Decision(h)

    def apply(self, op, path=None, path2=None, verdict_only=False, **args):
        """The same, then the change the call makes when it succeeds."""
        r, _keep = self._request(op, path, path2, **args)
        h = ctypes.c_void_p()
        _check(_lib.pathwarden_apply(self._h, ctypes.byref(r), 1 if verdict_only else 0,
                                     ctypes.byref(h), 0))
        return Decision(h)

    def ask_line(self, line):
        """A request in explain --batch's words ("open /etc/shadow O_RDONLY")."""
        h = ctypes.c_void_p()
        _check(_lib.pathwarden_ask_line(self._h, line.encode(), ctypes.byref(h), 0))
        return Decision(h)


class Check:
    """One permission check of a decision: a walk component or the DAC check."""

    def __init__(self, c):
        self.path = _s(c.path)
        self.want = c.want
        # None: the check is outside the model (the decision is unknown).
        self.granted = None if c.granted < 0 else bool(c.granted)
        self.fast = bool(c.fast)
        self.decided_by = _s(c.decided_by)
        self.capability = c.capability
        self.mode = c.mode
        self.uid = c.uid
        self.gid = c.gid
        self.has_acl = bool(c.has_acl)
        # On an overlay, the layers that hold the object ("upper",
        # "lower 2"); "" elsewhere.
        self.layer = _s(c.layer)

    def __repr__(self):
        return (f"Check({self.path!r}, want={self.want}, granted={self.granted}, "
                f"decided_by={self.decided_by!r})")


class Grant:
    def __init__(self, g):
        self.path = _s(g.path)
        self.granted = g.granted
        self.origin = _s(g.origin)


class Layer:
    """One Landlock layer's verdict in a decision."""
    KINDS = ("fs", "net", "scope")

    def __init__(self, decision, i, l):
        self.layer = l.layer
        self.kind = self.KINDS[l.kind]
        self.requested = l.requested
        self.missing = l.missing
        self.missing_names = [n for n in _s(l.missing_names).split(",") if n]
        self.policy = _s(l.policy)
        self.grants = []
        for k in range(l.grant_count):
            g = _Grant()
            _check(_lib.pathwarden_decision_grant(decision._h, i, k, ctypes.byref(g), 0))
            self.grants.append(Grant(g))


class Decision(_Handle):
    """One answer (pathwarden_decision): verdict, errno, stage, reason, and
    its parts."""

    _free = "pathwarden_decision_free"

    @property
    def verdict(self):
        return Verdict(_check(_lib.pathwarden_decision_verdict(self._h)))

    allowed = property(lambda self: self.verdict == Verdict.ALLOWED)
    denied = property(lambda self: self.verdict == Verdict.DENIED)
    unknown = property(lambda self: self.verdict == Verdict.UNKNOWN)

    @property
    def errno(self):
        """The errno Linux returns (0 when allowed); None when unknown."""
        e = _lib.pathwarden_decision_errno(self._h)
        if e == -_errno.ENODATA:  # unknown
            return None
        return _check(e)

    @property
    def fd(self):
        return _lib.pathwarden_decision_fd(self._h)

    stage = property(lambda self: _s(_lib.pathwarden_decision_stage(self._h)))
    reason = property(lambda self: _s(_lib.pathwarden_decision_reason(self._h)))
    unknown_why = property(lambda self: _s(_lib.pathwarden_decision_unknown_why(self._h)))
    result = property(lambda self: _s(_lib.pathwarden_decision_result(self._h)))

    @property
    def json(self):
        """The decision as explain --json gives it (a dict)."""
        return _json.loads(_s(_lib.pathwarden_decision_json(self._h, 0)))

    @property
    def components(self):
        out = []
        for i in range(_check(_lib.pathwarden_decision_component_count(self._h))):
            c = _Check()
            _check(_lib.pathwarden_decision_component(self._h, i, ctypes.byref(c), 0))
            out.append(Check(c))
        return out

    @property
    def dac(self):
        c = _Check()
        rc = _lib.pathwarden_decision_dac(self._h, ctypes.byref(c), 0)
        if rc == -_errno.ENOENT:  # no DAC check was made
            return None
        _check(rc)
        return Check(c)

    @property
    def layers(self):
        out = []
        for i in range(_check(_lib.pathwarden_decision_layer_count(self._h))):
            l = _Layer()
            _check(_lib.pathwarden_decision_layer(self._h, i, ctypes.byref(l), 0))
            out.append(Layer(self, i, l))
        return out

    def __repr__(self):
        return f"Decision({self.result}: {self.reason})"
