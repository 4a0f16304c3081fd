#!/usr/bin/env bash
# The library as its users get it: `cmake --install` into a temporary
# prefix, then a C and a C++ consumer (tests/capi/consumer/) built
# against it with CMake (find_package) and with pkg-config, and run; the
# installed files (headers, libpathwarden.so.0 and its SONAME, the CLI
# and its --version, the packages, the man page, the completion); and
# the dynamic symbol table: exactly the API.
#
# "The API" is: (1) the C functions pathwarden.h declares
# (PATHWARDEN_EXPORT), every one of them and nothing else without C++
# mangling; (2) C++ symbols (demangled; typeinfo and vtables of classes
# included) of namespace pathwarden whose first name after pathwarden::
# (or pathwarden::landlock::, or pathwarden::internal:: of result.h's
# inline helper, which clang exports) is declared in the C++ public headers
# (include/pathwarden/*.h): a class, struct, enum, function or constant.
# Nothing of the engine's own namespaces (pathwarden::vfs::, ::walk::,
# ::query::, ...), nothing of std:: or of the libraries linked in.
#
# Usage: install_test.sh BUILD_DIR SOURCE_DIR CC CXX [SANITIZE]
# (SANITIZE: the build's -fsanitize= value, given to the consumers too).
set -euo pipefail
build=$1 src=$2 cc=$3 cxx=$4 san=${5:-}
flags=() c_link=()
# A sanitized library needs the sanitizers' runtime from the program,
# C++'s too (UBSan's vptr checks) when the program is C.
[ -n "$san" ] && flags=("-fsanitize=$san") && c_link=(-fsanitize-link-c++-runtime -lstdc++)
. "$(dirname "$0")/../lib.sh"
scratch tmp /tmp/pathwarden-install-XXXXXX
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null

# The files.
for f in include/pathwarden/pathwarden.h include/pathwarden/model.h include/pathwarden/export.h \
         bin/pathwarden share/man/man1/pathwarden.1 share/bash-completion/completions/pathwarden; do
  [ -e "$prefix/$f" ] || fail "missing $f"
done
lib=$(find "$prefix" -name 'libpathwarden.so.0' -printf '%h\n')
[ -n "$lib" ] || fail "no libpathwarden.so.0 installed"
[ -L "$lib/libpathwarden.so" ] || fail "no libpathwarden.so link (for -lpathwarden)"
real=$(readlink -f "$lib/libpathwarden.so.0")
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libpathwarden.so.0 ] || fail "SONAME is \"$soname\", not libpathwarden.so.0"
[ -f "$lib/cmake/pathwarden/pathwardenConfig.cmake" ] || fail "no CMake package"
[ -f "$lib/cmake/pathwarden/pathwardenConfigVersion.cmake" ] || fail "no CMake version file"
[ -f "$lib/pkgconfig/pathwarden.pc" ] || fail "no pathwarden.pc"
grep -q '^\.TH PATHWARDEN' "$prefix/share/man/man1/pathwarden.1" || fail "the man page has no .TH"

# --version: the version and a commit of this repository.
version=$("$prefix/bin/pathwarden" --version)
[[ $version =~ ^pathwarden\ 0\.1\.0\ \(([0-9a-f]{7,})(-dirty)?\ [0-9]{4}-[0-9]{2}-[0-9]{2}\)$ ]] ||
  fail "--version printed \"$version\""
git -C "$src" cat-file -e "${BASH_REMATCH[1]}^{commit}" ||
  fail "--version names ${BASH_REMATCH[1]}, not a commit of $src"

# With CMake.
cmake -S "$src/tests/capi/consumer" -B "$tmp/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_C_FLAGS="${flags[*]}" -DCMAKE_CXX_FLAGS="${flags[*]}" \
  -DCMAKE_EXE_LINKER_FLAGS="${flags[*]} ${c_link[*]}" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
"$tmp/cmake/consumer_c"
"$tmp/cmake/consumer_cxx"
# The version file: 0.1 is compatible, 1.0 (another major) is not.
if cmake -S "$src/tests/capi/consumer" -B "$tmp/cmake-v1" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
     -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DPW_WANT=1.0 >/dev/null 2>&1; then
  fail "find_package(pathwarden 1.0) accepted version 0.1.0"
