#!/usr/bin/python3
"""Reads `pathwarden map --json` lines for BACKING (stdin), and checks each
right it states for every path through the mount MOUNT as UID:GID:GROUPS:
list, search (a lookup in the directory), read, write, truncate, execute.
Prints one line per path and right checked; exits 1 on a disagreement.
Usage: probe.py BACKING MOUNT UID GID GROUPS"""
import errno
import json
import os
import sys

from as_user import as_user

backing, mount = sys.argv[1], sys.argv[2]
uid, gid = int(sys.argv[3]), int(sys.argv[4])
groups = [int(g) for g in sys.argv[5].split(",") if g]


def attempt(fn):
    return as_user(uid, gid, groups, fn)


def opener(path, flags):
    def f():
        os.close(os.open(path, flags))
    return f


def execute(path):
    def f():
        try:
            os.execv(path, [path])
        except OSError as e:
            if e.errno != errno.ENOEXEC:  # permitted, not a program
                raise
    return f


def lookup(path):
    def f():
        try:
            os.lstat(os.path.join(path, ".pathwarden-probe"))
        except FileNotFoundError:
            pass
    return f


bad = 0
checked = 0
for line in sys.stdin:
    entry = json.loads(line)
    path = entry["path"]
    if path != backing and not path.startswith(backing + "/"):
        continue
    there = mount + path[len(backing):]
    rights = entry["rights"]
    if entry["type"] == "dir":
        probes = {"list": lambda: os.listdir(there), "search": lookup(there)}
    else:
        probes = {"read": opener(there, os.O_RDONLY), "write": opener(there, os.O_WRONLY),
                  "truncate": opener(there, os.O_WRONLY | os.O_TRUNC),
                  "execute": execute(there)}
    for right, fn in probes.items():
        if right not in rights:
            continue
        got = attempt(fn)
        want = rights[right]
        ok = (got == "ok") == want
        checked += 1
        print("%s\t%s\t%s\tmap %s\t%s" % (there, right, got, "allows" if want else "denies",
                                         "ok" if ok else "MISMATCH"))
        if not ok:
            bad += 1
print("%d checks, %d mismatches" % (checked, bad))
sys.exit(1 if bad or not checked else 0)
