# Shared by testbed/bench-msg.sh and testbed/bench-bulk.sh; sourced, not run.
# The sourcing script sets TOP (the top of the tree), BENCH (its name:
# bench-msg, bench-bulk) and `set -euo pipefail`, then calls
#   bench_args "$@"      --rounds R (ROUNDS, 3), --duration S (DURATION,
#                        10), --out FILE (OUT, <top>/results/BENCH.md;
#                        <top>/results/BENCH-two.md with O2_BENCH_TOPO=two)
#   bench_start SUMMARY  builds o2ctl and o2-testbed, copies the module,
#                        boots the topology in <O2_RESULTS>/BENCH (`veth`)
#                        or <O2_RESULTS>/BENCH-two (`two`) and sets A_IP,
#                        B_IP, A_DEV, B_DEV, MTU, A_NID, B_NID (SUMMARY
#                        ends its progress line)
# and uses say, g1, g2, gb, gall, perftest, fig, o2lnd_load and
# bench_report below.
# O2_BENCH_TOPO picks the test bed (TOPO):
#   veth (default)  the `veth` topology: one guest g1, rxe0 on veth0 (side
#                   A) and rxe1 on veth1 (side B), a veth pair at MTU 9000,
#                   policy-routed so traffic crosses the pair; both ends
#                   share g1's one vCPU; o2lnd networks="o2ib0(veth0,veth1)"
#   two             the `two` topology: g1 (side A: eth0 192.168.1.1, rxe0)
#                   and g2 (side B: eth0 192.168.1.2, rxe0), eth0 to eth0
#                   at MTU 9000, one vCPU each; o2lnd networks="o2ib0(eth0)"
#                   on both; side B's commands (perftest's server, selftests
#                   --from B) run on g2, side A's on g1
# Env: BUILD, O2_KO, O2_KO_BASE, O2_RESULTS, O2_KERNEL, O2_BENCH_TOPO,
# PERFTEST_EVENTS (see the scripts).  O2_KO_BASE: a second build of the
# module (the one before a change) that bench-msg measures beside O2_KO in
# the same boot, round by round (o2lnd_load base; on both guests in
# `two`); O2_O2CTL_BASE: the o2ctl that speaks to it, when it predates the
# current ioctl ABI (default: the one of BUILD).  Both must lie outside
# /tmp (the guest sees the host's root, not its /tmp).
# PERFTEST_T, the timeout of one perftest run in seconds (300),
# is not read from the environment: a script may set it after sourcing.
# shellcheck shell=bash disable=SC2034  # globals for the sourcing script

PERFTEST_EVENTS=${PERFTEST_EVENTS:-1}
PERFTEST_T=300
TOPO=${O2_BENCH_TOPO:-veth}
# what the topology adds to the names of the report and the state folder
TOPO_SFX=""
if [[ "$TOPO" == two ]]; then TOPO_SFX="-two"; fi
# " -e" where perftest's ib_send_* sleep on CQ events (for the tables).
EV=""
if [[ "$PERFTEST_EVENTS" == 1 ]]; then EV=" -e"; fi
PY=/usr/bin/python3

bench_args() {
	ROUNDS=3
	DURATION=10
	# shellcheck disable=SC2153  # TOP (not TOPO): set by the sourcing script
	OUT="$TOP/results/$BENCH$TOPO_SFX.md"
	case "$TOPO" in
	veth | two) ;;
	*) echo "$BENCH: O2_BENCH_TOPO=$TOPO: not veth or two" >&2; exit 2 ;;
	esac
	while [[ $# -gt 0 ]]; do
		case "$1" in
		--rounds | --runs) ROUNDS=$2; shift 2 ;;
		--duration) DURATION=$2; shift 2 ;;
		--out) OUT=$2; shift 2 ;;
		*) echo "usage: testbed/$BENCH.sh [--rounds R] [--duration S] [--out FILE]" >&2; exit 2 ;;
		esac
	done
}

say() { printf '[%s +%4ss] %s\n' "$BENCH" "$(($(date +%s) - T0))" "$*"; }

g1() { "${TB[@]}" run -t "${T:-120}" g1 "$@"; }
g2() { "${TB[@]}" run -t "${T:-120}" g2 "$@"; }
# gb: on side B's guest (g2 in `two`, g1 in `veth`); gall: on every guest
# in turn (g1, then g2 in `two`), stopping at the first that fails.
gb() { if [[ "$TOPO" == two ]]; then g2 "$@"; else g1 "$@"; fi; }
gall() {
	g1 "$@" || return
	if [[ "$TOPO" == two ]]; then g2 "$@"; fi
}

