#!/bin/bash
# race-rounds.sh O2CTL A B ROUNDS
# Both ends of a connection in one module (NIs A and B): each round closes
# every A<->B connection from both sides, starts `ping B --source A` and
# `ping A --source B` at the same instant, and reports how many established
# connections each side has once both pings returned (settled for <= 5 s:
# a race's surplus connection closes after 1 s quiet).  One line per round:
#   round N ab=RC ba=RC est_a=X est_b=Y first_a=X first_b=Y settle_ms=T conns=N
set -u
O2CTL=$1 A=$2 B=$3 ROUNDS=$4
. "$(dirname "$0")/lib.sh"
count() {  # count LOCAL PEER STATE < conn list
	grep -c "^$1|$2|$3\$"
}
for ((i = 1; i <= ROUNDS; i++)); do
	"$O2CTL" peer close "$B" --source "$A" >/dev/null 2>&1
	"$O2CTL" peer close "$A" --source "$B" >/dev/null 2>&1
	# until neither side holds an established connection (<= 3 s)
	for ((w = 0; w < 60; w++)); do
		n=$("$O2CTL" conn show | o2_list state | grep -c '^established$')
		[[ $n == 0 ]] && break
		sleep 0.05
	done
	"$O2CTL" ping "$B" --source "$A" --timeout 20 >/tmp/race-ab.out 2>&1 &
	pa=$!
	"$O2CTL" ping "$A" --source "$B" --timeout 20 >/tmp/race-ba.out 2>&1 &
	pb=$!
	wait $pa
	ra=$?
	wait $pb
	rb=$?
	t0=$(now)
	first=
	for ((w = 0; w < 100; w++)); do
		c=$("$O2CTL" conn show | o2_list 'local nid,peer,state')
		ea=$(count "$A" "$B" established <<<"$c")
		eb=$(count "$B" "$A" established <<<"$c")
		[[ -z $first ]] && first="first_a=$ea first_b=$eb"
		[[ $ea == 1 && $eb == 1 ]] && break
		sleep 0.05
	done
	settle=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }')
	echo "round $i ab=$ra ba=$rb est_a=$ea est_b=$eb $first settle_ms=$settle conns=$(grep -c . <<<"$c")"
	[[ $ra == 0 ]] || sed 's/^/    ab: /' /tmp/race-ab.out
	[[ $rb == 0 ]] || sed 's/^/    ba: /' /tmp/race-ba.out
done
