#!/bin/bash
# The Lustre peer of the interoperability suite (Interop*): LNet and the
# in-kernel ko2iblnd of a public lustre-release tree, built client-only for
# the guest kernel, with the tools that drive them (lctl, lnetctl, lst).
# Lustre is a test peer only: nothing of it goes into o2lnd, and its source
# comes from outside the project:
#
#   O2_LUSTRE_SRC  a lustre-release source tree or tarball (.tar.xz/.tar.gz);
#                  unset: there is no Lustre peer (exit 3, the suites are
#                  skipped).  The CI entry point (.ci/run) sets it to the
#                  tarball its machine keeps beside the checkout.
#
#   testbed/lustre-build.sh [KERNEL_DIR]      (default $O2_CACHE/kernels/debian)
#
# Builds only LNet (libcfs.ko, lnet.ko, ko2iblnd.ko, lnet_selftest.ko: the
# tree's Kbuild is told to leave out lustre/, the file system), the user
# libraries lctl and lnetctl link (lib/, lnet/utils/lnetconfig,
# lustre/utils/liblustreapi) and the three tools; ~3.5 min cold on two
# cores (configure's kernel probes are half of it).  The result is cached in
# $O2_CACHE/lustre/<key>, key = the source's identity (tarball sha256, or a
# git tree's HEAD and status, or the tree's file list with sizes and
# mtimes), the kernel release and its headers' package version, the
# compiler and this script; the last line printed is that folder:
#
#   ko/{libcfs,lnet,ko2iblnd,lnet_selftest}.ko
#   bin/{lctl,lnetctl,lst}   wrappers that set LD_LIBRARY_PATH to lib/
#   lib/                     liblnetconfig.so.*, liblustreapi.so.*
#   version                  e.g. "2.17.57 (lustre-release c881f8ebcb)"
#   release                  the kernel release the modules are for
#
# Exit 0 with the folder; exit 3 with one line "no Lustre source: ..." when
# there is no source (the interop suite is then skipped with that reason);
# any other failure exits 1 with the log's tail.
set -euo pipefail

TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
O2_CACHE="${O2_CACHE:-/var/cache/o2lnd}"
KDIR=$(readlink -f "${1:-$O2_CACHE/kernels/debian}")
T0=$SECONDS
say() { echo "[lustre-build $((SECONDS - T0))s] $*" >&2; }
die() { say "error: $*"; exit 1; }

# ---------------------------------------------------------------- the source
SRC="${O2_LUSTRE_SRC:-}"
if [[ -z "$SRC" ]]; then
	echo "no Lustre source: O2_LUSTRE_SRC is not set"
	exit 3
fi
[[ -e "$SRC" ]] || { echo "no Lustre source: O2_LUSTRE_SRC=$SRC does not exist"; exit 3; }
SRC=$(readlink -f "$SRC")

[[ -f "$KDIR/release" ]] || die "no kernel at $KDIR (run testbed/setup.sh)"
REL=$(cat "$KDIR/release")
HDRS_ARCH="/usr/src/linux-headers-$REL"
[[ -d "$HDRS_ARCH" ]] || die "no headers at $HDRS_ARCH (run testbed/setup.sh)"
# Debian splits the headers: <release> (arch, the build's obj tree) and
# <release minus the flavour>-common (the sources).
HDRS_COMMON=$(readlink -f "$HDRS_ARCH/source" 2>/dev/null || true)
if [[ ! -d "$HDRS_COMMON/include" ]]; then
	HDRS_COMMON="/usr/src/linux-headers-${REL%-*}-common"
fi
[[ -d "$HDRS_COMMON/include" ]] || die "no common headers for $REL ($HDRS_COMMON)"

# The packages the build needs (Lustre's README for Debian 12).
PKGS=(autoconf automake libtool flex bison pkg-config bc libyaml-dev libnl-genl-3-dev
	libkeyutils-dev libmount-dev libelf-dev libjson-c-dev libselinux1-dev libssl-dev
	libreadline-dev zlib1g-dev libibverbs-dev librdmacm-dev make gcc)
# shellcheck source=scripts/o2-apt.sh
. "$TOP/scripts/o2-apt.sh"
miss=$(o2_pkgs_missing "${PKGS[@]}")
if [[ -n "$miss" ]]; then
	say "apt-get install $(echo $miss) (log $O2_APT_LOG)"
	o2_apt_install $miss || die "apt-get install failed: $(echo $miss)"
fi

# ---------------------------------------------------------------- cache key
src_id() {
	if [[ -f "$SRC" ]]; then
		sha256sum "$SRC" | cut -d' ' -f1
	elif [[ -d "$SRC/.git" ]] && git -C "$SRC" rev-parse HEAD > /dev/null 2>&1; then
		{ git -C "$SRC" rev-parse HEAD; git -C "$SRC" status --porcelain; git -C "$SRC" diff; } | sha256sum | cut -d' ' -f1
	else
		(cd "$SRC" && find . -type f -printf '%P %s %T@\n' | LC_ALL=C sort) | sha256sum | cut -d' ' -f1
	fi
}
hdr_ver=$(dpkg-query -W -f='${Version}' "linux-headers-$REL" 2>/dev/null || echo unknown)
key=$({
	echo "src $(src_id)"
	echo "kernel $REL $hdr_ver"
	gcc --version | head -1
	sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1
} | sha256sum | cut -c1-16)
OUT="$O2_CACHE/lustre/$REL-$key"
if [[ -f "$OUT/.complete" ]]; then
	say "cache hit: $OUT ($(cat "$OUT/version"))"
	echo "$OUT"
	exit 0
