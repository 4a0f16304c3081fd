#!/usr/bin/env bash
# The Python module's suite (tests/capi/python/) under Debian's python3
# and pytest: from the build tree (PYTHONPATH=python/ and
# PATHWARDEN_LIBRARY at the built library), or from an installed prefix
# (`cmake --install` into a temporary one; the module finds the library
# by the path the install recorded).
# Usage: python_test.sh build SOURCE_DIR LIBRARY [SANITIZE CXX]
#        python_test.sh install SOURCE_DIR BUILD_DIR [SANITIZE CXX]
# Under a sanitizer build the library needs its runtime first: the
# compiler's ASan runtime is preloaded into python3 (leaks not reported:
# python's own are not ours).
set -euo pipefail
mode=$1 src=$2 arg=$3 san=${4:-} cxx=${5:-}
export PYTHONDONTWRITEBYTECODE=1
unset PATHWARDEN_LIBRARY PW_EXPECT_PREFIX
if [ -n "$san" ]; then
  rt=$("$cxx" -print-file-name=libclang_rt.asan-x86_64.so)
  [ -f "$rt" ] || { echo "python_test: no ASan runtime at $rt" >&2; exit 1; }
  export LD_PRELOAD=$rt
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi
case $mode in
  build)
    export PYTHONPATH=$src/python
    export PATHWARDEN_LIBRARY=$arg
    ;;
  install)
    tmp=$(mktemp -d /tmp/pathwarden-python-XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
    cmake --install "$arg" --prefix "$tmp/prefix" >/dev/null
    export PYTHONPATH=$tmp/prefix/lib/python3/dist-packages
    export PW_EXPECT_PREFIX=$tmp/prefix
    ;;
  *) echo "python_test: mode build or install" >&2; exit 2 ;;
esac
cd "$src/tests/capi/python"
# Not exec: the install mode's trap removes its temporary prefix on exit.
/usr/bin/python3 -m pytest -q -p no:cacheprovider test_pathwarden.py