cleanup() {
	"${TB[@]}" down >/dev/null 2>&1 || true
	rm -f "$KO" "${KO_BASE:-}"
}

bench_start() { # SUMMARY
	BUILD="${BUILD:-$TOP/build}"
	RES="${O2_RESULTS:-$TOP/results}"
	DIR="$RES/$BENCH$TOPO_SFX"
	RAW="$DIR/raw"
	T0=$(date +%s)
	if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
		cmake -S "$TOP" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	fi
	cmake --build "$BUILD" -j"$(nproc)" --target o2ctl o2-testbed o2-agent >/dev/null
	TB=("$BUILD/testbed/o2-testbed" --dir "$DIR")
	O2CTL="$BUILD/o2ctl/o2ctl"
	O2CTL_BASE="${O2_O2CTL_BASE:-$O2CTL}"
	[[ -x "$O2CTL_BASE" ]] || { echo "$BENCH: no o2ctl at O2_O2CTL_BASE=$O2CTL_BASE" >&2; exit 1; }
	KO_SRC="${O2_KO:-$TOP/o2lnd.ko}"
	[[ -f "$KO_SRC" ]] || { echo "$BENCH: no module at $KO_SRC (make module)" >&2; exit 1; }
	# The guest caches 9p files by path: hand it a copy under a fresh name
	# (under /var/tmp: the guest sees the host's root, not its /tmp).
	KO="/var/tmp/o2lnd-$BENCH-$$-$(date +%s).ko"
	cp "$KO_SRC" "$KO"
	KO_BASE=
	if [[ -n "${O2_KO_BASE:-}" ]]; then
		[[ -f "$O2_KO_BASE" ]] || { echo "$BENCH: no module at O2_KO_BASE=$O2_KO_BASE" >&2; exit 1; }
		KO_BASE="/var/tmp/o2lnd-$BENCH-base-$$-$(date +%s).ko"
		cp "$O2_KO_BASE" "$KO_BASE"
	fi
	trap cleanup EXIT
	mkdir -p "$RAW" "$(dirname "$OUT")"
	rm -f "$RAW"/*

	say "booting the $TOPO topology (state in $DIR)"
	"${TB[@]}" up "$TOPO" >/dev/null
	# The addresses and devices of the two sides, as the guests have them:
	# A on g1's a_if, B on b_if of gb (g1 or g2); NETS, o2lnd's networks=.
	local a_if=veth0 b_if=veth1 where
	NETS="o2ib0(veth0,veth1)"
	if [[ "$TOPO" == two ]]; then a_if=eth0 b_if=eth0 NETS="o2ib0(eth0)"; fi
	A_IP=$(g1 "ip -4 -o addr show dev $a_if | awk '{print \$4}' | cut -d/ -f1")
	B_IP=$(gb "ip -4 -o addr show dev $b_if | awk '{print \$4}' | cut -d/ -f1")
	A_DEV=$(g1 "rdma link show | awk '\$NF == \"$a_if\" {split(\$2, a, \"/\"); print a[1]}'")
	B_DEV=$(gb "rdma link show | awk '\$NF == \"$b_if\" {split(\$2, a, \"/\"); print a[1]}'")
	MTU=$(g1 "cat /sys/class/net/$a_if/mtu")
	where="g1: veth0 $A_IP ($A_DEV) <-> veth1 $B_IP ($B_DEV)"
	if [[ "$TOPO" == two ]]; then where="g1: eth0 $A_IP ($A_DEV) <-> g2: eth0 $B_IP ($B_DEV)"; fi
	[[ -n "$A_IP" && -n "$B_IP" && -n "$A_DEV" && -n "$B_DEV" ]] ||
		{ echo "$BENCH: $a_if/$b_if addresses or RDMA devices not found" >&2; exit 1; }
	A_NID="$A_IP@o2ib0"
	B_NID="$B_IP@o2ib0"
	say "$where, MTU $MTU; $ROUNDS rounds, ${DURATION} s selftests, $1"
}

# perftest: server on B's device in the background (on g2 in `two`),
# client on A's (on g1); a few tries (the server needs a moment to listen).
perftest() { # NAME SIZE TOOL ARGS... -> $RAW/NAME.txt
	local name=$1 size=$2 tool=$3 port=$((18515 + RANDOM % 1000))
	shift 3
	local args="-R -s $size -p $port $*"
	# -e (sleep on CQ events) only where perftest has it: ib_write_bw and
	# ib_read_bw refuse it ("Events feature not available on WRITE verb").
	if [[ "$PERFTEST_EVENTS" == 1 && "$tool" == ib_send_* ]]; then args+=" -e"; fi
	local srv="pkill -x $tool; ($tool -d $B_DEV $args >/tmp/$name-server.txt 2>&1 &); sleep 2;"
	local cli=" $tool -d $A_DEV $args --source_ip $A_IP $B_IP"
	local _
	for _ in 1 2 3; do
		if perftest_try "$tool" "$srv" "$cli" >"$RAW/$name.txt" 2>&1; then
			gall "sleep 1; pkill -x $tool; true" >/dev/null
			return 0
		fi
		gall "pkill -x $tool; sleep 2; true" >/dev/null
	done
	echo "$BENCH: $name failed 3 times:" >&2
	cat "$RAW/$name.txt" >&2
	return 1
}

# One try: perftest_try TOOL SERVER CLIENT (the commands); in `veth` both
# in one command on g1, in `two` the server on g2, then the client on g1.
perftest_try() {
	if [[ "$TOPO" == two ]]; then
		g2 "$2" && T=$PERFTEST_T g1 "pkill -x $1;$3"
	else
		T=$PERFTEST_T g1 "$2$3"
	fi
}

# (Re)load o2lnd on both sides (devices of the pair, or both guests) and
# wait until A reaches B; `o2lnd_load base` loads the O2_KO_BASE build
# instead.
o2lnd_load() {
	local ko=$KO ctl=$O2CTL
	[[ "${1:-}" == base ]] && ko=$KO_BASE ctl=$O2CTL_BASE
	gall "if grep -q '^o2lnd ' /proc/modules; then rmmod o2lnd; fi; insmod $ko networks=\"$NETS\"" >/dev/null
	g1 "$ctl ping $B_NID --source $A_NID --timeout 20" >/dev/null
}

# The results table, after the rounds: bench_report ARGS... <<'EOF' runs
# the python on stdin with sys.argv[1:] = ARGS, after a prelude that
# defines rounds, dur, a_ip, b_ip, a_dev, b_dev, mtu, topo; v(s) (the floats of
# a space-separated string), med (statistics.median); head(title, what)
# (the title and set-up lines), tail(errs) (the selftest errors and the
# test bed's kernel reports) and write(L) (writes the lines to OUT and
# prints them).
bench_report() {
	local reports body
	reports=$("${TB[@]}" reports 2>&1 || true)
	body=$(cat)
	$PY -c "$BENCH_REPORT_PY
$body" "$OUT" "$BENCH" "$ROUNDS" "$DURATION" "$A_IP" "$B_IP" "$A_DEV" "$B_DEV" "$MTU" "$reports" \
		"$TOPO" "$@"
}
read -r -d '' BENCH_REPORT_PY <<'EOF' || true
import statistics, sys, datetime
(out, bench, rounds, dur, a_ip, b_ip, a_dev, b_dev, mtu, reports, topo) = sys.argv[1:12]
sys.argv[1:] = sys.argv[12:]
v = lambda s: [float(x) for x in s.split()]
med = statistics.median
def head(title, what):
    if topo == "two":
        make = "O2_BENCH_TOPO=two make %s" % bench
        where = ("two guests (QEMU TCG), eth0 to eth0: Soft-RoCE %s on g1's eth0 %s <-> "
                 "%s on g2's eth0 %s" % (a_dev, a_ip, b_dev, b_ip))
    else:
        make = "make %s" % bench
        where = ("one guest (QEMU TCG), two rxe on a veth pair: Soft-RoCE %s on veth0 %s <-> "
                 "%s on veth1 %s" % (a_dev, a_ip, b_dev, b_ip))
    return ["# o2lnd %s (`%s`)\n" % (title, make),
            "%s, %s, MTU %s; %s rounds, medians; %s.\n" % (
                datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                where, mtu, rounds, what)]
def tail(errs):
    return "- selftest errors over all rounds: %d; kernel reports: %s" % (
        sum(errs), "none" if not reports.strip() else "\n\n```\n" + reports.strip() + "\n```")
def write(L):
    text = "\n".join(L) + "\n"
    open(out, "w").write(text)
    print(text)
EOF

# A figure from a raw output file: lat (ib_send_lat t_typical), bw SIZE
# (ib_send_bw messages/s), mbps (ib_write_bw / ib_read_bw BW average, MB/s
# = MiB/s), or a selftest YAML key (latency_us.p50, msg_per_s, rpc_per_s,
# mib_per_s, errors.total, rdma_rpcs).
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
elif kind == "mbps":   # ib_write_bw / ib_read_bw: BW average [MB/s]
    print(perftest_row(text, ["bw average", "bw_average"])[0])
else:                  # selftest key, e.g. latency_us.p50, msg_per_s, errors.total
    print(st(kind))
EOF
}
