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
# Known to build 2.15.8, 2.16.1 and master 2.17.57 (c881f8ebcb).  The
# layout is read from the tree (which files exist), never from its version:
#   libcfs      lnet/libcfs/ (2.17: its user library in lib/libcfs/)
#               or libcfs/libcfs/ (2.15, 2.16: libcfs.la built beside it)
#   ko2iblnd    lnet/klnds/in-kernel-o2iblnd/ (2.16, 2.17)
#               or lnet/klnds/o2iblnd/ (2.15); 2.16 names it
#               in-kernel-ko2iblnd.ko (module in_kernel_ko2iblnd) and
#               installs it as ko2iblnd.ko, as ko/ here does
#   LNet only   the top-level module list names lustre/ on a line of its
#               own: in Kbuild (2.17) or in the Makefile configure makes
#               from Makefile.in (2.15, 2.16: "obj-m += lustre/" after
#               "obj-m += <ldiskfs>/ libcfs/ lnet/"); that line is commented
#               out, and a .ko under lustre/ afterwards is an error.  A tree
#               with neither builds the whole client (a warning says so).
# Builds only LNet (libcfs.ko, lnet.ko, ko2iblnd.ko, lnet_selftest.ko), the
# user libraries lctl and lnetctl link (libcfs's static one,
# lnet/utils/lnetconfig, lustre/utils/liblustreapi) and the three tools.
# The tools are built with configure's CFLAGS minus -Werror: 2.15's
# lnet/utils do not build under gcc 12's -Werror=format-truncation.
# Cold, on two cores (Debian 12, gcc 12, 6.1 headers), measured beside a
# running make check (load 7-9): CPU time (user+sys, what the load does
# not change) 2.15.8 6.2 min, 2.16.1 7.1 min, 2.17.57 5.2 min; wall
# 2.15.8 9 to 19 min, 2.16.1 20 min, 2.17.57 15.5 min, configure's kernel
# probes 40-60% of it (an earlier measurement of 2.17.57 on an idle
# machine: ~3.5 min).
# The result is cached in
# $O2_CACHE/lustre/<release>-<key>, key = the source's identity (tarball
# sha256, or a git tree's HEAD and status, or the tree's file list with
# sizes and mtimes), the kernel release and its headers' package version
# (of the copy unpacked into $O2_CACHE/kernels, scripts/o2-apt.sh), the
# compiler and this script's code (not its comment lines); the last line
# printed is that folder:
#
#   ko/{libcfs,lnet,ko2iblnd,lnet_selftest}.ko
#   bin/{lctl,lnetctl,lst}   wrappers that set LD_LIBRARY_PATH to lib/
#   lib/                     liblnetconfig.so.*, liblustreapi.so.*
#   version                  e.g. "2.15.8 (lustre-release-2.15.8.tar.xz)"
#   series                   major.minor of that version: 2.15, 2.16, 2.17
#   release                  the kernel release the modules are for
#   sdk/                     what an out-of-tree LND builds against: the
#                            tree's config.h, include folders and
#                            Module.symvers, lustre.mk (its Kbuild flags);
#                            check/: Lustre's own LND built out of tree
#                            against sdk/ alone (loaded by an Interop test)
#
# One build per key at a time (flock on <folder>.lock); builds of other
# keys (another tree, another kernel) do not wait for it.
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
die() {
	say "error: $*"
	# the build's log, when there is one, outlives the temporary tree
	if [[ -n "${LOG:-}" && -f "$LOG" ]]; then
		cp "$LOG" "$O2_CACHE/lustre/last-failed-build.log" && say "log: $O2_CACHE/lustre/last-failed-build.log"
	fi
	exit 1
}

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
# shellcheck source=scripts/o2-apt.sh
. "$TOP/scripts/o2-apt.sh"
# The headers setup unpacked into the cache (never installed packages)
HDRS_ARCH=$(o2_linux_headers "$REL") || die "no headers for $REL (run testbed/setup.sh)"
[[ -d "$HDRS_ARCH" ]] || die "no headers at $HDRS_ARCH (run testbed/setup.sh)"
# Debian splits the headers: <release> (arch, the build's obj tree) and
# <release minus the flavour>-common (the sources), unpacked side by side.
HDRS_COMMON="$(dirname "$HDRS_ARCH")/linux-headers-${REL%-*}-common"
[[ -d "$HDRS_COMMON/include" ]] || die "no common headers for $REL ($HDRS_COMMON)"

