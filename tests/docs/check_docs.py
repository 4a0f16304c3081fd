#!/usr/bin/python3
"""Docs that say true things about the tree (issue 29).

Every path of this repository that the README, docs/ and the public
headers name in backticks (or after "Linux:"-free prose in the headers'
comments) must exist: a file or a folder, a glob matching something, or
each member of a {a,b} group. Placeholders in capitals (NAME, DIR, FILE)
and build trees (build*/) are not paths of the repository. Every
`pathwarden COMMAND` they show must be a command of the CLI. And
docs/scenario-spec.md must be the shared specification it copies, where
that is beside the repository (../shared/spec/scenario.md).

Usage: check_docs.py ROOT [PATHWARDEN]. Exit 1 naming each FILE:LINE.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
CLI = sys.argv[2] if len(sys.argv) > 2 else None
TOP = ("src/", "include/pathwarden", "tests/", "docs/", "cli/", "bench/", "examples/",
       "scripts/", "python/", "cmake/", "fileserver/", ".ci/")
PATH = re.compile(r"`([^`\s]+)`")
HEADER_PATH = re.compile(r"(?<![\w./])((?:%s)[\w./{},*-]*)" % "|".join(re.escape(t) for t in TOP))
COMMAND = re.compile(r"`pathwarden ([a-z][a-z-]*)\b")


def braces(p):
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    return [q for alt in m.group(1).split(",") for q in braces(p[:m.start()] + alt + p[m.end():])]


def exists(p):
    p = p.rstrip(".,;:)")
    if any(re.fullmatch(r"[A-Z][A-Z_]{2,}", part) for part in p.split("/")):
        return True  # a placeholder: NAME, DIR, FILE
    for q in braces(p):
        q = q.split(":")[0]  # path:line
        full = os.path.join(ROOT, q)
        if any(c in q for c in "*?["):
            if not glob.glob(full, recursive=True):
                return False
        elif not os.path.exists(full):
            return False
    return True


def sources():
    out = [os.path.join(ROOT, "README.md")]
    out += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    out += sorted(glob.glob(os.path.join(ROOT, "include", "pathwarden", "*.h")))
    return out


def main():
    bad = []
    commands = None
    if CLI:
        text = subprocess.run([CLI, "--help"], capture_output=True, text=True).stdout
        commands = set(re.findall(r"^\s{2,}([a-z][a-z-]*)\s", text, re.M))
        if len(commands) < 5:
            print(f"{CLI} --help lists {len(commands)} commands: not read", file=sys.stderr)
            return 1
    for f in sources():
        rel = os.path.relpath(f, ROOT)
        header = f.endswith(".h")
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            found = PATH.findall(line) if not header else HEADER_PATH.findall(line)
            for p in found:
                if p.startswith(TOP) and not exists(p):
                    bad.append(f"{rel}:{n}: names {p}, which is not in the repository")
            if commands is not None and not header:
                for c in COMMAND.findall(line):
                    if c not in commands:
                        bad.append(f"{rel}:{n}: shows `pathwarden {c}`, not a command of the CLI")
    shared = os.path.join(ROOT, "..", "shared", "spec", "scenario.md")
    copy = os.path.join(ROOT, "docs", "scenario-spec.md")
    if os.path.exists(shared):
        body = open(copy, encoding="utf-8").read().split("\n", 2)[2]
        if body != open(shared, encoding="utf-8").read():
            bad.append("docs/scenario-spec.md: differs from ../shared/spec/scenario.md")
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        return 1
    print(f"docs: {len(sources())} files, every repository path and command they name exists")
    return 0


sys.exit(main())
