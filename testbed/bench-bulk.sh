#!/bin/bash
# Bulk benchmark: o2lnd's selftest brw against raw RDMA verbs on the same
# devices.  Boots the `veth` topology (one guest g1: rxe0 on veth0, rxe1 on
# veth1, a veth pair at MTU 9000, policy-routed so traffic crosses the pair;
# both ends share g1's one vCPU) or, with O2_BENCH_TOPO=two, the `two`
# topology (g1 and g2, one vCPU each, rxe0 on each one's eth0, eth0 to eth0
# at MTU 9000: side A is g1, side B g2) and, for R rounds:
#   perftest  ib_write_bw -R -s 1048576 -n BW_ITERS and ib_read_bw -R -s
#             1048576 -n BW_ITERS (server on side B's address, client on
#             side A's): BW average (MB/s, perftest's MB = 2^20 bytes);
#             ib_send_lat -R -s 128 -n LAT_ITERS: one-way t_typical;
#   o2lnd     insmod networks="o2ib0(veth0,veth1)" (`two`: "o2ib0(eth0)"
#             on both guests); o2ctl selftest brw write and read --size 1M
#             --concurrency 1 --duration S (no --check), from g1: mib_per_s;
#             o2ctl selftest ping --concurrency 1: RTT p50.
# Prints progress (stage, round, elapsed seconds) and writes a table of
# medians to results/bench-bulk.md (`two`: results/bench-bulk-two.md): brw
# write / ib_write_bw, brw read / ib_write_bw (as the issue compares them),
# both also vs ib_read_bw, and ping RTT p50 vs 2 x ib_send_lat t_typical;
# its header line names the topology.  Not a pass/fail test: exits
# non-zero only when a stage could not run.
#
#   testbed/bench-bulk.sh [--rounds R] [--duration S] [--out FILE]
#
# Env: BUILD (default <top>/build), O2_KO (module, default <top>/o2lnd.ko),
#      O2_RESULTS (test bed state, default <top>/results; the guests' state
#      is <O2_RESULTS>/bench-bulk, `two`: <O2_RESULTS>/bench-bulk-two),
#      O2_KERNEL, O2_BENCH_TOPO (veth, default, or two: see above and
#      testbed/bench-lib.sh), BW_ITERS (ib_write_bw and
#      ib_read_bw -n, default 1000), LAT_ITERS (ib_send_lat -n, default
#      5000), BRW_SIZE (default 1M), PERFTEST_EVENTS (1, default:
#      ib_send_lat sleeps on CQ events, -e, as in bench-msg.sh; 0: it
#      busy-polls; ib_write_bw/ib_read_bw have no -e: they busy-poll).
set -euo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH=bench-bulk
# shellcheck source-path=SCRIPTDIR source=bench-lib.sh
. "$TOP/testbed/bench-lib.sh"
BW_SIZE=1048576
LAT_SIZE=128
BRW_SIZE=${BRW_SIZE:-1M}
BW_ITERS=${BW_ITERS:-1000}
LAT_ITERS=${LAT_ITERS:-5000}
PERFTEST_T=600
bench_args "$@"
bench_start "brw size $BRW_SIZE"

declare -a WBW RBW LAT BRWW BRWR P50 ERRS RDMA
for ((r = 1; r <= ROUNDS; r++)); do
	say "round $r/$ROUNDS: ib_write_bw -R -s $BW_SIZE -n $BW_ITERS"
	perftest "r$r-ib_write_bw" "$BW_SIZE" ib_write_bw -n "$BW_ITERS"
	WBW[r]=$(fig mbps "$RAW/r$r-ib_write_bw.txt")
	say "round $r/$ROUNDS: ib_write_bw ${WBW[r]} MiB/s; ib_read_bw -R -s $BW_SIZE -n $BW_ITERS"
	perftest "r$r-ib_read_bw" "$BW_SIZE" ib_read_bw -n "$BW_ITERS"
	RBW[r]=$(fig mbps "$RAW/r$r-ib_read_bw.txt")
	say "round $r/$ROUNDS: ib_read_bw ${RBW[r]} MiB/s; ib_send_lat -R -s $LAT_SIZE -n $LAT_ITERS"
	perftest "r$r-ib_send_lat" "$LAT_SIZE" ib_send_lat -n "$LAT_ITERS"
	LAT[r]=$(fig lat "$RAW/r$r-ib_send_lat.txt")
	say "round $r/$ROUNDS: ib_send_lat t_typical ${LAT[r]} us; loading o2lnd"
	# shellcheck disable=SC2119  # no argument: the O2_KO build
	o2lnd_load
	for op in write read; do
		say "round $r/$ROUNDS: o2lnd selftest brw $op --size $BRW_SIZE --concurrency 1 --duration $DURATION"
		T=$((DURATION + 180)) g1 "$O2CTL selftest brw $op $B_NID --from $A_NID --size $BRW_SIZE --concurrency 1 --duration $DURATION -y" \
			>"$RAW/r$r-o2lnd-brw-$op.txt" 2>&1 ||
			{ cat "$RAW/r$r-o2lnd-brw-$op.txt" >&2; exit 1; }
	done
	BRWW[r]=$(fig mib_per_s "$RAW/r$r-o2lnd-brw-write.txt")
	BRWR[r]=$(fig mib_per_s "$RAW/r$r-o2lnd-brw-read.txt")
	say "round $r/$ROUNDS: brw write ${BRWW[r]} MiB/s, read ${BRWR[r]} MiB/s; selftest ping --concurrency 1 --duration $DURATION"
	T=$((DURATION + 120)) g1 "$O2CTL selftest ping $B_NID --from $A_NID --concurrency 1 --duration $DURATION -y" \
		>"$RAW/r$r-o2lnd-ping.txt" 2>&1 ||
		{ cat "$RAW/r$r-o2lnd-ping.txt" >&2; exit 1; }
	P50[r]=$(fig latency_us.p50 "$RAW/r$r-o2lnd-ping.txt")
	ERRS[r]=$($PY -c "print(int($(fig errors.total "$RAW/r$r-o2lnd-brw-write.txt") + $(fig errors.total "$RAW/r$r-o2lnd-brw-read.txt") + $(fig errors.total "$RAW/r$r-o2lnd-ping.txt")))")
	RDMA[r]=$($PY -c "print(int($(fig rdma_rpcs "$RAW/r$r-o2lnd-brw-write.txt") + $(fig rdma_rpcs "$RAW/r$r-o2lnd-brw-read.txt")))")
	gall "rmmod o2lnd" >/dev/null
	say "round $r/$ROUNDS: o2lnd ping RTT p50 ${P50[r]} us, errors ${ERRS[r]}, rdma rpcs ${RDMA[r]}"
