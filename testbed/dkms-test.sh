#!/bin/bash
# DKMS packaging test (make check): dkms add / build / install / remove of
# this source tree for the guest kernels' headers (Debian's 6.1 and, when
# setup prepared it, 6.12: one dkms add, a build and an install for each),
# as a user of dkms.conf would do it.  The host runs another kernel, so
# everything names the kernel explicitly (-k <release>); nothing is loaded.
# The headers are the copy setup unpacked into $O2_CACHE/kernels
# (scripts/o2-apt.sh: o2_linux_headers), given to dkms with
# --kernelsourcedir: no linux-headers package (nor the linux-image 6.12's
# depends on) is installed on the host for it.
#
#   testbed/dkms-test.sh OUTDIR      JUnit XML in OUTDIR/dkms.xml, log in OUTDIR/dkms.log
#
# The tree (dkms.conf, Kbuild, Makefile, include/, module/, kunit/ sources)
# is copied to /usr/src/o2lnd-<PACKAGE_VERSION>; dkms puts the module in
# /lib/modules/<release>/updates/dkms/o2lnd.ko (Debian's dkms 3.0.10:
# DEST_MODULE_LOCATION, signed with dkms' own MOK key /var/lib/dkms/mok.*,
# which dkms generates on its first build and keeps).  Everything the test
# adds is removed again: the DKMS tree entry, the /usr/src copy, the
# module, depmod's index files when there were none before, and
# /lib/modules/<release> itself when it did not exist before.  If o2lnd
# is already known to DKMS on this machine the cases are skipped (it is
# not touched).  Installs dkms (apt) when missing.
#
# Cases: VersionMatchesModule, ConfNamesNoRunningKernel, Add, then
# Build/<release>, Install/<release>, ModinfoShowsVersionAndVermagic/<release>
# for each kernel, RemoveLeavesNothing.
#
# Env: O2_DKMS_KERNELS (releases; default: <top>/.testbed-abi and
# <top>/.testbed-abi-debian612 when it exists).
set -euo pipefail

TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT=${1:?usage: testbed/dkms-test.sh OUTDIR}
mkdir -p "$OUT"
XML="$OUT/dkms.xml"
LOG="$OUT/dkms.log"
: > "$LOG"
T0=$SECONDS
say() { printf '[dkms  %4ds] %s\n' $((SECONDS - T0)) "$*"; }
log() { echo "$*" >> "$LOG"; }

cases=()
xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }
pass() {
	cases+=("  <testcase classname=\"Dkms\" name=\"$1\"/>")
	say "[       OK ] Dkms.$1"
}
fail() {  # fail NAME MESSAGE
	local msg
	msg=$(printf '%s' "$2" | xml_escape)
	cases+=("  <testcase classname=\"Dkms\" name=\"$1\"><failure message=\"$msg (log $LOG)\"/></testcase>")
	say "[  FAILED  ] Dkms.$1: $2 (log $LOG)"
	log "FAILED: $1: $2"
}
skip() {
	local msg
	msg=$(printf '%s' "$2" | xml_escape)
	cases+=("  <testcase classname=\"Dkms\" name=\"$1\"><skipped message=\"$msg\"/></testcase>")
	say "[  SKIPPED ] Dkms.$1: $2"
}
write_xml() {
	{
		echo '<testsuites><testsuite name="Dkms">'
		printf '%s\n' "${cases[@]}"
		echo '</testsuite></testsuites>'
	} > "$XML"
}
# run CMD...: logged with its output; its status
run() {
	log "\$ $*"
	local rc=0
	"$@" >> "$LOG" 2>&1 || rc=$?
	log "  -> status $rc"
	return "$rc"
}

read -r -a KRELS <<<"${O2_DKMS_KERNELS:-$(cat "$TOP/.testbed-abi" 2>/dev/null || true) $(cat "$TOP/.testbed-abi-debian612" 2>/dev/null || true)}"
ALL=(VersionMatchesModule ConfNamesNoRunningKernel Add)
for k in "${KRELS[@]}"; do ALL+=("Build/$k" "Install/$k" "ModinfoShowsVersionAndVermagic/$k"); done
ALL+=(RemoveLeavesNothing)

# ---------------------------------------------------------------- static checks
conf="$TOP/dkms.conf"
ver=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$conf")
modver=$(sed -n 's/^#define[[:space:]]\{1,\}O2_VERSION[[:space:]]\{1,\}"\([^"]*\)".*/\1/p' "$TOP/module/o2lnd.h")
if [[ -n "$ver" && "$ver" == "$modver" ]]; then
	pass VersionMatchesModule
