#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds o2lnd_lustre.ko, o2lnd under Lustre's own LNet (module/lustre/),
# against one Lustre build.
#
#   scripts/o2l-build.sh LUSTRE_DIR [OUT [KDIR]]
#
# LUSTRE_DIR: a Lustre build with its sdk/ (testbed/lustre-build.sh keeps
# it: config.h, headers, Module.symvers, lustre.mk, and its kernel release
# in release); KDIR: the headers of the kernel that build is for (default:
# those setup unpacked into the cache for that release); OUT: default
# $O2_CACHE/o2l/<LUSTRE_DIR's name> (one build folder per Lustre build,
# kept: a build again compiles only what changed; a lock serialises two
# builds of one folder).  The sources are copied into OUT (their
# times kept, so a build again recompiles only what changed) with
# module/lustre/o2lnd_lustre.kbuild as its Kbuild.  Prints the module's
# path last.  Exit status: 0, else make's.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
LUSTRE_DIR=$(cd "${1:?usage: o2l-build.sh LUSTRE_DIR [OUT [KDIR]]}" && pwd)
OUT=${2:-${O2_CACHE:-/var/cache/o2lnd}/o2l/$(basename "$LUSTRE_DIR")}
KDIR=${3:-}
sdk=$LUSTRE_DIR/sdk
if [[ -z $KDIR ]]; then
	# shellcheck source=scripts/o2-apt.sh
	. "$top/scripts/o2-apt.sh"
	KDIR=$(o2_linux_headers "$(cat "$LUSTRE_DIR/release")") || {
		echo "o2l-build: no kernel headers for the release of $LUSTRE_DIR (run testbed/setup.sh, or pass KDIR)" >&2
		exit 2
	}
fi
if [[ ! -f $sdk/lustre.mk || ! -f $sdk/Module.symvers ]]; then
	echo "o2l-build: $LUSTRE_DIR has no sdk/ (lustre.mk, Module.symvers): build it with testbed/lustre-build.sh" >&2
	exit 2
fi
mkdir -p "$OUT/scripts"
exec 9> "$OUT.lock"
flock -w 600 9 || { echo "o2l-build: timed out waiting for $OUT.lock" >&2; exit 2; }
# the sources only (no object of a build in the tree), their times kept
tar -C "$top" -cf - --exclude='*.o' --exclude='.*.cmd' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude='*.ko' --exclude='*.a' module include |
	tar -C "$OUT" -xpf -
cp -a "$top/scripts/o2-probe.sh" "$top/scripts/o2l-probe.sh" "$OUT/scripts/"
cmp -s "$top/module/lustre/o2lnd_lustre.kbuild" "$OUT/Kbuild" ||
	cp "$top/module/lustre/o2lnd_lustre.kbuild" "$OUT/Kbuild"
make -C "$KDIR" M="$OUT" LUSTRE_SDK="$sdk" W="${O2_W-1}" -j"$(nproc)" modules >&2
# the glue reaches the transport by its interface only (scripts/o2-layers.py)
python3 "$top/scripts/o2-layers.py" "$OUT" >&2 || { echo "o2l-build: layer check failed" >&2; exit 1; }
echo "$OUT/o2lnd_lustre.ko"
