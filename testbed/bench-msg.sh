#!/bin/bash
# Small-message benchmark: o2lnd against raw verbs on the same devices.
# Boots the `veth` topology (one guest g1: rxe0 on veth0, rxe1 on veth1, a
# veth pair at MTU 9000, policy-routed so traffic crosses the pair; both
# ends share g1's one vCPU) or, with O2_BENCH_TOPO=two, the `two` topology
# (g1 and g2, one vCPU each, rxe0 on each one's eth0, eth0 to eth0 at MTU
# 9000: side A is g1, side B g2) and, for R rounds:
#   perftest  ib_send_lat -R -s 128 (server on side B's address, client on
#             side A's): one-way latency t_typical;
#             ib_send_bw -R -s 128: message rate (MsgRate, else BW / size);
#   o2lnd     insmod networks="o2ib0(veth0,veth1)" (`two`: "o2ib0(eth0)"
#             on both guests); o2ctl selftest ping --concurrency 1 (latency:
#             RTT p50) and --concurrency 32 in both directions at once (A to
#             B from g1, B to A from side B's guest; message rate:
#             msg_per_s, summed).
# Prints progress (stage, round, elapsed seconds) and writes a table of
# medians to results/bench-msg.md (`two`: results/bench-msg-two.md): o2lnd
# msg/s vs ib_send_bw msg/s, o2lnd ping RTT p50 vs 2 x ib_send_lat
# t_typical, and their ratios; its header line names the topology.  Not a
# pass/fail test: exits non-zero only when a stage could not run.
#
#   testbed/bench-msg.sh [--rounds R] [--duration S] [--out FILE]
#
# Env: BUILD (default <top>/build), O2_KO (module, default <top>/o2lnd.ko),
#      O2_RESULTS (test bed state, default <top>/results; the guests' state
#      is <O2_RESULTS>/bench-msg, `two`: <O2_RESULTS>/bench-msg-two),
#      O2_KERNEL, O2_BENCH_TOPO (veth, default, or two: see above and
#      testbed/bench-lib.sh), O2_KO_BASE (a second build measured beside
#      O2_KO, loaded on both sides; see bench-lib.sh), LAT_ITERS
#      (ib_send_lat -n, default 5000), BW_ITERS (ib_send_bw -n, default
#      50000; perftest's duration mode -D does not work with -e), SIZE
#      (128), PERFTEST_EVENTS (1, default: perftest sleeps on CQ events,
#      -e; 0: it busy-polls, which in the 1-vCPU guest of `veth` measures
#      the scheduler's time slice: server and client take turns of ~4 ms).
set -euo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH=bench-msg
# shellcheck source-path=SCRIPTDIR source=bench-lib.sh
. "$TOP/testbed/bench-lib.sh"
SIZE=${SIZE:-128}
LAT_ITERS=${LAT_ITERS:-5000}
BW_ITERS=${BW_ITERS:-50000}
bench_args "$@"
bench_start "size $SIZE"