else
	fail VersionMatchesModule "dkms.conf PACKAGE_VERSION '$ver' != O2_VERSION '$modver' in module/o2lnd.h"
fi
# shellcheck disable=SC2016 # literal $( in the pattern
if grep -v '^[[:space:]]*#' "$conf" | grep -q 'uname\|/lib/modules/\$(\|\$(shell'; then
	fail ConfNamesNoRunningKernel "dkms.conf refers to the running kernel (uname) instead of \${kernelver}/\${kernel_source_dir}"
else
	pass ConfNamesNoRunningKernel
fi

# ---------------------------------------------------------------- preconditions
skip_rest() {
	local c
	for c in "${ALL[@]:2}"; do skip "$c" "$1"; done
	write_xml
	exit 0
}
[[ ${#KRELS[@]} -gt 0 ]] || { for c in "${ALL[@]:2}"; do fail "$c" "no kernel release (.testbed-abi; run testbed/setup.sh)"; done; write_xml; exit 0; }
[[ -n "$ver" ]] || { for c in "${ALL[@]:2}"; do fail "$c" "no PACKAGE_VERSION in dkms.conf"; done; write_xml; exit 0; }
# shellcheck source=scripts/o2-apt.sh
. "$TOP/scripts/o2-apt.sh"
if ! command -v dkms > /dev/null; then
	say "installing dkms"
	o2_apt_install dkms >> "$LOG" 2>&1 ||
		{ for c in "${ALL[@]:2}"; do fail "$c" "apt-get install dkms failed (log $O2_APT_LOG)"; done; write_xml; exit 0; }
fi
declare -A HDR
for KREL in "${KRELS[@]}"; do
	if ! HDR[$KREL]=$(o2_linux_headers "$KREL" 2>> "$LOG") || [[ ! -d "${HDR[$KREL]}/include" ]]; then
		for c in "${ALL[@]:2}"; do fail "$c" "no headers for $KREL (o2_linux_headers; run testbed/setup.sh)"; done
		write_xml
		exit 0
	fi
	log "headers for $KREL: ${HDR[$KREL]}"
done
# One DKMS test per machine at a time (make check runs may overlap).
exec 9> /run/lock/o2lnd-dkms-test.lock
flock -w 900 9 || skip_rest "another DKMS test held /run/lock/o2lnd-dkms-test.lock for 15 min"
SRC="/usr/src/o2lnd-$ver"
if [[ -e "$SRC" || -e /var/lib/dkms/o2lnd ]]; then
	skip_rest "o2lnd is already installed for DKMS on this machine ($SRC or /var/lib/dkms/o2lnd): not touching it"
fi

declare -A before had_updates had_moddir
for KREL in "${KRELS[@]}"; do
	MODDIR="/lib/modules/$KREL"
	had_moddir[$KREL]=0
	[[ -d "$MODDIR" ]] && had_moddir[$KREL]=1
	before[$KREL]=$({ find "$MODDIR" -maxdepth 1 -name 'modules.*' -printf '%f\n' 2> /dev/null || true; } | sort)
	had_updates[$KREL]=0
	[[ -d "$MODDIR/updates" ]] && had_updates[$KREL]=1
done
cleanup() {
	local k m
	if [[ -d /var/lib/dkms/o2lnd ]]; then
		dkms remove "o2lnd/$ver" --all >> "$LOG" 2>&1 || true
		rm -rf /var/lib/dkms/o2lnd
	fi
	rm -rf "$SRC"
	for k in "${KRELS[@]}"; do
		m="/lib/modules/$k"
		rm -f "$m"/updates/dkms/o2lnd.ko*
		if [[ ${had_updates[$k]} == 0 ]]; then
			rmdir "$m/updates/dkms" "$m/updates" 2> /dev/null || true
		fi
		if [[ -z "${before[$k]}" ]]; then  # depmod's index files did not exist before us
			find "$m" -maxdepth 1 -name 'modules.*' -delete 2> /dev/null
		fi
		if [[ ${had_moddir[$k]} == 0 ]]; then  # nor did the folder: its empty folders go
			find "$m" -depth -type d -empty -delete 2> /dev/null
		fi
	done
	return 0
}
trap cleanup EXIT

# ---------------------------------------------------------------- add/build/install
t=$SECONDS
mkdir -p "$SRC/include"
cp "$TOP/dkms.conf" "$TOP/Kbuild" "$TOP/Makefile" "$SRC/"
cp -r "$TOP/include/." "$SRC/include/"
# every layer's folder, whatever their names (module/*/)
(cd "$TOP" && cp --parents module/*.[ch] module/*/*.[ch] kunit/*.[ch] \
	scripts/o2-probe.sh "$SRC/")
if run dkms add "o2lnd/$ver" && dkms status "o2lnd/$ver" | grep -q "o2lnd/$ver.*: added"; then
	pass Add
else
	fail Add "dkms add o2lnd/$ver failed"
fi
for KREL in "${KRELS[@]}"; do
	MODDIR="/lib/modules/$KREL"
	KO="$MODDIR/updates/dkms/o2lnd.ko"
	t=$SECONDS
	# sign_file: dkms looks for it under /usr/lib/linux-kbuild-* and
	# /lib/modules/<release>/build, where no package put it
	if run env sign_file="${HDR[$KREL]}/scripts/sign-file" dkms build "o2lnd/$ver" -k "$KREL" \
		--kernelsourcedir "${HDR[$KREL]}" && dkms status "o2lnd/$ver" -k "$KREL" | grep -q ': built'; then
		pass "Build/$KREL"
	else
		fail "Build/$KREL" "dkms build o2lnd/$ver -k $KREL failed (make.log: /var/lib/dkms/o2lnd/$ver/build/make.log)"
		sed -n '1,40p' "/var/lib/dkms/o2lnd/$ver/build/make.log" >> "$LOG" 2> /dev/null || true
	fi
	log "build took $((SECONDS - t)) s"
	# dkms installs only for a kernel whose /lib/modules/<release> exists,
	# which no package made here (the guests' kernels are unpacked into
	# the cache, never installed): made for the test, removed by cleanup
	mkdir -p "$MODDIR"
	# a kernel with CONFIG_MODULE_COMPRESS_* (6.12: xz) gets o2lnd.ko.xz
	run dkms install "o2lnd/$ver" -k "$KREL" --kernelsourcedir "${HDR[$KREL]}" || true
	for z in "" .xz .zst .gz; do
		[[ -f "$KO$z" ]] && { KO="$KO$z"; break; }
	done
	if dkms status "o2lnd/$ver" -k "$KREL" 2>/dev/null | grep -q ': installed' &&
		[[ -f "$KO" ]] && [[ "$(modinfo -k "$KREL" -F filename o2lnd 2> /dev/null)" == "$KO" ]]; then
		pass "Install/$KREL"
	else
		fail "Install/$KREL" "dkms install: expected $KO, known to modinfo -k $KREL o2lnd (status: $(dkms status o2lnd 2>&1 | tr '\n' ' '))"
	fi
	run modinfo "$KO" || true
	mver=$(modinfo -F version "$KO" 2> /dev/null || true)
	mmagic=$(modinfo -F vermagic "$KO" 2> /dev/null || true)
	if [[ "$mver" == "$modver" && "$mmagic" == "$KREL "* ]]; then
		pass "ModinfoShowsVersionAndVermagic/$KREL"
	else
		fail "ModinfoShowsVersionAndVermagic/$KREL" "modinfo $KO: version '$mver' (want '$modver'), vermagic '$mmagic' (want '$KREL ...')"
	fi
	# the build printed the feature probes of this kernel
	grep "^o2lnd: probe" "/var/lib/dkms/o2lnd/$ver/build/make.log" 2>/dev/null | sed "s/^/    [$KREL] /" >> "$LOG" || true
done

# ---------------------------------------------------------------- remove
run dkms remove "o2lnd/$ver" --all || true
left=()
[[ -e /var/lib/dkms/o2lnd ]] && left+=("/var/lib/dkms/o2lnd")
for KREL in "${KRELS[@]}"; do
	MODDIR="/lib/modules/$KREL"
	compgen -G "$MODDIR/updates/dkms/o2lnd.ko*" > /dev/null && left+=("$MODDIR/updates/dkms/o2lnd.ko")
	done
dkms status 2> /dev/null | grep -q '^o2lnd' && left+=("dkms status: $(dkms status | grep '^o2lnd')")
modinfo -k "$KREL" o2lnd > /dev/null 2>&1 && left+=("modinfo -k $KREL o2lnd still finds it")
if [[ ${#left[@]} -eq 0 ]]; then
	pass RemoveLeavesNothing
else
	fail RemoveLeavesNothing "after dkms remove --all: ${left[*]}"
fi
cleanup
trap - EXIT
[[ -e "$SRC" ]] && log "warning: $SRC still there after cleanup"
write_xml