fi

# With pkg-config.
export PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion pathwarden)" = 0.1.0 ] || fail "pkg-config --modversion"
read -r -a pc_cflags <<<"$(pkg-config --cflags pathwarden)"
read -r -a pc_libs <<<"$(pkg-config --libs pathwarden)"
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror "${flags[@]}" "${pc_cflags[@]}" \
  "$src/tests/capi/consumer/consumer.c" -o "$tmp/c_pc" "${pc_libs[@]}" -Wl,-rpath,"$lib" \
  "${c_link[@]}"
"$cxx" -std=c++20 -Wall -Wextra -Werror "${flags[@]}" "${pc_cflags[@]}" \
  "$src/tests/capi/consumer/consumer.cc" -o "$tmp/cxx_pc" "${pc_libs[@]}" -Wl,-rpath,"$lib"
"$tmp/c_pc"
"$tmp/cxx_pc"
# Both found the installed library, not the build tree's.
# (ldd's output read whole: grep -q's early exit would SIGPIPE ldd, and
# pipefail would fail the check at random.)
loaded=$(ldd "$tmp/c_pc")
grep -q "$lib/libpathwarden.so.0" <<<"$loaded" || fail "c_pc does not load $lib"

# The symbols: exactly the API.
hdr=$prefix/include/pathwarden
declared=$(grep '^PATHWARDEN_EXPORT' "$hdr/pathwarden.h" | grep -o 'pathwarden_[a-z0-9_]*(' |
           tr -d '(' | sort -u)
exported_c=$(nm -D --defined-only "$real" | awk '$3 !~ /^_Z/ {print $3}' | sort -u)
if [ "$declared" != "$exported_c" ]; then
  diff <(echo "$declared") <(echo "$exported_c") >&2 || true
  fail "the C symbols exported are not those pathwarden.h declares (< declared, > exported)"
fi
[ "$(echo "$declared" | wc -l)" -ge 40 ] || fail "too few C functions found in pathwarden.h"
public=$(cat $(ls "$hdr"/*.h | grep -v '/pathwarden\.h$') |
         grep -oE '(\b(class|struct|enum class|enum)\s+(\[\[nodiscard\]\]\s+)?[A-Za-z_][A-Za-z0-9_]*|\b[A-Za-z_][A-Za-z0-9_]*\(|\bk[A-Z][A-Za-z0-9]*\b|\boperator\b)' |
         sed -E 's/^(class|struct|enum class|enum)\s+(\[\[nodiscard\]\]\s+)?//; s/\($//' | sort -u)
internal='vfs|walk|perm|ops|engine|security|task|explain|query|policy|identity|scenario_internal|kernel_internal|sandbox|trace|fuzz|bench|capi|cli|base|input'
bad=0
while IFS= read -r sym; do
  s=${sym#typeinfo name for }
  s=${s#typeinfo for }
  s=${s#vtable for }
  s=${s#guard variable for }
  if [[ ! $s =~ ^pathwarden::((landlock|internal)::)?([A-Za-z_][A-Za-z0-9_]*) ]]; then
    echo "install_test: exported, not the API: $sym" >&2; bad=1; continue
  fi
  name=${BASH_REMATCH[3]}
  if [[ $s =~ ^pathwarden::($internal):: ]] || ! grep -qx "$name" <<<"$public"; then
    echo "install_test: exported, not the API: $sym" >&2; bad=1
  fi
done < <(nm -D --defined-only "$real" | awk '$3 ~ /^_Z/ {print $3}' | c++filt)
[ "$bad" -eq 0 ] || fail "symbols beyond the API are exported"
dynsyms=$(nm -D --defined-only -C "$real")
grep -q 'pathwarden::Model::Evaluate(' <<<"$dynsyms" || fail "pathwarden::Model::Evaluate is not exported"
echo "install_test: ok ($(echo "$declared" | wc -l) C functions, $(nm -D --defined-only "$real" | awk '$3 ~ /^_Z/' | wc -l) C++ symbols)"