fi

mkdir -p "$O2_CACHE/lustre"
exec 9> "$O2_CACHE/lustre/.build.lock"
flock -w 1200 9 || die "timed out waiting for $O2_CACHE/lustre/.build.lock"
if [[ -f "$OUT/.complete" ]]; then  # built by another run meanwhile
	echo "$OUT"
	exit 0
fi

tmp=$(mktemp -d /var/tmp/o2-lustre-build.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
LOG="$tmp/build.log"
step() {  # step NAME CMD...: runs CMD in the tree, output to the log
	local name=$1 t=$SECONDS
	shift
	say "$name"
	echo "=== $name: $*" >> "$LOG"
	if ! (cd "$tmp/src" && "$@") >> "$LOG" 2>&1; then
		tail -25 "$LOG" >&2
		cp "$LOG" "$O2_CACHE/lustre/last-failed-build.log"
		die "$name failed (log $O2_CACHE/lustre/last-failed-build.log)"
	fi
	say "$name: done in $((SECONDS - t)) s"
}

say "source $SRC, kernel $REL (headers $hdr_ver): building into $OUT"
mkdir -p "$tmp/src"
if [[ -f "$SRC" ]]; then
	tar -C "$tmp/src" --strip-components=1 -xf "$SRC" || die "cannot unpack $SRC"
else
	cp -a "$SRC/." "$tmp/src/"
fi
[[ -f "$tmp/src/lnet/klnds/o2iblnd/o2iblnd.c" ]] ||
	die "$SRC is not a lustre-release tree (no lnet/klnds/o2iblnd/o2iblnd.c)"
JOBS=$(nproc)
[[ -x "$tmp/src/configure" ]] || step "autogen" sh autogen.sh
step "configure (client only, in-kernel o2ib; its kernel probes take ~1.5 min)" \
	./configure --disable-server --enable-client \
	--with-linux="$HDRS_COMMON" --with-linux-obj="$HDRS_ARCH" \
	--with-o2ib=yes --disable-tests --disable-gss --disable-doc \
	--without-zfs --without-ldiskfs
# LNet only: the file system (lustre/) is not needed by a peer.
grep -q '^obj-m += lustre/$' "$tmp/src/Kbuild" || die "unexpected top-level Kbuild in $SRC (no 'obj-m += lustre/')"
sed -i 's|^obj-m += lustre/$|# lustre/: not built (an LNet peer only)|' "$tmp/src/Kbuild"
step "modules (libcfs, lnet, ko2iblnd, lnet_selftest)" make -j"$JOBS" modules
step "user libraries" make -j"$JOBS" -C lib
step "lnetctl, lst" make -j"$JOBS" -C lnet/utils
step "lctl" make -j"$JOBS" -C lustre/utils lctl

stage="$tmp/out"
mkdir -p "$stage/ko" "$stage/bin/.real" "$stage/lib"
for m in lnet/libcfs/libcfs.ko lnet/lnet/lnet.ko lnet/klnds/in-kernel-o2iblnd/ko2iblnd.ko \
	lnet/selftest/lnet_selftest.ko; do
	[[ -f "$tmp/src/$m" ]] || die "the build made no $m"
	vm=$(modinfo -F vermagic "$tmp/src/$m")
	[[ "$vm" == "$REL "* ]] || die "$m has vermagic '$vm', not $REL"
	cp "$tmp/src/$m" "$stage/ko/"
done
cp -a "$tmp/src"/lnet/utils/lnetconfig/.libs/liblnetconfig.so* "$stage/lib/"
cp -a "$tmp/src"/lustre/utils/.libs/liblustreapi.so* "$stage/lib/"
for t in lnet/utils/.libs/lnetctl lnet/utils/.libs/lst lustre/utils/.libs/lctl; do
	[[ -x "$tmp/src/$t" ]] || die "the build made no $t"
	b=$(basename "$t")
	cp "$tmp/src/$t" "$stage/bin/.real/$b"
	cat > "$stage/bin/$b" <<-EOF
	#!/bin/sh
	# $b of the Lustre peer (testbed/lustre-build.sh), with its libraries
	d=\$(dirname "\$(readlink -f "\$0")")
	LD_LIBRARY_PATH="\$d/../lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$d/.real/$b" "\$@"
	EOF
	chmod +x "$stage/bin/$b"
done
# every library a tool needs must resolve
if LD_LIBRARY_PATH="$stage/lib" ldd "$stage"/bin/.real/* | grep -q 'not found'; then
	LD_LIBRARY_PATH="$stage/lib" ldd "$stage"/bin/.real/* | grep 'not found' >&2
	die "a tool of the Lustre peer misses a library"
fi
ver=$(sed -n 's/^#define LUSTRE_VERSION_STRING "\(.*\)"$/\1/p' "$tmp/src/config.h" | head -1)
[[ -n "$ver" ]] || ver=$(sed -n 's/^#define VERSION "\(.*\)"$/\1/p' "$tmp/src/config.h" | head -1)
echo "${ver:-unknown} ($(basename "$SRC"))" > "$stage/version"
echo "$REL" > "$stage/release"
cp "$LOG" "$stage/build.log"
rm -rf "$OUT"
mv "$stage" "$OUT"
touch "$OUT/.complete"
say "done: $OUT ($(cat "$OUT/version"))"
echo "$OUT"
