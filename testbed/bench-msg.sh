#!/bin/bash
# Small-message benchmark: o2lnd against raw verbs on the same devices.
# Boots the `veth` topology (one guest g1: rxe0 on veth0, rxe1 on veth1, a
# veth pair at MTU 9000, policy-routed so traffic crosses the pair) and,
# for R rounds:
#   perftest  ib_send_lat -R -s 128 (server on the second device's address,
#             client on the first): one-way latency t_typical;
#             ib_send_bw -R -s 128: message rate (MsgRate, else BW / size);
#   o2lnd     insmod networks="o2ib0(veth0,veth1)"; o2ctl selftest ping
#             --concurrency 1 (latency: RTT p50) and --concurrency 32 in
#             both directions at once (message rate: msg_per_s, summed).
# Prints progress (stage, round, elapsed seconds) and writes a table of
# medians to results/bench-msg.md: o2lnd msg/s vs ib_send_bw msg/s, o2lnd
# ping RTT p50 vs 2 x ib_send_lat t_typical, and their ratios.  Not a
# pass/fail test: exits non-zero only when a stage could not run.
#
#   testbed/bench-msg.sh [--rounds R] [--duration S] [--out FILE]
#
# Env: BUILD (default <top>/build), O2_KO (module, default <top>/o2lnd.ko),
#      O2_RESULTS (test bed state, default <top>/results; the guest's state
#      is <O2_RESULTS>/bench-msg), O2_KERNEL, LAT_ITERS (ib_send_lat -n,
#      default 5000), BW_ITERS (ib_send_bw -n, default 50000; perftest's
#      duration mode -D does not work with -e), SIZE (128),
#      PERFTEST_EVENTS (1, default: perftest sleeps on CQ events, -e; 0:
#      it busy-polls, which in a 1-vCPU guest measures the scheduler's
#      time slice: server and client take turns of ~4 ms).
set -euo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$TOP/build}"
ROUNDS=3
DURATION=10
OUT="$TOP/results/bench-msg.md"
SIZE=${SIZE:-128}
LAT_ITERS=${LAT_ITERS:-5000}
BW_ITERS=${BW_ITERS:-50000}
PERFTEST_EVENTS=${PERFTEST_EVENTS:-1}
while [[ $# -gt 0 ]]; do
	case "$1" in
	--rounds | --runs) ROUNDS=$2; shift 2 ;;
	--duration) DURATION=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) echo "usage: testbed/bench-msg.sh [--rounds R] [--duration S] [--out FILE]" >&2; exit 2 ;;
	esac
