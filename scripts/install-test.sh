#!/bin/bash
# ctest InstallWithoutTestsInstallsO2ctlAndManPages: `make install` into a
# DESTDIR, from a build tree of its own in a temporary folder: it configures
# with O2LND_BUILD_TESTS=OFF (GoogleTest is not looked for), builds o2ctl
# and installs exactly o2ctl (sbin), o2ctl.8 (man8), o2lnd.4 (man4) and
# o2lnd.service (lib/systemd/system) and o2lnd.conf.example
# (share/doc/o2lnd) under DESTDIR + PREFIX; the installed
# o2ctl runs, and systemd-analyze verifies the unit (its o2ctl the
# installed one) when it is there.  The build tree is a
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
if grep -qi '^GTest_DIR\|^GTEST_' "$cache"; then
	fail "the install build looked for GoogleTest: $(grep -i '^GTest_DIR\|^GTEST_' "$cache" | tr '\n' ' ')"
fi
[[ ! -e "$tmp/build/CTestTestfile.cmake" ]] || fail "the install build has tests"
unit=$prefix/lib/systemd/system/o2lnd.service
want=("$prefix/sbin/o2ctl" "$prefix/share/man/man8/o2ctl.8" "$prefix/share/man/man4/o2lnd.4"
	"$unit" "$prefix/share/doc/o2lnd/o2lnd.conf.example")
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
grep -qx "ExecStart=$prefix/sbin/o2ctl import /etc/o2lnd.conf" "$dest$unit" ||
	fail "o2lnd.service does not start $prefix/sbin/o2ctl: $(grep ExecStart "$dest$unit")"
out=$("$dest$prefix/sbin/o2ctl" import "$dest$prefix/share/doc/o2lnd/o2lnd.conf.example" \
	--options 2>&1) || fail "installed o2ctl import --options of the example: $out"
[[ "$out" == networks=* ]] || fail "installed o2ctl import --options of the example: $out"
if command -v systemd-analyze > /dev/null; then
	# the unit as installed, but its o2ctl the one under DESTDIR
	sed "s|^ExecStart=$prefix/sbin/o2ctl|ExecStart=$dest$prefix/sbin/o2ctl|" "$dest$unit" \
		> "$tmp/o2lnd.service"
	out=$(systemd-analyze verify --man=no "$tmp/o2lnd.service" 2>&1)
	[[ $? == 0 && -z "$out" ]] || fail "systemd-analyze verify o2lnd.service: $out"
fi
if ((fails)); then
	sed 's/^/  install.log: /' "$tmp/install.log" | tail -20
	exit 1
fi
echo "ok: make install DESTDIR PREFIX=$prefix: ${want[*]}"