declare -a LAT BW O2P50 O2RATE O2RPC ERRS BP50 BRATE BRPC BERRS
# o2lnd_round R [base]: the three selftests on the loaded module; sets
# P50, RATE, RPC, NERR (the tag names the raw files of the base build).
o2lnd_round() {
	local r=$1 tag=${2:+-$2} ab ba O2CTL=$O2CTL
	[[ -n "$tag" ]] && O2CTL=$O2CTL_BASE
	say "round $r/$ROUNDS: o2lnd${tag} selftest --concurrency 1 --duration $DURATION"
	T=$((DURATION + 120)) g1 "$O2CTL selftest ping $B_NID --from $A_NID --concurrency 1 --duration $DURATION -y" \
		>"$RAW/r$r-o2lnd$tag-lat.txt" 2>&1 ||
		{ cat "$RAW/r$r-o2lnd$tag-lat.txt" >&2; exit 1; }
	P50=$(fig latency_us.p50 "$RAW/r$r-o2lnd$tag-lat.txt")
	say "round $r/$ROUNDS: o2lnd${tag} RTT p50 $P50 us; selftest --concurrency 32 both ways --duration $DURATION"
	T=$((DURATION + 120)) gb "$O2CTL selftest ping $A_NID --from $B_NID --concurrency 32 --duration $DURATION -y" \
		>"$RAW/r$r-o2lnd$tag-ba.txt" 2>&1 &
	BA=$!
	T=$((DURATION + 120)) g1 "$O2CTL selftest ping $B_NID --from $A_NID --concurrency 32 --duration $DURATION -y" \
		>"$RAW/r$r-o2lnd$tag-ab.txt" 2>&1 || { cat "$RAW/r$r-o2lnd$tag-ab.txt" >&2; exit 1; }
	wait "$BA" || { cat "$RAW/r$r-o2lnd$tag-ba.txt" >&2; exit 1; }
	ab=$(fig msg_per_s "$RAW/r$r-o2lnd$tag-ab.txt")
	ba=$(fig msg_per_s "$RAW/r$r-o2lnd$tag-ba.txt")
	RATE=$($PY -c "print($ab + $ba)")
	RPC=$($PY -c "print($(fig rpc_per_s "$RAW/r$r-o2lnd$tag-ab.txt") + $(fig rpc_per_s "$RAW/r$r-o2lnd$tag-ba.txt"))")
	NERR=$($PY -c "print(int($(fig errors.total "$RAW/r$r-o2lnd$tag-ab.txt") + $(fig errors.total "$RAW/r$r-o2lnd$tag-ba.txt") + $(fig errors.total "$RAW/r$r-o2lnd$tag-lat.txt")))")
	gall "rmmod o2lnd" >/dev/null
	say "round $r/$ROUNDS: o2lnd${tag} $(printf %.0f "$RATE") msg/s (A->B $(printf %.0f "$ab"), B->A $(printf %.0f "$ba")), errors $NERR"
}
for ((r = 1; r <= ROUNDS; r++)); do
	say "round $r/$ROUNDS: ib_send_lat -R -s $SIZE -n $LAT_ITERS"
	perftest "r$r-ib_send_lat" "$SIZE" ib_send_lat -n "$LAT_ITERS"
	LAT[r]=$(fig lat "$RAW/r$r-ib_send_lat.txt")
	say "round $r/$ROUNDS: ib_send_lat t_typical ${LAT[r]} us; ib_send_bw -R -s $SIZE -n $BW_ITERS"
	perftest "r$r-ib_send_bw" "$SIZE" ib_send_bw -n "$BW_ITERS"
	BW[r]=$(fig bw "$RAW/r$r-ib_send_bw.txt" "$SIZE")
	say "round $r/$ROUNDS: ib_send_bw $(printf %.0f "${BW[r]}") msg/s; loading o2lnd"
	# with a base build, the two alternate which goes first
	if [[ -n "$KO_BASE" && $((r % 2)) == 0 ]]; then
		o2lnd_load base
		o2lnd_round "$r" base
		BP50[r]=$P50 BRATE[r]=$RATE BRPC[r]=$RPC BERRS[r]=$NERR
	fi
	o2lnd_load
	o2lnd_round "$r"
	O2P50[r]=$P50 O2RATE[r]=$RATE O2RPC[r]=$RPC ERRS[r]=$NERR
	if [[ -n "$KO_BASE" && $((r % 2)) == 1 ]]; then
		o2lnd_load base
		o2lnd_round "$r" base
		BP50[r]=$P50 BRATE[r]=$RATE BRPC[r]=$RPC BERRS[r]=$NERR
	fi
done

