#!/bin/bash
# dead-peer.sh O2CTL SRC TARGET SECONDS
# Pings TARGET (which never answers) from SRC back to back for SECONDS
# (each ping --timeout 5), so messages to it are queued almost all the
# time, and every 10 s prints a sample of the peer's connect attempts, its
# connections and the slab memory:
#   sample t=S connects=N failures=N conns=N state=S backoff_ms=N slab_kb=N sunreclaim_kb=N pings=N ok=N
# and at the end: "done pings=N ok=N".
set -u
O2CTL=$1 SRC=$2 TARGET=$3 SECONDS_=$4
. "$(dirname "$0")/lib.sh"
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
rm -f /tmp/dead-peer.pings
touch /tmp/dead-peer.pings
sample() {
	local t=$1 p c
	p=$("$O2CTL" peer show "$TARGET" -v | o2_list 'local nid,connects,connect failures,state,backoff ms' |
		grep "^$SRC|" | head -1)
	c=$("$O2CTL" conn show --peer "$TARGET" | o2_list 'local nid' | grep -c "^$SRC\$")
	IFS='|' read -r _ conn fail st bo <<<"$p"
	echo "sample t=$t connects=${conn:-0} failures=${fail:-0} conns=$c state=${st:-none}" \
		"backoff_ms=${bo:-0} slab_kb=$(meminfo Slab) sunreclaim_kb=$(meminfo SUnreclaim)" \
		"pings=$(grep -c . /tmp/dead-peer.pings) ok=$(grep -c '^0$' /tmp/dead-peer.pings)"
}
start=$SECONDS
(
	while ((SECONDS - start < SECONDS_)); do
		"$O2CTL" ping "$TARGET" --source "$SRC" --timeout 5 >/dev/null 2>&1
		echo $? >>/tmp/dead-peer.pings
	done
) &
pinger=$!
sample 0
for ((t = 10; t <= SECONDS_; t += 10)); do
	d=$((start + t - SECONDS))
	((d > 0)) && sleep $d
	sample $t
done
wait $pinger
echo "done pings=$(grep -c . /tmp/dead-peer.pings) ok=$(grep -c '^0$' /tmp/dead-peer.pings)"