# The packages the build needs (Lustre's README for Debian 12).
PKGS=(autoconf automake libtool flex bison pkg-config bc libyaml-dev libnl-genl-3-dev
	libkeyutils-dev libmount-dev libelf-dev libjson-c-dev libselinux1-dev libssl-dev
	libreadline-dev zlib1g-dev libibverbs-dev librdmacm-dev make gcc)
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
# the headers' package version, as o2_linux_headers recorded it
hdr_ver=$(awk -v p="linux-headers-$REL" '$1 == p {print $2}' "${HDRS_ARCH%/usr/src/*}/versions" 2>/dev/null)
hdr_ver=${hdr_ver:-unknown}
key=$({
	echo "src $(src_id)"
	echo "kernel $REL $hdr_ver"
	gcc --version | head -1
	grep -v '^#' "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1  # not its comments
} | sha256sum | cut -c1-16)
OUT="$O2_CACHE/lustre/$REL-$key"
if [[ -f "$OUT/.complete" ]]; then
	say "cache hit: $OUT ($(cat "$OUT/version"))"
	echo "$OUT"
	exit 0
fi

mkdir -p "$O2_CACHE/lustre"
# one lock per cache entry: a build of the same key waits (a cold build
# takes 4-20 min, by the load), a build of another tree or kernel goes ahead
exec 9> "$OUT.lock"
flock -w 1800 9 || die "timed out waiting for $OUT.lock"
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
		die "$name failed"
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

# The tree's layout, from what exists in it.
if [[ -d "$tmp/src/lnet/libcfs" ]]; then  # 2.17
	libcfs_ko=lnet/libcfs/libcfs.ko
	libcfs_user=(make -j"$(nproc)" -C lib)
elif [[ -d "$tmp/src/libcfs/libcfs" ]]; then  # 2.15, 2.16
	libcfs_ko=libcfs/libcfs/libcfs.ko
	libcfs_user=(make -j"$(nproc)" -C libcfs/libcfs libcfs.la)
else
	die "$SRC has neither lnet/libcfs/ nor libcfs/libcfs/"
fi
if [[ -d "$tmp/src/lnet/klnds/in-kernel-o2iblnd" ]]; then  # 2.16, 2.17
	o2ib_dir=lnet/klnds/in-kernel-o2iblnd
else  # 2.15
	o2ib_dir=lnet/klnds/o2iblnd
fi
say "layout: $libcfs_ko, $o2ib_dir/"

JOBS=$(nproc)
[[ -x "$tmp/src/configure" ]] || step "autogen" sh autogen.sh
step "configure (client only, in-kernel o2ib; its kernel probes take ~1.5 min)" \
	./configure --disable-server --enable-client \
	--with-linux="$HDRS_COMMON" --with-linux-obj="$HDRS_ARCH" \
	--with-o2ib=yes --disable-tests --disable-gss --disable-doc \
	--without-zfs --without-ldiskfs
# LNet only: the file system (lustre/) is not needed by a peer.  The top
# module list is Kbuild (2.17) or the Makefile configure made (2.15, 2.16).
lnet_only=0
for f in Kbuild Makefile; do
	if [[ -f "$tmp/src/$f" ]] && grep -q '^obj-m += lustre/$' "$tmp/src/$f"; then
		sed -i 's|^obj-m += lustre/$|# lustre/: not built (an LNet peer only)|' "$tmp/src/$f"
		say "LNet only: lustre/ left out of the top-level $f"
		lnet_only=1
		break
	fi
done
[[ $lnet_only == 1 ]] ||
	say "warning: no top-level 'obj-m += lustre/' line (Kbuild or Makefile): building every module of the client"
step "modules (libcfs, lnet, ko2iblnd, lnet_selftest)" make -j"$JOBS" modules
if [[ $lnet_only == 1 ]] && (cd "$tmp/src" && find lustre -name '*.ko' | grep -q .); then
	die "lustre/ was built although the top-level module list left it out"
