#!/bin/bash
# mkinitramfs.sh KERNEL_DIR: build KERNEL_DIR/initramfs.cpio.gz, a busybox
# initramfs that mounts the host root (9p, read-only) under a tmpfs overlay
# (a private tmpfs on /tmp, the host folders named by o2.hosttmp= bound over
# it at their own path) and switch_roots into it, then runs the guest init
# script named by o2.init= on the kernel command line (from the shared
# root, so editing it needs no rebuild).  Kernel modules needed before the switch are copied in from
# KERNEL_DIR/lib/modules/<release> (or root/lib/modules/<release>); a kernel with those built in needs none.
set -euo pipefail
KDIR=$(cd "$1" && pwd)
REL=$(cat "$KDIR/release")
MODS="$KDIR/lib/modules/$REL"
[[ -d $MODS ]] || MODS="$KDIR/root/lib/modules/$REL"  # kernel/build.sh layout
BB=/bin/busybox
[[ -x $BB ]] || BB=/usr/bin/busybox
file -L "$BB" | grep -q 'statically linked' || { echo "mkinitramfs: $BB is not static (install busybox-static)" >&2; exit 1; }

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W"/{bin,dev,proc,sys,mods,newroot,ro,rw}
cp "$BB" "$W/bin/busybox"
: > "$W/mods/order"
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
	netfs fscache 9pnet 9pnet_virtio 9p overlay; do
	p=$(grep -E "(^|/)$m\.ko(\.[a-z]+)?:" "$MODS/modules.dep" 2>/dev/null | head -1 | cut -d: -f1 || true)
	[[ -n "$p" ]] || continue # built in (or absent)
	f=$(basename "$p")
	case "$f" in
	*.ko.xz) xz -dc "$MODS/$p" > "$W/mods/$m.ko" ;;
	*.ko.zst) zstd -qdc "$MODS/$p" > "$W/mods/$m.ko" ;;
	*.ko.gz) gzip -dc "$MODS/$p" > "$W/mods/$m.ko" ;;
	*) cp "$MODS/$p" "$W/mods/$m.ko" ;;
	esac
	echo "$m" >> "$W/mods/order"
done

cat > "$W/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
log() { echo "o2-initramfs: $*" > /dev/kmsg; }
fail() { log "FATAL: $*"; echo "o2-initramfs: FATAL: $*"; sleep 1; echo o > /proc/sysrq-trigger; poweroff -f; }
for m in $(cat /mods/order); do insmod /mods/$m.ko || log "insmod $m failed"; done
O2_INIT=
O2_MODDIR=
O2_LIVE=
O2_HOSTTMP=
for a in $(cat /proc/cmdline); do
	case "$a" in
	o2.init=*) O2_INIT=${a#o2.init=} ;;
	o2.moddir=*) O2_MODDIR=${a#o2.moddir=} ;;
	o2.live=*) O2_LIVE=${a#o2.live=} ;;
	o2.hosttmp=*) O2_HOSTTMP=${a#o2.hosttmp=} ;;
	esac
done
[ -n "$O2_INIT" ] || fail "no o2.init= on the kernel command line"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /ro || fail "mount hostroot"
mount -t tmpfs -o mode=755 tmpfs /rw || fail "tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/ro,upperdir=/rw/upper,workdir=/rw/work overlay /newroot || fail "overlay"
R=/newroot
REL=$(uname -r)
if [ -n "$O2_MODDIR" ]; then
	mkdir -p $R/usr/lib/modules/$REL
	[ -e $R/lib ] || ln -s usr/lib $R/lib
	mount --bind $R$O2_MODDIR $R/usr/lib/modules/$REL || log "bind modules failed"
fi
mkdir -p $R/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out $R/out || log "mount /out failed"
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs tmpfs $R/dev/shm
mount -t tmpfs -o mode=755 tmpfs $R/run
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
# The guest's /tmp is its own; the host folders under /tmp it needs at their
# own path (o2.hosttmp=/tmp/A,/tmp/B: a cache, checkout, build or results
# folder made by mktemp -d) are bound over it, read-only from the host root.
for p in $(echo "$O2_HOSTTMP" | tr , ' '); do
	case "$p" in /tmp/*/* | */..* | /tmp/) continue ;; /tmp/*) ;; *) continue ;; esac
	if [ -d "/ro$p" ]; then mkdir -p "$R$p"; elif [ -e "/ro$p" ]; then touch "$R$p"; else continue; fi
	mount --bind "/ro$p" "$R$p" || log "bind host $p failed"
done
# The project folder (tag "live") without caching, so files rebuilt on the
# host are seen at once by a running guest.  Mounted after the guest's own
# /tmp and /run (and the host's folders bound over /tmp): a checkout under
# /tmp (CI clones anywhere) stays visible.
if [ -n "$O2_LIVE" ]; then
	mkdir -p $R$O2_LIVE
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=mmap live $R$O2_LIVE || log "mount live $O2_LIVE failed"
fi
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
umount /proc /sys /dev 2>/dev/null
[ -e $R$O2_INIT ] || fail "no guest init script $O2_INIT"
exec switch_root $R /bin/bash $O2_INIT
INIT
chmod +x "$W/init"
( cd "$W" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$KDIR/initramfs.cpio.gz.tmp.$$"
mv "$KDIR/initramfs.cpio.gz.tmp.$$" "$KDIR/initramfs.cpio.gz"
