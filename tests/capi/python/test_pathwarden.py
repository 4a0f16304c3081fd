"""The Python module (python/pathwarden/) over libpathwarden: the
questions the C consumer asks (tests/capi/consumer/consumer.c), and the
module's errors. Run by tests/capi/python_test.sh, from the build tree
and from an installed prefix."""

import errno
import os
import tempfile

import pytest

import pathwarden

READ_FILE = 1 << 2


@pytest.fixture
def model():
    m = pathwarden.Model()
    m.mkdir("/home", 0o755)
    m.mkdir("/home/alice", 0o700, uid=1000, gid=1000)
    m.create("/home/alice/key", 0o600, uid=1000, gid=1000)
    m.mkdir("/tmp", 0o1777)
    return m


def test_the_module_is_the_one_expected():
    prefix = os.environ.get("PW_EXPECT_PREFIX")
    if prefix:
        assert pathwarden.__file__.startswith(prefix), pathwarden.__file__
    assert pathwarden.version() == "0.1.0"


def test_op_is_the_librarys(model):
    # Op is built from pathwarden_op_name(): the C enum's values, in order.
    assert pathwarden.Op.OPEN == 0 and pathwarden.Op.CLOSE == 1
    assert pathwarden.Op.EXEC_CHECK == 19 and pathwarden.Op.FUTIMENS == 40
    assert [int(op) for op in pathwarden.Op] == list(range(len(pathwarden.Op)))
    assert pathwarden.Op.MOUNT_SETATTR == 41 and len(pathwarden.Op) == 42


def test_walk_denial(model):
    backup = model.process(uid=34, gid=34, name="backup")
    d = backup.ask(pathwarden.Op.ACCESS, "/home/alice/key", mode=os.R_OK)
    assert d.verdict == pathwarden.Verdict.DENIED and d.denied and not d.allowed
    assert d.errno == errno.EACCES
    assert d.stage == "walk"
    assert d.result == "EACCES"
    assert d.reason == ('walk: no search permission on /home/alice (drwx------ 1000:1000; '
                        'uid 34 falls in "other": --- lacks x)')
    last = d.components[-1]
    assert last.path == "/home/alice" and not last.granted and last.decided_by == "other"
    assert all(c.granted for c in d.components[:-1])
    assert d.dac is None
    j = d.json
    assert j["result"] == "EACCES" and j["op"] == "access" and j["stage"] == "walk"
    assert [w["path"] for w in j["walk"]][-1] == "/home/alice"


def test_owner_allowed_with_dac(model):
    alice = model.process(uid=1000, gid=1000, groups=[50])
    d = alice.ask_line("open /home/alice/key O_RDWR")
    assert d.allowed and d.errno == 0
    assert d.dac.decided_by == "owner 1000" and d.dac.granted
    assert d.dac.layer == ""  # not an overlay (the C API test has one)


def test_landlock_layer_denial(model):
    alice = model.process(uid=1000, gid=1000)
    alice.restrict(pathwarden.Ruleset(handled_fs=READ_FILE).allow_path("/tmp", READ_FILE))
    assert alice.layers == 1
    d = alice.ask(pathwarden.Op.OPEN, "/home/alice/key", flags=os.O_RDONLY)
    assert d.errno == errno.EACCES and d.stage == "landlock"
    (layer,) = d.layers
    assert layer.layer == 1 and layer.kind == "fs"
    assert layer.missing == READ_FILE and layer.missing_names == ["fs.read_file"]
    assert layer.policy == ""


def test_policy_file_layer(model):
    model.mkdir("/srv")
    model.create("/srv/a")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.toml")
        with open(path, "w") as f:
            f.write('[[ruleset]]\nhandled_access_fs = ["read_file"]\n\n'
                    '[[path_beneath]]\nallowed_access = ["read_file"]\nparent = ["/srv"]\n')
        rs = pathwarden.Ruleset.load(path)
        p = model.process(uid=1000, gid=1000)
        p.restrict(rs)
        ok = p.ask_line("open /srv/a")
        assert ok.allowed
        (layer,) = ok.layers
        assert layer.policy == path
        (grant,) = layer.grants
        assert grant.path == "/srv" and grant.granted == READ_FILE
        assert grant.origin.startswith(path + ":")
        assert p.ask_line("open /home/alice/key").stage == "landlock"
        with pytest.raises(pathwarden.Error) as e:
            rs.allow_path("/etc", READ_FILE)
        assert e.value.errno == errno.EINVAL