fi
# ko2iblnd.ko (2.15, 2.17), or in-kernel-ko2iblnd.ko (2.16: its module
# name is in_kernel_ko2iblnd; 2.16's make install links it as ko2iblnd.ko,
# and so is it copied below)
o2ib_ko=
for m in "$o2ib_dir/ko2iblnd.ko" "$o2ib_dir/in-kernel-ko2iblnd.ko"; do
	[[ -f "$tmp/src/$m" ]] && { o2ib_ko=$m; break; }
done
[[ -n "$o2ib_ko" ]] || die "the build made no ko2iblnd.ko nor in-kernel-ko2iblnd.ko in $o2ib_dir/"
# The tools with configure's CFLAGS minus -Werror (2.15's lnet/utils fail
# with gcc 12's -Werror=format-truncation); given on make's command line,
# they reach the sub-makes and leave the modules' flags alone.
tool_cflags=$(sed -n "s/^CFLAGS='\(.*\)'\$/\1/p" "$tmp/src/config.log" | tail -1)
tool_cflags=$(sed -E 's/(^| )-Werror( |$)/ /g; s/  +/ /g; s/^ //; s/ $//' <<<"${tool_cflags:--g -O2 -Wall}")
say "tools' CFLAGS: $tool_cflags"
step "user libraries" "${libcfs_user[@]}" CFLAGS="$tool_cflags"
step "lnetctl, lst" make -j"$JOBS" -C lnet/utils CFLAGS="$tool_cflags"
step "lctl" make -j"$JOBS" -C lustre/utils CFLAGS="$tool_cflags" lctl

