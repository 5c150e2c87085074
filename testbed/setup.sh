#!/bin/bash
# o2lnd test bed setup (idempotent).  `make setup` runs it; `make run` and
# `make check` run it first.
#
#  - installs the packages the test bed needs (skips apt when all present;
#    scripts/o2-apt.sh: lock timeouts, installer output to its log)
#  - for each guest kernel it is asked for (O2_SETUP_KERNELS, default
#    "debian", plus $O2_KERNEL when that names one of them):
#      debian     Debian 12's default kernel, 6.1 (linux-image-amd64)
#      debian612  Debian 12's 6.12 kernel (linux-image-6.12-amd64), the
#                 base of RHEL 10
#    discovers the kernel ABI from the meta package, downloads its headers
#    (linux-headers-$ABI-amd64, its -common and linux-kbuild packages) and
#    unpacks them into $O2_CACHE/kernels/headers-<release>-<version>, linked
#    as headers-<release> (scripts/o2-apt.sh: o2_linux_headers; nothing is
#    installed: 6.12's headers package would pull its linux-image onto the
#    host, into /boot), writes the guest kernel release ($ABI-amd64, e.g.
#    6.1.0-57-amd64) to $TOP/.testbed-abi (debian) or
#    $TOP/.testbed-abi-<name>: the Makefile builds the module against those
#    headers (O2_KERNEL=<name> make module picks the other)
#  - downloads linux-image-$ABI-amd64 into $O2_CACHE keyed by package version,
#    unpacks it, runs depmod, extracts the uncompressed ELF vmlinux (PVH boot)
#  - builds the busybox initramfs for that kernel
#  - points $O2_CACHE/kernels/<name> at the result
#
# Env: O2_CACHE (default /var/cache/o2lnd), O2_SETUP_KERNELS, O2_KERNEL.
set -euo pipefail

TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
O2_CACHE="${O2_CACHE:-/var/cache/o2lnd}"
T0=${EPOCHREALTIME/./}
stage() {
	local us=$(( ${EPOCHREALTIME/./} - T0 ))
	printf '[setup %3d.%01ds] %s\n' $((us / 1000000)) $((us / 100000 % 10)) "$*"
}
die() { echo "setup: error: $*" >&2; exit 1; }

# ---------------------------------------------------------------- packages
BASE_PKGS=(qemu-system-x86 qemu-utils busybox-static rdma-core ibverbs-utils rdmacm-utils
	perftest iproute2 kmod cpio libgtest-dev cmake g++ make librdmacm-dev
	libibverbs-dev libcap2-bin python3-yaml python3 xz-utils dkms libyaml-cpp-dev
	clang-format git util-linux gcc-12
	bc bison flex libelf-dev libssl-dev dwarves rsync ccache)  # the last line: kernel/build.sh
# Never linux-headers-* or linux-image-* (see o2_linux_headers): gcc-12 is
# the compiler Debian's headers name (CC=gcc-12), which their packages
# would have brought.

# shellcheck source=scripts/o2-apt.sh
. "$TOP/scripts/o2-apt.sh"
apt_install() {
	local miss
	miss=$(o2_pkgs_missing "$@")
	[[ -z "$miss" ]] && return 0
	stage "apt-get install $(echo $miss) (log $O2_APT_LOG)"
	o2_apt_install $miss || die "apt-get install failed: $(echo $miss)"
}

stage "checking packages"
apt_install "${BASE_PKGS[@]}"

