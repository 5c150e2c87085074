#!/bin/bash
# Soft-iWARP for a Debian guest kernel.  Debian's 6.1 and 6.12 kernels are
# built without it (CONFIG_RDMA_SIW is not set; our test and debug kernels
# have it), so this builds siw.ko from Debian's own linux-source-<series>
# (6.1 or 6.12: the same source as that kernel, its very version when the
# archive still has it) against the guest's headers (unpacked into
# $O2_CACHE/kernels by setup: o2_linux_headers) and installs it into
# the test bed's copy of the kernel, $O2_CACHE/kernels/<name>/lib/modules/
# <release>/updates/siw.ko + depmod, which guests bind over their module
# tree: `modprobe siw` (guest-init.sh, o2.siw=) then works in the guest.
#
#   testbed/siw-module.sh [KERNEL_DIR]     (default $O2_CACHE/kernels/debian)
#
# Idempotent (cached by kernel release and linux-source version); prints
# the installed siw.ko on its last line.  Takes linux-source-<series> from the
# cache (scripts/o2-apt.sh downloads it once per version); reuses the tree
# kernel/build.sh unpacked ($O2_CACHE/kernels/src-<version>) when there is
# one, else extracts only drivers/infiniband/sw/siw from the tarball.
set -euo pipefail

O2_CACHE="${O2_CACHE:-/var/cache/o2lnd}"
KDIR=$(readlink -f "${1:-$O2_CACHE/kernels/debian}")
say() { echo "[siw-module] $*" >&2; }
die() { say "error: $*"; exit 1; }

[[ -f "$KDIR/release" ]] || die "no kernel at $KDIR (run testbed/setup.sh)"
REL=$(cat "$KDIR/release")
MODDIR="$KDIR/lib/modules/$REL"
[[ -d "$MODDIR/kernel/drivers/infiniband/core" ]] || die "$MODDIR has no RDMA core modules"

# In-tree siw (our own kernels): nothing to do.
intree=$(find "$MODDIR/kernel/drivers/infiniband/sw" -name 'siw.ko*' -print -quit 2>/dev/null || true)
if [[ -n "$intree" ]]; then
	echo "$intree"
	exit 0
fi

# One builder at a time (make check runs may overlap on this machine).
exec 9> "$O2_CACHE/kernels/.siw-module.lock"
flock -w 600 9 || die "timed out waiting for $O2_CACHE/kernels/.siw-module.lock"

# shellcheck source=scripts/o2-apt.sh
. "$(dirname "$0")/../scripts/o2-apt.sh"
# the series of the release: 6.1.0-57-amd64 -> 6.1, 6.12.117+deb12-amd64 -> 6.12
series=$(sed -n 's/^\([0-9]*\.[0-9]*\)[.-].*/\1/p' <<<"$REL")
[[ -n "$series" ]] || die "cannot tell the kernel series of $REL"
kver=$(basename "$KDIR")      # <name>-<package version>
kpkgver=${kver#*-}
srcinfo=$(o2_linux_source "$series" "$kpkgver" 2>/dev/null) || srcinfo=$(o2_linux_source "$series") ||
	die "cannot get linux-source-$series"
read -r src_ver src_tar <<<"$srcinfo"
dest="$MODDIR/updates/siw.ko"
stamp="$MODDIR/updates/siw.source"
if [[ -f "$dest" && "$(cat "$stamp" 2>/dev/null)" == "linux-source-$series $src_ver" ]]; then
	echo "$dest"
	exit 0
fi
[[ "$kpkgver" == "$src_ver" ]] ||
	say "warning: kernel $kver, linux-source-$series $src_ver: building siw from that source anyway"

tmp=$(mktemp -d /var/tmp/o2-siw-build.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tree="$O2_CACHE/kernels/src-$src_ver"
if [[ -d "$tree/drivers/infiniband/sw/siw" ]]; then
	cp "$tree"/drivers/infiniband/sw/siw/* "$tmp/"
else
	say "extracting drivers/infiniband/sw/siw from $src_tar"
	tar -C "$tmp" --strip-components=5 -xJf "$src_tar" \
		--wildcards '*/drivers/infiniband/sw/siw/*'
fi
[[ -f "$tmp/siw_main.c" ]] || die "no siw sources in linux-source-$series $src_ver"
# the guest's headers, as setup unpacked them into the cache
HDRS=$(o2_linux_headers "$REL") || die "no headers for $REL (run testbed/setup.sh)"
say "building siw.ko for $REL (linux-source-$series $src_ver)"
make -C "$HDRS" M="$tmp" CONFIG_RDMA_SIW=m modules > "$tmp/build.log" 2>&1 ||
	{ tail -20 "$tmp/build.log" >&2; die "building siw.ko failed"; }
vermagic=$(modinfo -F vermagic "$tmp/siw.ko")
[[ "$vermagic" == "$REL "* ]] || die "siw.ko has vermagic '$vermagic', not $REL"
mkdir -p "$MODDIR/updates"
cp "$tmp/siw.ko" "$dest.tmp.$$"
mv "$dest.tmp.$$" "$dest"
depmod -b "$KDIR" "$REL"
echo "linux-source-$series $src_ver" > "$stamp"
say "installed $dest (depmod done; guests: modprobe siw)"
echo "$dest"
