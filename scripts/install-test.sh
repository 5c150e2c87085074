#!/bin/bash
# ctest InstallWithoutTestsInstallsO2ctlAndManPages: `make install` into a
# DESTDIR, from a build tree of its own in a temporary folder: it configures
# with O2LND_BUILD_TESTS=OFF (GoogleTest is not looked for), builds o2ctl
# and installs exactly o2ctl (sbin), o2ctl.8 (man8) and o2lnd.4 (man4)
# under DESTDIR + PREFIX; the installed o2ctl runs.  The build tree is a
# temporary folder at the top of the source tree, where make install's own
# (build-install) is: at the depth of the main build, ccache finds what
# that compiled, so a warm run takes seconds.  It is removed at the end.
set -uo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d "$TOP/build-install-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# Not a sub-make of whatever make ran ctest (make check): its jobserver and
# command-line variables stay out.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
dest="$tmp/dest"
prefix=/usr
if ! make -C "$TOP" --no-print-directory install DESTDIR="$dest" PREFIX="$prefix" \
	INSTALL_BUILD="$tmp/build" > "$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "FAIL: make install"
	exit 1
fi
cache="$tmp/build/CMakeCache.txt"
grep -q '^O2LND_BUILD_TESTS:BOOL=OFF$' "$cache" || fail "the install build is not O2LND_BUILD_TESTS=OFF"
if grep -qi '^GTest_DIR\|^GTEST_\|^yaml-cpp_DIR' "$cache"; then
	fail "the install build looked for GoogleTest or yaml-cpp: $(grep -i '^GTest_DIR\|^GTEST_\|^yaml-cpp_DIR' "$cache" | tr '\n' ' ')"
fi
[[ ! -e "$tmp/build/CTestTestfile.cmake" ]] || fail "the install build has tests"
want=("$prefix/sbin/o2ctl" "$prefix/share/man/man8/o2ctl.8" "$prefix/share/man/man4/o2lnd.4")
for f in "${want[@]}"; do
	[[ -f "$dest$f" ]] || fail "not installed: $f"
done
got=$(cd "$dest" && find . -type f -o -type l | sed 's/^\.//' | sort)
expected=$(printf '%s\n' "${want[@]}" | sort)
[[ "$got" == "$expected" ]] || fail "installed files: $(echo "$got" | tr '\n' ' ') (expected $(echo "$expected" | tr '\n' ' '))"
[[ -x "$dest$prefix/sbin/o2ctl" ]] || fail "o2ctl is not executable"
cmp -s "$TOP/o2ctl/o2ctl.8" "$dest$prefix/share/man/man8/o2ctl.8" || fail "o2ctl.8 differs from the source"
cmp -s "$TOP/docs/o2lnd.4" "$dest$prefix/share/man/man4/o2lnd.4" || fail "o2lnd.4 differs from the source"
out=$("$dest$prefix/sbin/o2ctl" --help 2>&1) || fail "installed o2ctl --help failed: $out"
[[ "$out" == Usage:\ o2ctl* ]] || fail "installed o2ctl --help: $out"
if ((fails)); then
	sed 's/^/  install.log: /' "$tmp/install.log" | tail -20
	exit 1
fi
echo "ok: make install DESTDIR PREFIX=$prefix: ${want[*]}"
