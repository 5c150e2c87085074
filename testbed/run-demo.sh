#!/bin/bash
# make run: boot two guests on Soft-RoCE, load o2lnd on both, ping across in
# both directions, show `o2ctl net show` of both, shut down.  Exit 0 when
# both pings succeed.
set -uo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$TOP/build}"
export O2_BUILD="$BUILD"
TB="$TOP/testbed/o2-testbed"
DIR="${O2_RESULTS:-$TOP/results}/demo"
KO="${O2_KO:-$TOP/o2lnd.ko}"
O2CTL="${O2_O2CTL:-$BUILD/o2ctl/o2ctl}"
T0=$SECONDS
say() { printf '[run %3ds] %s\n' $((SECONDS - T0)) "$*"; }

[[ -f "$KO" ]] || { echo "run-demo: no module at $KO (make module)" >&2; exit 1; }
[[ -x "$O2CTL" ]] || { echo "run-demo: no o2ctl at $O2CTL (make userspace)" >&2; exit 1; }

cleanup() { "$TB" --dir "$DIR" down >/dev/null 2>&1 || true; }
trap cleanup EXIT

say "booting two guests (g1 192.168.1.1, g2 192.168.1.2; logs in $DIR)"
"$TB" --dir "$DIR" up two || exit 1
rc=0
for g in g1 g2; do
	say "$g: insmod o2lnd.ko networks=\"o2ib0(eth0)\""
	"$TB" --dir "$DIR" run "$g" "insmod '$KO' 'networks=\"o2ib0(eth0)\"'" || rc=1
done
ping_from() { # guest target
	say "$1: o2ctl ping $2"
	"$TB" --dir "$DIR" run -t 60 "$1" "'$O2CTL' ping $2" || rc=1
}
ping_from g1 192.168.1.2@o2ib0
ping_from g2 192.168.1.1@o2ib0
for g in g1 g2; do
	say "$g: o2ctl net show"
	"$TB" --dir "$DIR" run "$g" "'$O2CTL' net show" || rc=1
done
for g in g1 g2; do
	"$TB" --dir "$DIR" run "$g" "rmmod o2lnd" || rc=1
done
if "$TB" --dir "$DIR" reports; then :; else
	say "kernel reports found (above)"
	rc=1
fi
say "shutting down"
if [[ $rc == 0 ]]; then say "demo OK"; else say "demo FAILED"; fi
exit $rc