bench_report "$SIZE" "$LAT_ITERS" "$BW_ITERS$EV" \
	"${LAT[*]:1}" "${BW[*]:1}" "${O2P50[*]:1}" "${O2RATE[*]:1}" "${O2RPC[*]:1}" "${ERRS[*]:1}" \
	"${BP50[*]:1}" "${BRATE[*]:1}" "${BRPC[*]:1}" "${BERRS[*]:1}" "${O2_KO_BASE:-}" <<'EOF'
(size, iters, bws, lat, bw, p50, rate, rpc, errs, bp50, brate, brpc, berrs, base) = sys.argv[1:]
lat, bw, p50, rate, rpc, errs = v(lat), v(bw), v(p50), v(rate), v(rpc), v(errs)
bp50, brate, brpc, berrs = v(bp50), v(brate), v(brpc), v(berrs)
rtt = [2 * x for x in lat]
L = head("small-message benchmark", "message size %s bytes" % size)
L.append("| figure | o2lnd | raw verbs (perftest) | o2lnd / verbs |")
L.append("| --- | ---: | ---: | ---: |")
L.append("| message rate (msg/s) | %.0f | %.0f | %.2f |" % (med(rate), med(bw), med(rate) / med(bw)))
L.append("| RTT (us): o2lnd ping p50 vs 2 x ib_send_lat t_typical | %.1f | %.1f | %.2f |" % (
    med(p50), med(rtt), med(p50) / med(rtt)))
L.append("")
L.append("- o2lnd message rate: `o2ctl selftest ping --concurrency 32 --duration %s -y` in both "
         "directions at once, msg_per_s of the two summed (o2lnd RPC rate: %.0f rpc/s); "
         "raw verbs: `ib_send_bw -R -s %s -n %s` (one direction, MsgRate; `-e`: perftest sleeps on CQ "
         "events -- %s)." % (dur, med(rpc), size, bws,
             "as in the one-guest mode, where busy-polling server and client would share one vCPU"
             if topo == "two" else
             "busy-polling server and client share the guest's one vCPU and measure its time slice"))
L.append("- o2lnd RTT: `o2ctl selftest ping --concurrency 1 --duration %s -y`, latency_us p50 "
         "(a ping completes after its reply and its request's Send completion); raw verbs: "
         "2 x t_typical of `ib_send_lat -R -s %s -n %s%s` (one-way)." % (
             dur, size, iters, " -e" if bws.endswith("-e") else ""))
if base:
    L.append("")
    L.append("Beside the base build `%s`, loaded in the same boot, round by round "
             "(the two alternate which goes first):" % base)
    L.append("")
    L.append("| figure | o2lnd | base | o2lnd / base |")
    L.append("| --- | ---: | ---: | ---: |")
    L.append("| message rate (msg/s) | %.0f | %.0f | %.3f |" % (med(rate), med(brate), med(rate) / med(brate)))
    L.append("| RPC rate (rpc/s) | %.0f | %.0f | %.3f |" % (med(rpc), med(brpc), med(rpc) / med(brpc)))
    L.append("| ping RTT p50 (us) | %.1f | %.1f | %.3f |" % (med(p50), med(bp50), med(p50) / med(bp50)))
    L.append("")
    L.append("| round | o2lnd msg/s | base msg/s | o2lnd RTT p50 (us) | base RTT p50 (us) | base errors |")
    L.append("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for i in range(len(rate)):
        L.append("| %d | %.0f | %.0f | %.1f | %.1f | %d |" % (i + 1, rate[i], brate[i], p50[i], bp50[i], berrs[i]))
L.append(tail(errs + berrs))
L.append("")
L.append("| round | ib_send_lat t_typical (us) | ib_send_bw (msg/s) | o2lnd RTT p50 (us) | o2lnd msg/s | o2lnd rpc/s | errors |")
L.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for i in range(len(lat)):
    L.append("| %d | %.2f | %.0f | %.1f | %.0f | %.0f | %d |" % (i + 1, lat[i], bw[i], p50[i], rate[i], rpc[i], errs[i]))
write(L)
EOF
say "done; raw outputs in $RAW, table in $OUT"
