#!/bin/bash
# Recovery benchmark: boots the `two` topology and, over several runs per
# case, measures the time from "peer back up" (o2lnd loaded on a rebooted
# guest) to the first good ping: the survivor pings first / the rebooted
# peer pings first / a stuck connect injected on the survivor.  Also counts
# failed pings after the first good one (goal: none) and connect attempts
# per minute to a dead peer.  Prints a table (median, min, max per case) and
# writes results/recovery.md.  Not a pass/fail timing test: it exits
# non-zero only when a run never recovered (or the bench could not run).
#
#   testbed/bench-recovery.sh [--runs N] [--dead-seconds S] [--out FILE]
#
# The driving logic is the C++ program o2lnd_recovery_bench (built from
# userspace-tests/integration/recovery_bench.cc with the scenario fixture).
# Env: BUILD (default <top>/build), O2_KO (module, default <top>/o2lnd.ko),
#      O2_RESULTS (test bed state, default <top>/results), O2_KERNEL, ...
set -euo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$TOP/build}"
RUNS=3
DEAD=60
OUT="$TOP/results/recovery.md"
while [[ $# -gt 0 ]]; do
	case "$1" in
	--runs) RUNS=$2; shift 2 ;;
	--dead-seconds) DEAD=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) echo "usage: testbed/bench-recovery.sh [--runs N] [--dead-seconds S] [--out FILE]" >&2; exit 2 ;;
	esac
done
BIN="$BUILD/userspace-tests/integration/o2lnd_recovery_bench"
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
	cmake -S "$TOP" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD" -j"$(nproc)" --target o2lnd_recovery_bench >/dev/null
mkdir -p "$(dirname "$OUT")"
echo "recovery benchmark: $RUNS runs per case, dead peer for $DEAD s, module ${O2_KO:-$TOP/o2lnd.ko}"
O2_BENCH_RUNS=$RUNS O2_BENCH_DEAD_SECONDS=$DEAD O2_BENCH_OUT="$OUT" O2_KMEMLEAK=${O2_KMEMLEAK:-0} \
	"$BIN" --gtest_color=no 2>&1 | grep -v '^Running main\|^Note: Google Test filter'
