#!/bin/bash
# o2lnd guest init: PID 1 after the initramfs switch_root (runs from the
# host's root, shared read-only under a tmpfs overlay, so edits apply on the
# next boot without rebuilding the initramfs).
#
# Kernel command line parameters (all optional):
#   o2.name=NAME        hostname
#   o2.agent=PATH       guest agent binary (serves the host on virtio port o2agent)
#   o2.ip=IF:ADDR/LEN[,IF:ADDR/LEN...]   addresses (eth0:192.168.1.1/24)
#   o2.mtu=N            MTU of every ethN (default 9000)
#   o2.veth=1           veth pair veth0 192.168.1.1/24 <-> veth1 192.168.1.2/24,
#                       policy-routed so traffic between them crosses the pair
#   o2.rxe=IF[,IF...]   rdma link add rxeN type rxe netdev IF (N = position)
#   o2.siw=IF[,IF...]   rdma link add siwN type siw netdev IF (Soft-iWARP;
#                       modprobe siw: in-tree in our kernels, built for
#                       Debian's by testbed/siw-module.sh).  rxe and siw
#                       devices may coexist, even on one netdev
#   o2.route=NET:GW[,NET:GW...]  static routes (192.168.2.0/24:192.168.1.254)
#   o2.forward=1        enable IPv4 forwarding (router)
#   o2.modules=M[,M...] extra modules to modprobe
#   o2.rdma=0           skip loading the RDMA stack
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
umask 022

LOG=/out/init.log
: > $LOG 2>/dev/null || LOG=/dev/null
T0=${EPOCHREALTIME/./}
log() {
	local us=$(( ${EPOCHREALTIME/./} - T0 ))
	local l
	l=$(printf 'o2-init [%d.%03d] %s' $((us / 1000000)) $((us / 1000 % 1000)) "$*")
	echo "$l" >> $LOG
	echo "$l" > /dev/kmsg
}
run() { # run a setup command; log failures
	local out
	if ! out=$("$@" 2>&1); then
		log "FAILED: $* : $out"
		return 1
	fi
}

NAME=guest AGENT='' IPS='' MTU=9000 VETH=0 RXE='' SIW='' ROUTES='' FORWARD=0 MODULES='' RDMA=1
read -ra CMDLINE < /proc/cmdline
for a in "${CMDLINE[@]}"; do
	case "$a" in
	o2.name=*) NAME=${a#*=} ;;
	o2.agent=*) AGENT=${a#*=} ;;
	o2.ip=*) IPS=${a#*=} ;;
	o2.mtu=*) MTU=${a#*=} ;;
	o2.veth=*) VETH=${a#*=} ;;
	o2.rxe=*) RXE=${a#*=} ;;
	o2.siw=*) SIW=${a#*=} ;;
	o2.route=*) ROUTES=${a#*=} ;;
	o2.forward=*) FORWARD=${a#*=} ;;
	o2.modules=*) MODULES=${a#*=} ;;
	o2.rdma=*) RDMA=${a#*=} ;;
	esac
done
log "start: $NAME kernel $(uname -r)"
hostname "$NAME"
echo "$NAME" > /etc/hostname 2>/dev/null
echo /usr/sbin/modprobe > /proc/sys/kernel/modprobe
ln -sf /proc/self/mounts /etc/mtab 2>/dev/null
ip link set lo up

run modprobe virtio_console
if ls /sys/bus/virtio/drivers/virtio_net >/dev/null 2>&1 || grep -q 1af4 /sys/bus/pci/devices/*/vendor 2>/dev/null; then
	run modprobe virtio_net
fi
if [[ $RDMA == 1 ]]; then
	for m in ib_core ib_uverbs rdma_cm rdma_ucm rdma_rxe; do run modprobe $m; done
fi
if [[ $RDMA == 1 && -n $SIW ]]; then
	run modprobe siw
fi
for m in ${MODULES//,/ }; do run modprobe "$m"; done
log "modules loaded"

for dev in /sys/class/net/eth*; do
	[[ -e $dev ]] || continue
	i=$(basename "$dev")
	run ip link set "$i" mtu "$MTU"
	run ip link set "$i" up
done
for s in ${IPS//,/ }; do
	run ip addr add "${s#*:}" dev "${s%%:*}"
done
for r in ${ROUTES//,/ }; do
	run ip route add "${r%%:*}" via "${r#*:}"
done
if [[ $FORWARD == 1 ]]; then
	echo 1 > /proc/sys/net/ipv4/ip_forward
fi
for k in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 > "$k"; done

if [[ $VETH == 1 ]]; then
	run modprobe veth
	run ip link add veth0 mtu 9000 type veth peer name veth1 mtu 9000
	run ip addr add 192.168.1.1/24 dev veth0
	run ip addr add 192.168.1.2/24 dev veth1
	for i in all default veth0 veth1; do
		echo 1 > /proc/sys/net/ipv4/conf/$i/accept_local
		echo 0 > /proc/sys/net/ipv4/conf/$i/rp_filter
	done
	run ip link set veth0 up
	run ip link set veth1 up
	# Locally generated traffic to the other end leaves through this end.
	run ip route add 192.168.1.2/32 dev veth0 src 192.168.1.1 table 100
	run ip route add 192.168.1.1/32 dev veth1 src 192.168.1.2 table 100
	run ip rule add pref 100 iif lo lookup 100
	run ip rule add pref 200 lookup local
	run ip rule del pref 0 lookup local
	log "veth pair up (policy routing table 100)"
fi

n=0
for i in ${RXE//,/ }; do
	run rdma link add rxe$n type rxe netdev "$i" && log "rxe$n on $i"
	n=$((n + 1))
done
n=0
for i in ${SIW//,/ }; do
	run rdma link add siw$n type siw netdev "$i" && log "siw$n on $i"
	n=$((n + 1))
done

log "network: $(ip -o -4 addr show | awk '{print $2"="$4}' | tr '\n' ' ')"
if [[ -n $AGENT && -x $AGENT ]]; then
	log "ready: exec agent $AGENT"
	exec "$AGENT"
fi
log "FATAL: no agent (o2.agent=$AGENT); sleeping"
while :; do sleep 3600; done
