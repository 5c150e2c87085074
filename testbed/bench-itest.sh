#!/bin/bash
# Benchmarks and soaks that are scenarios of the integration binary, run
# outside make check (they record figures; none of them is a verdict on
# time).  Each round runs the scenario once; every "[ figure ] name = value"
# line it prints is collected, and a table of per-round values and medians
# is written to results/bench-<name>.md.
#
#   testbed/bench-itest.sh routing [--rounds R]
#       RoutingThreeGuests.RoutedBrwWriteBandwidthAgainstDirect: 1 MiB brw
#       write from the server, routed through the router vs to the router
#       itself, same boot (three guests)
#   testbed/bench-itest.sh faults [--rounds R]
#       RealFaults.ThroughputAtEachLossRateBesideIbWriteBw: brw and ping
#       rates at 0, 0.1, 1 and 5% netem loss in one boot (two guests), as
#       ratios to the lossless figure, beside ib_write_bw at the same loss;
#       and RealFaults.ThroughputAndDeadPeerDetectionAtEachAckTimeout: for
#       ack_timeout 14, 16, 18, brw rates at 1% loss and the time until a
#       paused peer's connection is closed
#   testbed/bench-itest.sh vs-o2iblnd [--rounds R]
#       InteropBench.O2lndBesideO2iblndInOneBoot: o2lnd (o2ctl selftest)
#       beside Lustre's LNet + ko2iblnd (lst) in the same two guests of one
#       boot, stacks alternating round by round (O2_BENCH_ROUNDS, default 3;
#       O2_BENCH_SECONDS per test, default 20; O2_BENCH_NETEM="loss 1%"
#       puts that netem qdisc on g2's eth0 for the run; O2_BENCH_SHAPES=a,b
#       runs only the shapes named, e.g. brw_write_1M_x1;
#       O2_BENCH_O2LND_PARAMS="conns_per_peer=4" loads o2lnd with those
#       parameters; O2_BENCH_O2LND_WRITE_ARGS="--ack" gives o2ctl's brw
#       writes those options): bulk 1 MiB write/read at 1
#       and 8 in flight, 4 KiB write and ping at 8 and 1, host CPU per GiB
#       and per 1000 RPCs, medians and ratios.  Needs the Lustre peer
#       (testbed/lustre-build.sh, from O2_LUSTRE_SRC; built if O2_LUSTRE
#       is not set)
#   testbed/bench-itest.sh soak [--rounds R]
#       the connection soaks at lengths make check does not afford:
#       ConnectVeth.BothSidesConnectAtOnceEndWithOneConnection with 1000
#       race rounds (O2_RACE_ROUNDS; make check runs 50) and
#       ConnectVeth.DeadPeerAttemptsArePaced* with 600 s of pings
#       (O2_DEAD_PEER_SECONDS; make check runs 60 s)
#
# Env: BUILD (default <top>/build), O2_RESULTS (default <top>/results),
#      O2_KO, O2_KERNEL, ... (the scenarios' own), O2_RACE_ROUNDS and
#      O2_DEAD_PEER_SECONDS override the soak lengths.
set -euo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$TOP/build}"
RES="${O2_RESULTS:-$TOP/results}"
NAME=${1:-}
shift || true
ROUNDS=1
while [[ $# -gt 0 ]]; do
	case "$1" in
	--rounds) ROUNDS=$2; shift 2 ;;
	*) echo "usage: testbed/bench-itest.sh routing|faults|vs-o2iblnd|soak [--rounds R]" >&2; exit 2 ;;
	esac
done
case $NAME in
routing)
	FILTER='RoutingThreeGuests.RoutedBrwWriteBandwidthAgainstDirect'
	[[ $ROUNDS == 1 ]] && ROUNDS=3
	;;
faults)
	FILTER='RealFaults.Throughput*'
	;;
vs-o2iblnd)
	FILTER='InteropBench.O2lndBesideO2iblndInOneBoot'
	if [[ -z "${O2_LUSTRE:-}" ]]; then
		O2_LUSTRE=$("$TOP/testbed/lustre-build.sh" | tail -1) ||
			{ echo "bench-vs-o2iblnd: no Lustre peer (testbed/lustre-build.sh: $O2_LUSTRE)" >&2; exit 1; }
		export O2_LUSTRE
	fi
	;;
soak)
	FILTER='ConnectVeth.BothSidesConnectAtOnceEndWithOneConnection:ConnectVeth.DeadPeerAttemptsArePaced*'
	export O2_RACE_ROUNDS=${O2_RACE_ROUNDS:-1000} O2_DEAD_PEER_SECONDS=${O2_DEAD_PEER_SECONDS:-600}
	;;
*) echo "usage: testbed/bench-itest.sh routing|faults|vs-o2iblnd|soak [--rounds R]" >&2; exit 2 ;;
esac
ITEST="$BUILD/userspace-tests/integration/o2lnd_itest"
[[ -x "$ITEST" ]] || { echo "bench-$NAME: no $ITEST (make userspace)" >&2; exit 1; }
OUT="$RES/bench-$NAME.md"
LOGDIR="$RES/bench-$NAME"
mkdir -p "$LOGDIR"
T0=$SECONDS
say() { printf '[bench-%s +%4ds] %s\n' "$NAME" $((SECONDS - T0)) "$*"; }
rc=0
for ((r = 1; r <= ROUNDS; r++)); do
	say "round $r/$ROUNDS: $FILTER"
	O2_RESULTS="$LOGDIR/r$r" O2_KMEMLEAK=${O2_KMEMLEAK:-0} "$ITEST" --gtest_color=no \
		--gtest_filter="$FILTER" > "$LOGDIR/r$r.log" 2>&1 || rc=1
	grep -E '^\[ (RUN|      OK|  FAILED) |^\[ figure' "$LOGDIR/r$r.log" | sed 's/^/    /'
done
/usr/bin/python3 - "$OUT" "$NAME" "$FILTER" "$ROUNDS" "$LOGDIR" <<'PY'
import re, statistics, sys
out, name, flt, rounds, logdir = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
figs = {}  # (test, figure) -> [value per round]
for r in range(1, rounds + 1):
    test = "?"
    for l in open(f"{logdir}/r{r}.log", errors="replace"):
        m = re.match(r"^\[ RUN      \] (\S+)", l)
        if m:
            test = m.group(1)
        m = re.match(r"^\[ figure   \] (\S+) = (.*)$", l.rstrip())
        if m:
            figs.setdefault((test, m.group(1)), [None] * rounds)[r - 1] = m.group(2)
with open(out, "w") as f:
    f.write(f"# bench-{name}\n\nScenarios `{flt}`, {rounds} round(s), one boot each, QEMU TCG.\n\n")
    f.write("| scenario | figure | median | " + " | ".join(f"round {i}" for i in range(1, rounds + 1)) + " |\n")
    f.write("|---|---|---|" + "---|" * rounds + "\n")
    for (t, k), vs in figs.items():
        nums = []
        for v in vs:
            try:
                nums.append(float(v))
            except (TypeError, ValueError):
                pass
        med = f"{statistics.median(nums):g}" if nums and len(nums) == len([v for v in vs if v is not None]) else ""
        f.write(f"| {t} | {k} | {med} | " + " | ".join(v if v is not None else "" for v in vs) + " |\n")
print(f"report: {out}")
PY
say "done (logs in $LOGDIR)"
exit $rc