done

bench_report "$BRW_SIZE" "$BW_SIZE" "$BW_ITERS" "$LAT_SIZE" "$LAT_ITERS$EV" \
	"${WBW[*]:1}" "${RBW[*]:1}" "${LAT[*]:1}" "${BRWW[*]:1}" "${BRWR[*]:1}" "${P50[*]:1}" \
	"${ERRS[*]:1}" "${RDMA[*]:1}" <<'EOF'
(brw_size, bw_size, bw_iters, lat_size, lat_iters, wbw, rbw, lat, brww, brwr, p50, errs,
 rdma) = sys.argv[1:]
wbw, rbw, lat, brww, brwr, p50, errs, rdma = (v(wbw), v(rbw), v(lat), v(brww), v(brwr), v(p50),
                                             v(errs), v(rdma))
rtt = [2 * x for x in lat]
r = lambda a, b: "%.2f" % (a / b) if b else "-"
L = head("bulk benchmark", "bulk size %s" % brw_size)
L.append("| figure | o2lnd | ib_write_bw | o2lnd / ib_write_bw | ib_read_bw | o2lnd / ib_read_bw |")
L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
L.append("| brw write (MiB/s) | %.1f | %.1f | %s | %.1f | %s |" % (
    med(brww), med(wbw), r(med(brww), med(wbw)), med(rbw), r(med(brww), med(rbw))))
L.append("| brw read (MiB/s) | %.1f | %.1f | %s | %.1f | %s |" % (
    med(brwr), med(wbw), r(med(brwr), med(wbw)), med(rbw), r(med(brwr), med(rbw))))
L.append("")
L.append("| figure | o2lnd | raw verbs | o2lnd / verbs |")
L.append("| --- | ---: | ---: | ---: |")
L.append("| RTT (us): o2lnd ping p50 vs 2 x ib_send_lat t_typical | %.1f | %.1f | %s |" % (
    med(p50), med(rtt), r(med(p50), med(rtt))))
L.append("")
L.append("- o2lnd: `o2ctl selftest brw write|read --size %s --concurrency 1 --duration %s -y` "
         "(no --check), mib_per_s (answered RPCs x size / 2^20 / s; one RPC in flight: a write "
         "is PUT_REQ, PUT_ACK, RDMA write, PUT_DONE and the LNet ACK; a read is GET_REQ, RDMA "
         "write, GET_DONE); RDMA RPCs over all rounds: %d." % (brw_size, dur, sum(rdma)))
L.append("- raw verbs: `ib_write_bw` / `ib_read_bw -R -s %s -n %s` (one direction, BW average "
         "in MB/s, perftest's MB being 2^20 bytes; they have no `-e` and busy-poll, which only "
         "the client does with `-R`)." % (bw_size, bw_iters))
L.append("- RTT: `o2ctl selftest ping --concurrency 1 --duration %s -y` latency_us p50 vs 2 x "
         "t_typical of `ib_send_lat -R -s %s -n %s` (one-way)." % (dur, lat_size, lat_iters))
L.append(tail(errs))
L.append("")
L.append("| round | ib_write_bw (MiB/s) | ib_read_bw (MiB/s) | ib_send_lat t_typical (us) "
         "| brw write (MiB/s) | brw read (MiB/s) | ping RTT p50 (us) | errors |")
L.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for i in range(len(wbw)):
    L.append("| %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %d |" % (
        i + 1, wbw[i], rbw[i], lat[i], brww[i], brwr[i], p50[i], errs[i]))
write(L)
EOF
say "done; raw outputs in $RAW, table in $OUT"