def test_bad_policy_file_says_where():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bad.toml")
        with open(path, "w") as f:
            f.write('[[ruleset]]\nhandled_access_fs = ["read_fil"]\n')
        with pytest.raises(pathwarden.Error) as e:
            pathwarden.Ruleset.load(path)
        assert e.value.errno == errno.EINVAL
        assert (path + ":2:") in e.value.strerror


def test_builder_errors_are_linux_errnos(model):
    with pytest.raises(pathwarden.Error) as e:
        model.mkdir("/home")
    assert e.value.errno == errno.EEXIST
    with pytest.raises(pathwarden.Error) as e:
        model.mkdir("/nope/x")
    assert e.value.errno == errno.ENOENT and "mkdir /nope/x" in e.value.strerror
    with pytest.raises(pathwarden.Error) as e:
        model.setfacl("/home/alice", "u:34:rwz")
    assert e.value.errno == errno.EINVAL
    # (uid_t)-1 is no id: Linux refuses it in an ACL.
    with pytest.raises(pathwarden.Error) as e:
        model.setfacl("/home/alice", "u:4294967295:r--")
    assert e.value.errno == errno.EINVAL and "(uid_t)-1" in e.value.strerror
    with pytest.raises(pathwarden.Error) as e:
        model.setfacl("/home/alice", None, "g:4294967295:rwx")
    assert e.value.errno == errno.EINVAL


def test_builder_acl_chmod_chown_mount(model):
    backup = model.process(uid=34, gid=34)
    model.setfacl("/home/alice", "u:34:--x")
    assert backup.ask_line("stat /home/alice/key").allowed
    d = backup.ask_line("open /home/alice/key")
    assert d.stage == "dac" and d.errno == errno.EACCES
    assert d.components[-1].decided_by == "ACL entry user:34"
    model.chmod("/home/alice/key", 0o644)
    assert backup.ask_line("open /home/alice/key").allowed
    model.chown("/home/alice/key", uid=34)
    assert backup.ask_line("open /home/alice/key O_WRONLY").allowed
    model.mkdir("/mnt")
    model.mount_tmpfs("/mnt", 0o1777)
    assert backup.ask_line("mkdir /mnt/d").allowed
    model.remount("/mnt", 1)  # read-only
    assert backup.ask_line("mkdir /mnt/d").errno == errno.EROFS
    model.set_sysctl("protected_regular", 2)
    with pytest.raises(pathwarden.Error):
        model.set_sysctl("protected_regular", 3)


def test_apply_changes_the_model(model):
    root = model.process(uid=0, gid=0)
    assert root.ask(pathwarden.Op.MKDIR, "/srv2").allowed
    assert root.ask_line("stat /srv2").errno == errno.ENOENT
    assert root.apply(pathwarden.Op.MKDIR, "/srv2", mode=0o700).allowed
    assert root.ask_line("stat /srv2").allowed
    opened = root.apply(pathwarden.Op.OPEN, "/home/alice/key")
    assert opened.fd >= 0
    assert root.apply(pathwarden.Op.CLOSE, fd=opened.fd).allowed
    assert root.apply(pathwarden.Op.CLOSE, fd=opened.fd).errno == errno.EBADF


def test_every_op(model):
    alice = model.process(uid=1000, gid=1000)
    other = model.process(uid=34, gid=34)
    rs = pathwarden.Ruleset(handled_fs=READ_FILE)
    for op in pathwarden.Op:
        d = alice.ask(op, "/tmp/a", "/tmp/b", target=other, ruleset=rs, fd=0, name="user.k",
                      value=b"v")
        assert d.verdict in (pathwarden.Verdict.ALLOWED, pathwarden.Verdict.DENIED), op
    with pytest.raises(pathwarden.Error) as e:
        alice.ask(pathwarden.Op.RENAME, "/tmp/a")
    assert e.value.errno == errno.EINVAL and "rename needs path2" in e.value.strerror
    with pytest.raises(TypeError):
        alice.ask(pathwarden.Op.OPEN, "/tmp/a", colour=1)