# ---------------------------------------------------------------- kernel ABI
# prepare_kernel NAME META: the kernel the meta package META depends on,
# ready to boot in $O2_CACHE/kernels/NAME, its headers unpacked beside it.
prepare_kernel() {
local NAME=$1 META=$2
local ABI IMGPKG VER KDIR TMP MODROOT REL HVER HDRS
abi_from_cache() {
	apt-cache depends "$META" 2>/dev/null |
		sed -n 's/.*Depends: linux-image-\([0-9][^ ]*\)-amd64$/\1/p' | head -1
}
ABI=$(abi_from_cache)
if [[ -z "$ABI" ]]; then
	o2_apt_update || die "apt-get update failed"
	ABI=$(abi_from_cache)
fi
[[ -n "$ABI" ]] || die "cannot discover the Debian kernel ABI (apt-cache depends $META)"
IMGPKG="linux-image-$ABI-amd64"
VER=$(o2_apt_candidate "$IMGPKG") || die "no candidate version for $IMGPKG"
stage "guest kernel $NAME: ABI $ABI ($IMGPKG $VER)"
echo "$ABI-amd64" > "$TOP/.testbed-abi$([[ $NAME == debian ]] || echo "-$NAME")"

# headers to build the module against: unpacked into the cache, never
# installed (linux-headers-6.12.*-amd64 depends on its linux-image)
HVER=$(o2_apt_candidate "linux-headers-$ABI-amd64") || die "no candidate version for linux-headers-$ABI-amd64"
HDRS=$(o2_linux_headers "$ABI-amd64" "$HVER") || die "cannot unpack linux-headers-$ABI-amd64 $HVER (log $O2_APT_LOG)"
stage "headers: $HDRS"

# ---------------------------------------------------------------- kernel image
KDIR="$O2_CACHE/kernels/$NAME-$VER"
mkdir -p "$O2_CACHE/kernels"
if [[ ! -f "$KDIR/.complete" ]]; then
	stage "preparing $KDIR"
	TMP=$(mktemp -d "$O2_CACHE/kernels/.tmp.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	if ! o2_apt_download "$IMGPKG=$VER" "$TMP" 2>/dev/null; then
		# Stale package lists (o2_apt_download updated them and retried the
		# same version): start over once, since the ABI may have moved.
		[[ -n ${O2_SETUP_RESTARTED:-} ]] && die "apt-get download $IMGPKG=$VER failed (log $O2_APT_LOG)"
		o2_apt_update || die "apt-get update failed"
		rm -rf "$TMP"
		O2_SETUP_RESTARTED=1 exec "$0"
	fi
	stage "downloaded $(ls "$TMP"/*.deb | xargs -n1 basename)"
	mkdir -p "$TMP/root"
	dpkg -x "$TMP"/*.deb "$TMP/root"
	rm -f "$TMP"/*.deb
	MODROOT="$TMP/root"
	# bookworm ships /lib/modules; merged-usr layouts use /usr/lib/modules
	if [[ ! -d "$MODROOT/lib/modules/$ABI-amd64" && -d "$MODROOT/usr/lib/modules/$ABI-amd64" ]]; then
		mkdir -p "$MODROOT/lib" && mv "$MODROOT/usr/lib/modules" "$MODROOT/lib/modules"
	fi
	REL="$ABI-amd64"
	[[ -d "$MODROOT/lib/modules/$REL" ]] || die "no lib/modules/$REL in $IMGPKG"
	stage "depmod"
	depmod -b "$MODROOT" "$REL"
	mkdir -p "$TMP/k/lib"
	mv "$MODROOT/lib/modules" "$TMP/k/lib/modules"
	cp "$MODROOT/boot/vmlinuz-$REL" "$TMP/k/bzImage"
	cp "$MODROOT/boot/config-$REL" "$TMP/k/config" 2>/dev/null || true
	cp "$MODROOT/boot/System.map-$REL" "$TMP/k/System.map" 2>/dev/null || true
	echo "$REL" > "$TMP/k/release"
	stage "extracting ELF vmlinux"
	"$TOP/testbed/extract-vmlinux.sh" "$TMP/k/bzImage" "$TMP/k/vmlinux" \
		|| { echo "setup: no ELF vmlinux; guests will boot the bzImage" >&2; rm -f "$TMP/k/vmlinux"; }
	rm -rf "$KDIR"
	mv "$TMP/k" "$KDIR"
	rm -rf "$TMP"
	trap - EXIT
	touch "$KDIR/.complete"
else
	stage "kernel cache hit: $KDIR"
fi

# ---------------------------------------------------------------- initramfs
# Rebuilt when the builder changed (cheap: ~1 s).
if [[ ! -f "$KDIR/initramfs.cpio.gz" || "$TOP/testbed/mkinitramfs.sh" -nt "$KDIR/initramfs.cpio.gz" ]]; then
	stage "building initramfs"
	"$TOP/testbed/mkinitramfs.sh" "$KDIR"
else
	stage "initramfs cache hit"
fi

ln -sfn "$NAME-$VER" "$O2_CACHE/kernels/$NAME"
stage "done: kernel dir $O2_CACHE/kernels/$NAME -> $NAME-$VER (release $(cat "$KDIR/release"))"
}

KERNELS=(${O2_SETUP_KERNELS:-debian})
[[ " ${KERNELS[*]} " == *" ${O2_KERNEL:-debian} "* ]] || case "${O2_KERNEL:-}" in
	debian|debian612) KERNELS+=("$O2_KERNEL") ;;
esac
for k in "${KERNELS[@]}"; do
	case "$k" in
	debian) prepare_kernel debian linux-image-amd64 ;;
	debian612) prepare_kernel debian612 linux-image-6.12-amd64 ;;
	*) die "unknown guest kernel '$k' (O2_SETUP_KERNELS: debian, debian612)" ;;
	esac
done