done
PY=/usr/bin/python3
RES="${O2_RESULTS:-$TOP/results}"
DIR="$RES/bench-msg"
RAW="$DIR/raw"
T0=$(date +%s)
say() { printf '[bench-msg +%4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }

if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
	cmake -S "$TOP" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD" -j"$(nproc)" --target o2ctl o2-testbed o2-agent >/dev/null
TB=("$BUILD/testbed/o2-testbed" --dir "$DIR")
O2CTL="$BUILD/o2ctl/o2ctl"
KO_SRC="${O2_KO:-$TOP/o2lnd.ko}"
[[ -f "$KO_SRC" ]] || { echo "bench-msg: no module at $KO_SRC (make module)" >&2; exit 1; }
# The guest caches 9p files by path: hand it a copy under a fresh name
# (under /var/tmp: the guest sees the host's root, not its /tmp).
KO="/var/tmp/o2lnd-bench-msg-$$-$(date +%s).ko"
cp "$KO_SRC" "$KO"
cleanup() {
	"${TB[@]}" down >/dev/null 2>&1 || true
	rm -f "$KO"
}
trap cleanup EXIT
mkdir -p "$RAW" "$(dirname "$OUT")"
rm -f "$RAW"/*

g1() { "${TB[@]}" run -t "${T:-120}" g1 "$@"; }

say "booting the veth topology (state in $DIR)"
"${TB[@]}" up veth >/dev/null
# The addresses and devices of the pair, as the guest has them.
A_IP=$(g1 "ip -4 -o addr show dev veth0 | awk '{print \$4}' | cut -d/ -f1")
B_IP=$(g1 "ip -4 -o addr show dev veth1 | awk '{print \$4}' | cut -d/ -f1")
A_DEV=$(g1 "rdma link show | awk '\$NF == \"veth0\" {split(\$2, a, \"/\"); print a[1]}'")
B_DEV=$(g1 "rdma link show | awk '\$NF == \"veth1\" {split(\$2, a, \"/\"); print a[1]}'")
MTU=$(g1 "cat /sys/class/net/veth0/mtu")
[[ -n "$A_IP" && -n "$B_IP" && -n "$A_DEV" && -n "$B_DEV" ]] ||
	{ echo "bench-msg: veth0/veth1 addresses or RDMA devices not found" >&2; exit 1; }
A_NID="$A_IP@o2ib0"
B_NID="$B_IP@o2ib0"
say "g1: veth0 $A_IP ($A_DEV) <-> veth1 $B_IP ($B_DEV), MTU $MTU; $ROUNDS rounds, ${DURATION} s selftests, size $SIZE"

# perftest: server on B's device in the background, client on A's; a few
# tries (the server needs a moment to listen).
perftest() { # NAME TOOL ARGS... -> $RAW/NAME.txt
	local name=$1 tool=$2 port=$((18515 + RANDOM % 1000))
	shift 2
	local args="-R -s $SIZE -p $port $*"
	[[ "$PERFTEST_EVENTS" == 1 ]] && args+=" -e"
	local cmd="pkill -x $tool; ($tool -d $B_DEV $args >/tmp/$name-server.txt 2>&1 &); sleep 2;"
	cmd+=" $tool -d $A_DEV $args --source_ip $A_IP $B_IP"
	local try
	for try in 1 2 3; do
		if T=300 g1 "$cmd" >"$RAW/$name.txt" 2>&1; then
			g1 "sleep 1; pkill -x $tool; true" >/dev/null
			return 0
		fi
		g1 "pkill -x $tool; sleep 2; true" >/dev/null
	done
	echo "bench-msg: $name failed 3 times:" >&2
	cat "$RAW/$name.txt" >&2
	return 1
}

# A figure from a raw output file (see the python below for the kinds).
fig() { $PY - "$@" <<'EOF'
import re, sys, yaml
kind, path = sys.argv[1], sys.argv[2]
text = open(path, errors="replace").read()
def perftest_row(text, names):
    hdr = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#bytes"):
            # "#bytes #iterations t_min[usec] ... 99% percentile[usec]"
            hdr = [h.strip() for h in re.findall(r"#\w+|[\w%. ]+?\[[^\]]+\]", s)]
            continue
        f = s.split()
        if hdr and f and f[0].isdigit() and len(f) >= len(hdr) - 2:
            for n in names:
                for i, h in enumerate(hdr):
                    if h.lower().startswith(n) and i < len(f):
                        return float(f[i]), hdr, f
    raise SystemExit("no perftest result in " + path)
def norm(k):
    return str(k).lower().replace(" ", "_").replace("-", "_")
def flat(n, p="", out=None):
    out = {} if out is None else out
    if isinstance(n, dict):
        for k, v in n.items():
            flat(v, (p + "." if p else "") + norm(k), out)
    elif isinstance(n, list):
        for i, v in enumerate(n):
            flat(v, p + "." + str(i), out)
    else:
        out[p] = n
    return out
def st(key):
    i = text.find("selftest:")
    if i < 0:
        raise SystemExit("no selftest YAML in " + path)
    f = flat(yaml.safe_load(text[i:]))
    for p, v in f.items():
        if p == key or p.endswith("." + key):
            return float(v)
    raise SystemExit("no %s in the selftest YAML of %s" % (key, path))
if kind == "lat":      # ib_send_lat: t_typical [usec]
    print(perftest_row(text, ["t_typical"])[0])
elif kind == "bw":     # ib_send_bw: messages/s (MsgRate[Mpps], else BW average / size)
    try:
        print(perftest_row(text, ["msgrate"])[0] * 1e6)
    except SystemExit:
        v = perftest_row(text, ["bw average", "bw_average"])[0]
        print(v * 1e6 / int(sys.argv[3]))
else:                  # selftest key, e.g. latency_us.p50, msg_per_s, errors.total
    print(st(kind))
EOF
}

declare -a LAT BW O2P50 O2RATE O2RPC ERRS
for ((r = 1; r <= ROUNDS; r++)); do
	say "round $r/$ROUNDS: ib_send_lat -R -s $SIZE -n $LAT_ITERS"
	perftest "r$r-ib_send_lat" ib_send_lat -n "$LAT_ITERS"
	LAT[r]=$(fig lat "$RAW/r$r-ib_send_lat.txt")
	say "round $r/$ROUNDS: ib_send_lat t_typical ${LAT[r]} us; ib_send_bw -R -s $SIZE -n $BW_ITERS"
	perftest "r$r-ib_send_bw" ib_send_bw -n "$BW_ITERS"
	BW[r]=$(fig bw "$RAW/r$r-ib_send_bw.txt" "$SIZE")
	say "round $r/$ROUNDS: ib_send_bw $(printf %.0f "${BW[r]}") msg/s; loading o2lnd"
	g1 "if grep -q '^o2lnd ' /proc/modules; then rmmod o2lnd; fi; insmod $KO networks=\"o2ib0(veth0,veth1)\"" >/dev/null
	g1 "$O2CTL ping $B_NID --source $A_NID --timeout 20" >/dev/null
	say "round $r/$ROUNDS: o2lnd selftest --concurrency 1 --duration $DURATION"
	T=$((DURATION + 120)) g1 "$O2CTL selftest ping $B_NID --from $A_NID --concurrency 1 --duration $DURATION -y" \
		>"$RAW/r$r-o2lnd-lat.txt" 2>&1 ||
		{ cat "$RAW/r$r-o2lnd-lat.txt" >&2; exit 1; }
	O2P50[r]=$(fig latency_us.p50 "$RAW/r$r-o2lnd-lat.txt")
	say "round $r/$ROUNDS: o2lnd RTT p50 ${O2P50[r]} us; selftest --concurrency 32 both ways --duration $DURATION"
	T=$((DURATION + 120)) g1 "$O2CTL selftest ping $A_NID --from $B_NID --concurrency 32 --duration $DURATION -y" \
		>"$RAW/r$r-o2lnd-ba.txt" 2>&1 &
	BA=$!
	T=$((DURATION + 120)) g1 "$O2CTL selftest ping $B_NID --from $A_NID --concurrency 32 --duration $DURATION -y" \
		>"$RAW/r$r-o2lnd-ab.txt" 2>&1 || { cat "$RAW/r$r-o2lnd-ab.txt" >&2; exit 1; }
	wait "$BA" || { cat "$RAW/r$r-o2lnd-ba.txt" >&2; exit 1; }
	ab=$(fig msg_per_s "$RAW/r$r-o2lnd-ab.txt")
	ba=$(fig msg_per_s "$RAW/r$r-o2lnd-ba.txt")
	O2RATE[r]=$($PY -c "print($ab + $ba)")
	O2RPC[r]=$($PY -c "print($(fig rpc_per_s "$RAW/r$r-o2lnd-ab.txt") + $(fig rpc_per_s "$RAW/r$r-o2lnd-ba.txt"))")
	ERRS[r]=$($PY -c "print(int($(fig errors.total "$RAW/r$r-o2lnd-ab.txt") + $(fig errors.total "$RAW/r$r-o2lnd-ba.txt") + $(fig errors.total "$RAW/r$r-o2lnd-lat.txt")))")
	g1 "rmmod o2lnd" >/dev/null
	say "round $r/$ROUNDS: o2lnd $(printf %.0f "${O2RATE[r]}") msg/s (A->B $(printf %.0f "$ab"), B->A $(printf %.0f "$ba")), errors ${ERRS[r]}"
done

REPORTS=$("${TB[@]}" reports 2>&1 || true)
EV=$([[ "$PERFTEST_EVENTS" == 1 ]] && echo " -e" || true)
$PY - "$OUT" "$ROUNDS" "$DURATION" "$SIZE" "$LAT_ITERS" "$BW_ITERS$EV" "$A_IP" "$B_IP" "$A_DEV" "$B_DEV" "$MTU" \
	"${LAT[*]:1}" "${BW[*]:1}" "${O2P50[*]:1}" "${O2RATE[*]:1}" "${O2RPC[*]:1}" "${ERRS[*]:1}" "$REPORTS" <<'EOF'
import statistics, sys, datetime
(out, rounds, dur, size, iters, bws, a_ip, b_ip, a_dev, b_dev, mtu,
 lat, bw, p50, rate, rpc, errs, reports) = sys.argv[1:]
v = lambda s: [float(x) for x in s.split()]
lat, bw, p50, rate, rpc, errs = v(lat), v(bw), v(p50), v(rate), v(rpc), v(errs)
med = statistics.median
rtt = [2 * x for x in lat]
L = []
L.append("# o2lnd small-message benchmark (`make bench-msg`)\n")
L.append("%s, one guest (QEMU TCG), Soft-RoCE %s on veth0 %s <-> %s on veth1 %s, MTU %s; "
         "%s rounds, medians; message size %s bytes.\n" % (
             datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
             a_dev, a_ip, b_dev, b_ip, mtu, rounds, size))
L.append("| figure | o2lnd | raw verbs (perftest) | o2lnd / verbs |")
L.append("| --- | ---: | ---: | ---: |")
L.append("| message rate (msg/s) | %.0f | %.0f | %.2f |" % (med(rate), med(bw), med(rate) / med(bw)))
L.append("| RTT (us): o2lnd ping p50 vs 2 x ib_send_lat t_typical | %.1f | %.1f | %.2f |" % (
    med(p50), med(rtt), med(p50) / med(rtt)))
L.append("")
L.append("- o2lnd message rate: `o2ctl selftest ping --concurrency 32 --duration %s -y` in both "
         "directions at once, msg_per_s of the two summed (o2lnd RPC rate: %.0f rpc/s); "
         "raw verbs: `ib_send_bw -R -s %s -n %s` (one direction, MsgRate; `-e`: perftest sleeps on CQ "
         "events -- busy-polling server and client share the guest's one vCPU and measure its time "
         "slice)." % (dur, med(rpc), size, bws))
L.append("- o2lnd RTT: `o2ctl selftest ping --concurrency 1 --duration %s -y`, latency_us p50 "
         "(a ping completes after its reply and its request's Send completion); raw verbs: "
         "2 x t_typical of `ib_send_lat -R -s %s -n %s%s` (one-way)." % (
             dur, size, iters, " -e" if bws.endswith("-e") else ""))
L.append("- selftest errors over all rounds: %d; kernel reports: %s" % (
    sum(errs), "none" if not reports.strip() else "\n\n```\n" + reports.strip() + "\n```"))
L.append("")
L.append("| round | ib_send_lat t_typical (us) | ib_send_bw (msg/s) | o2lnd RTT p50 (us) | o2lnd msg/s | o2lnd rpc/s | errors |")
L.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for i in range(len(lat)):
    L.append("| %d | %.2f | %.0f | %.1f | %.0f | %.0f | %d |" % (i + 1, lat[i], bw[i], p50[i], rate[i], rpc[i], errs[i]))
text = "\n".join(L) + "\n"
open(out, "w").write(text)
print(text)
EOF
say "done; raw outputs in $RAW, table in $OUT"