def test_xattrs(model):
    alice = model.process(uid=1000, gid=1000)
    root = model.process(uid=0, gid=0)
    assert alice.ask(pathwarden.Op.SETXATTR, "/home/alice/key", name="user.k",
                     value=b"\x00v").allowed
    d = alice.ask(pathwarden.Op.SETXATTR, "/home/alice/key", name="trusted.k", value=b"v")
    assert d.errno == errno.EPERM
    assert root.ask(pathwarden.Op.SETXATTR, "/home/alice/key", name="trusted.k",
                    value=b"v").allowed
    assert root.apply(pathwarden.Op.SETXATTR, "/home/alice/key", name="user.k",
                      value=b"v").allowed
    assert alice.ask(pathwarden.Op.GETXATTR, "/home/alice/key", name="user.k").allowed
    assert alice.ask(pathwarden.Op.GETXATTR, "/home/alice/key",
                     name="user.none").errno == errno.ENODATA
    with pytest.raises(pathwarden.Error) as e:
        alice.ask(pathwarden.Op.GETXATTR, "/home/alice/key")
    assert e.value.errno == errno.EINVAL and "getxattr needs name" in e.value.strerror


def test_ask_line_errors(model):
    p = model.process(uid=34, gid=34)
    with pytest.raises(pathwarden.Error) as e:
        p.ask_line("open /x O_NOPE")
    assert e.value.errno == errno.EINVAL and "O_NOPE" in e.value.strerror


def test_chdir_is_checked(model):
    p = model.process(uid=34, gid=34)
    with pytest.raises(pathwarden.Error) as e:
        p.chdir("/home/alice")
    assert e.value.errno == errno.EACCES


def test_user_namespace(model):
    # unshare -r by alice: root of a namespace mapped onto uid 1000.
    model.create("/home/root-file", 0o600)
    p = model.process(uid=1000, gid=1000, caps=pathwarden.CAPS_ALL)
    assert p.ask_line("open /home/root-file O_RDONLY").allowed
    p.set_userns("0:1000:1")
    d = p.ask_line("open /home/root-file O_RDONLY")
    assert d.errno == errno.EACCES and "does not map into it" in d.reason
    assert p.ask_line("chmod /home/alice/key 0").allowed
    with pytest.raises(pathwarden.Error) as e:
        model.process(uid=34, gid=34).set_userns("0:1000:1")
    assert e.value.errno == errno.EINVAL and "uid 34 has no mapping" in e.value.strerror


def test_live_host_and_pid():
    host = pathwarden.Model.from_host()
    me = host.process_from_pid(os.getpid())
    assert me.ask_line("stat /").allowed
    d = me.ask_line("stat /proc/self/status")
    assert d.unknown and d.errno is None and d.unknown_why
    with pytest.raises(pathwarden.Error) as e:
        host.process_from_pid(0x3FFFFFFF)
    assert e.value.errno == errno.ESRCH
    with pytest.raises(pathwarden.Error) as e:
        pathwarden.Model.from_host("/nonexistent/mountinfo")
    assert e.value.errno == errno.EIO


def test_host_writes_a_file_nothing_runs_when_assumed(tmp_path):
    # A file with an execute bit in this test's own directory: no process
    # runs it, whichever processes this reader cannot see.
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    host = pathwarden.Model.from_host(assume_unseen_run_nothing=True)
    me = host.process_from_pid(os.getpid())
    d = me.ask_line(f"open {tool} O_WRONLY")
    assert not d.unknown, d.unknown_why
    assert d.allowed == os.access(tool, os.W_OK)


def test_learner_policy_loads_back_and_allows_the_needs(model):
    model.mkdir("/srv")
    model.create("/srv/a")
    model.create("/srv/b")
    learner = pathwarden.Learner()
    learner.add_path("/srv/a", READ_FILE)
    with pytest.raises(pathwarden.Error) as e:
        learner.add_path("srv/b", READ_FILE)
    assert e.value.errno == errno.EINVAL and "srv/b" in str(e.value)
    text = learner.policy()
    assert '"/srv/a"' in text and "srv/b" not in text
    assert learner.beyond == []
    with pytest.raises(pathwarden.Error):
        learner.policy(abi=99)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "learnt.toml")
        with open(path, "w") as f:
            f.write(text)
        p = model.process(uid=1000, gid=1000)
        p.restrict(pathwarden.Ruleset.load(path))
        assert p.ask_line("open /srv/a").allowed
        b = p.ask_line("open /srv/b")
        assert b.errno == errno.EACCES and b.stage == "landlock"
