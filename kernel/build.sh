#!/bin/bash
# Build o2lnd's own guest kernels from Debian's linux-source-6.1 package.
#
#   kernel/build.sh test     KUnit-enabled test kernel   (test.config)
#   kernel/build.sh debug    test kernel + KASAN, lockdep, kmemleak,
#                            debugobjects, list debugging (debug.config)
#
# Prints the path of the finished kernel directory on its last line:
#   DIR/vmlinux          uncompressed ELF (PVH boot with qboot)
#   DIR/bzImage
#   DIR/root/lib/modules/RELEASE/   installed modules (depmod done)
#   DIR/release          the kernel release string
#   DIR/obj              the O= tree for out-of-tree module builds:
#                        make -C DIR/src O=DIR/obj M=... modules
#   DIR/src -> source    the unpacked linux-source tree (kunit.py lives there)
#
# Results are cached under ${O2_CACHE:-/var/cache/o2lnd}/kernels/ keyed by a
# hash of the config fragments, the linux-source-6.1 package version (the
# candidate of apt's lists, downloaded into the cache, never installed) and
# the gcc version.  When no linux-source-6.1 can be had, the newest cached
# kernel built from the same fragments is reused instead (set
# O2_KERNEL_REBUILD=1 to force a build).
set -euo pipefail

flavour=${1:?usage: kernel/build.sh test|debug}
here=$(cd "$(dirname "$0")" && pwd)
cache=${O2_CACHE:-/var/cache/o2lnd}/kernels
mkdir -p "$cache"
t0=$SECONDS
say() { printf '[kernel %s] %s (%ds)\n' "$flavour" "$*" $((SECONDS - t0)) >&2; }

case $flavour in
test) frags=("$here/test.config") ;;
debug) frags=("$here/test.config" "$here/debug.config") ;;
*) echo "kernel/build.sh: unknown flavour '$flavour' (test|debug)" >&2; exit 2 ;;
esac

frag_hash=$(cat "${frags[@]}" "$here/build.sh" | sha256sum | cut -c1-16)
gcc_ver=$(gcc -dumpfullversion)

# shellcheck source=scripts/o2-apt.sh
. "$here/../scripts/o2-apt.sh"
# Build tools are installed packages; the kernel source is a downloaded
# linux-source-6.1 .deb unpacked into the cache (scripts/o2-apt.sh).
o2_apt_install bc bison flex libelf-dev libssl-dev dwarves rsync ccache python3 cpio kmod xz-utils ||
	{ echo "kernel/build.sh: cannot install the kernel build tools" >&2; exit 1; }
if ! srcinfo=$(o2_linux_source 6.1); then
	# No source to be had (an archive that moved on, no lists): reuse the
	# newest kernel built from the same fragments, if any.
	hit=$(ls -1dt "$cache/$flavour-$frag_hash-"*/ 2>/dev/null | while read -r d; do
		[ -f "$d/.done" ] && { echo "${d%/}"; break; }
	done || true)
	[ -n "$hit" ] || { echo "kernel/build.sh: no linux-source-6.1 to build from" >&2; exit 1; }
	say "no linux-source-6.1 to be had; reusing $hit (same fragments)"
	echo "$hit"
	exit 0
fi
read -r src_ver src_tar <<<"$srcinfo"
key=$(printf '%s %s %s' "$frag_hash" "$src_ver" "$gcc_ver" | sha256sum | cut -c1-12)
dir=$cache/$flavour-$frag_hash-$key
if [ -f "$dir/.done" ] && [ -z "${O2_KERNEL_REBUILD:-}" ]; then
	say "cache hit: $dir"
	echo "$dir"
	exit 0
fi

# Unpack the source once per source version, shared by both flavours.
src=$cache/src-$src_ver
if [ ! -f "$src/.unpacked" ]; then
	say "unpacking linux-source $src_ver"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xJf "$src_tar"
	touch "$src.tmp/.unpacked"
	mv "$src.tmp" "$src"
fi

rm -rf "$dir"
mkdir -p "$dir/obj"
ln -sfn "$src" "$dir/src"
say "configuring (allnoconfig + ${frags[*]##*/})"
(cd "$src" && scripts/kconfig/merge_config.sh -n -O "$dir/obj" "${frags[@]}") >"$dir/config.log" 2>&1

# merge_config drops options whose dependencies are unmet: refuse that.
missing=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=n) opt=${line%%=*}; grep -q "^$opt=" "$dir/obj/.config" && { say "config: $opt is set, wanted off"; missing=1; } ;;
	CONFIG_*=*) grep -qx "$line" "$dir/obj/.config" || { say "config: $line did not stick"; missing=1; } ;;
	esac
done < <(cat "${frags[@]}" | grep -v '^#')
[ $missing -eq 0 ] || { echo "kernel/build.sh: config fragment not satisfied, see $dir/config.log" >&2; exit 1; }

cc=gcc
if command -v ccache >/dev/null; then
	export CCACHE_DIR=${O2_CACHE:-/var/cache/o2lnd}/ccache
	cc="ccache gcc"
fi
jobs=$(nproc)
say "building bzImage and modules with -j$jobs (log: $dir/build.log)"
(make -C "$src" O="$dir/obj" CC="$cc" LOCALVERSION="-o2$flavour" -j"$jobs" bzImage modules >"$dir/build.log" 2>&1) &
mk=$!
while kill -0 $mk 2>/dev/null; do
	sleep 30
	kill -0 $mk 2>/dev/null && say "building: $(grep -c '^  CC' "$dir/build.log" || true) objects compiled"
done
if ! wait $mk; then
	tail -30 "$dir/build.log" >&2
	echo "kernel/build.sh: build failed, see $dir/build.log" >&2
	exit 1
fi

say "installing modules"
make -C "$src" O="$dir/obj" LOCALVERSION="-o2$flavour" INSTALL_MOD_PATH="$dir/root" \
	INSTALL_MOD_STRIP=1 modules_install >"$dir/install.log" 2>&1
release=$(cat "$dir/obj/include/config/kernel.release")
echo "$release" >"$dir/release"
cp "$dir/obj/vmlinux" "$dir/vmlinux"
cp "$dir/obj/arch/x86/boot/bzImage" "$dir/bzImage"
rm -f "$dir/root/lib/modules/$release/build" "$dir/root/lib/modules/$release/source"
ln -s "$dir/obj" "$dir/root/lib/modules/$release/build"
# Objects are not needed for out-of-tree module builds; keep the tree small.
find "$dir/obj" -name '*.o' -delete
rm -f "$dir/obj/vmlinux" "$dir/obj/vmlinux.a"
touch "$dir/.done"
say "done: $release in $dir"
echo "$dir"