stage="$tmp/out"
mkdir -p "$stage/ko" "$stage/bin/.real" "$stage/lib"
for m in "$libcfs_ko" lnet/lnet/lnet.ko "$o2ib_ko" lnet/selftest/lnet_selftest.ko; do
	[[ -f "$tmp/src/$m" ]] || die "the build made no $m"
	vm=$(modinfo -F vermagic "$tmp/src/$m")
	[[ "$vm" == "$REL "* ]] || die "$m has vermagic '$vm', not $REL"
	b=$(basename "$m")
	[[ "$b" == in-kernel-ko2iblnd.ko ]] && b=ko2iblnd.ko
	cp "$tmp/src/$m" "$stage/ko/$b"
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
# ---------------------------------------------------------------- sdk/
# What an out-of-tree LND needs to build against this build (o2lnd under
# Lustre's own LNet): the flags Lustre compiled its own LND with that name
# files of the tree (-I DIR, -include FILE: config.h, undef.h, the include
# folders; read from kbuild's record of the o2iblnd.o command), those files
# under sdk/ at the same relative paths, and the build's Module.symvers.
# sdk/lustre.mk sets them for a Kbuild file (LUSTRE_SDK: that folder).
# The proof: Lustre's own LND sources built out of tree against sdk/ alone
# (sdk/check/, the same module name), which the Interop suites load in
# place of ko/ko2iblnd.ko.
o2ib_cmd="$tmp/src/$o2ib_dir/.o2iblnd.o.cmd"
[[ -f "$o2ib_cmd" ]] || die "no $o2ib_dir/.o2iblnd.o.cmd: cannot tell how Lustre built its LND"
sdk="$stage/sdk"
mkdir -p "$sdk"
sdk_flags=()
read -ra cmd_words < <(sed -n 's/^\(savedcmd\|cmd\)_[^ ]* := //p' "$o2ib_cmd" | head -1)
for ((i = 0; i < ${#cmd_words[@]}; i++)); do
	w=${cmd_words[i]}
	path= flag=
	if [[ "$w" == -I"$tmp/src"/* ]]; then
		path=${w#-I} flag=-I
	elif [[ "$w" == -I && "${cmd_words[i + 1]:-}" == "$tmp/src"/* ]]; then
		path=${cmd_words[i + 1]} flag=-I
		i=$((i + 1))
	elif [[ "$w" == -include && "${cmd_words[i + 1]:-}" == "$tmp/src"/* ]]; then
		path=${cmd_words[i + 1]} flag=-include
		i=$((i + 1))
	fi
	[[ -n "$path" && -e "$path" ]] || continue
	rel=${path#"$tmp/src"/}
	rel=${rel%/}
	[[ "$rel" == "$o2ib_dir" ]] && continue  # the LND's own folder
	mkdir -p "$sdk/$(dirname "$rel")"
	if [[ -d "$path" ]]; then  # merged: a folder may hold one copied before
		mkdir -p "$sdk/$rel" && cp -a "$path/." "$sdk/$rel/"
	else
		cp "$path" "$sdk/$rel"
	fi
	sdk_flags+=("$flag\$(LUSTRE_SDK)/$rel")
done
sdk_flags=("${sdk_flags[@]/#-include/-include }")
[[ -f "$sdk/config.h" ]] || die "Lustre's LND was not built with -include config.h ($o2ib_cmd)"
grep -q 'lnet_register_lnd' "$tmp/src/Module.symvers" 2>/dev/null ||
	die "no Module.symvers exporting lnet_register_lnd at the top of the build"
cp "$tmp/src/Module.symvers" "$sdk/Module.symvers"
{
	echo "# Kbuild flags of a module built against the Lustre build in this"
	echo "# folder (testbed/lustre-build.sh): set LUSTRE_SDK to it first."
	echo "ccflags-y += ${sdk_flags[*]}"
	echo 'ccflags-y += $(call cc-option, -Wno-format-truncation)'
	echo 'ccflags-y += $(call cc-option, -Wno-stringop-truncation)'
	echo 'ccflags-y += $(call cc-option, -Wno-stringop-overflow)'
	echo 'KBUILD_EXTRA_SYMBOLS += $(LUSTRE_SDK)/Module.symvers'
} > "$sdk/lustre.mk"
check="$sdk/check"
mkdir -p "$check"
cp "$tmp/src/$o2ib_dir"/*.[ch] "$check/"
rm -f "$check"/*.mod.c  # kbuild's, of the in-tree build
o2ib_mod=$(basename "$o2ib_ko" .ko)
{
	echo "LUSTRE_SDK := $OUT/sdk"
	echo 'include $(LUSTRE_SDK)/lustre.mk'
	echo "obj-m := $o2ib_mod.o"
	echo "$o2ib_mod-objs := $(cd "$check" && ls ./*.c | sed 's|^\./||; s/\.c$/.o/' | paste -sd' ')"
} > "$check/Kbuild"
# (LUSTRE_SDK on make's command line: sdk/ is still in the staging folder)
step "Lustre's LND out of tree against sdk/" make -C "$HDRS_ARCH" M="$check" LUSTRE_SDK="$sdk" modules
[[ -f "$check/$o2ib_mod.ko" ]] || die "the out-of-tree build against sdk/ made no $o2ib_mod.ko"
[[ "$(modinfo -F vermagic "$check/$o2ib_mod.ko")" == "$REL "* ]] || die "sdk/check/$o2ib_mod.ko is not for $REL"
(cd "$check" && rm -f ./*.o ./.*.cmd ./*.mod ./*.mod.c ./modules.order ./Module.symvers)

# every library a tool needs must resolve
if LD_LIBRARY_PATH="$stage/lib" ldd "$stage"/bin/.real/* | grep -q 'not found'; then
	LD_LIBRARY_PATH="$stage/lib" ldd "$stage"/bin/.real/* | grep 'not found' >&2
	die "a tool of the Lustre peer misses a library"
fi
ver=$(sed -n 's/^#define LUSTRE_VERSION_STRING "\(.*\)"$/\1/p' "$tmp/src/config.h" | head -1)
[[ -n "$ver" ]] || ver=$(sed -n 's/^#define VERSION "\(.*\)"$/\1/p' "$tmp/src/config.h" | head -1)
series=$(sed -nE 's/^([0-9]+\.[0-9]+)([._-].*)?$/\1/p' <<<"$ver")
[[ -n "$series" ]] || die "cannot tell the series (major.minor) of version '$ver'"
echo "$ver ($(basename "$SRC"))" > "$stage/version"
echo "$series" > "$stage/series"
echo "$REL" > "$stage/release"
cp "$LOG" "$stage/build.log"
rm -rf "$OUT"
mv "$stage" "$OUT"
touch "$OUT/.complete"
say "done: $OUT ($(cat "$OUT/version"))"
echo "$OUT"
