# Shared by testbed/bench-msg.sh and testbed/bench-bulk.sh; sourced, not run.
# The sourcing script sets TOP (the top of the tree), BENCH (its name:
# bench-msg, bench-bulk) and `set -euo pipefail`, then calls
#   bench_args "$@"      --rounds R (ROUNDS, 3), --duration S (DURATION,
#                        10), --out FILE (OUT, <top>/results/BENCH.md)
#   bench_start SUMMARY  builds o2ctl and o2-testbed, copies the module,
#                        boots the `veth` topology in <O2_RESULTS>/BENCH
#                        and sets A_IP, B_IP, A_DEV, B_DEV, MTU, A_NID,
#                        B_NID (SUMMARY ends its progress line)
# and uses say, g1, perftest, fig, o2lnd_load and bench_report below.
# Env: BUILD, O2_KO, O2_KO_BASE, O2_RESULTS, O2_KERNEL, PERFTEST_EVENTS (see
# the scripts).  O2_KO_BASE: a second build of the module (the one before
# a change) that bench-msg measures beside O2_KO in the same boot, round
# by round (o2lnd_load base); O2_O2CTL_BASE: the o2ctl that speaks to it,
# when it predates the current ioctl ABI (default: the one of BUILD).  Both
# must lie outside /tmp (the guest sees the host's root, not its /tmp).
# PERFTEST_T, the timeout of one perftest run in seconds (300),
# is not read from the environment: a script may set it after sourcing.
# shellcheck shell=bash disable=SC2034  # globals for the sourcing script

PERFTEST_EVENTS=${PERFTEST_EVENTS:-1}
PERFTEST_T=300
# " -e" where perftest's ib_send_* sleep on CQ events (for the tables).
EV=""
if [[ "$PERFTEST_EVENTS" == 1 ]]; then EV=" -e"; fi
PY=/usr/bin/python3

bench_args() {
	ROUNDS=3
	DURATION=10
	OUT="$TOP/results/$BENCH.md"
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

cleanup() {
	"${TB[@]}" down >/dev/null 2>&1 || true
	rm -f "$KO" "${KO_BASE:-}"
}

bench_start() { # SUMMARY
	BUILD="${BUILD:-$TOP/build}"
	RES="${O2_RESULTS:-$TOP/results}"
	DIR="$RES/$BENCH"
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

	say "booting the veth topology (state in $DIR)"
	"${TB[@]}" up veth >/dev/null
	# The addresses and devices of the pair, as the guest has them.
	A_IP=$(g1 "ip -4 -o addr show dev veth0 | awk '{print \$4}' | cut -d/ -f1")
	B_IP=$(g1 "ip -4 -o addr show dev veth1 | awk '{print \$4}' | cut -d/ -f1")
	A_DEV=$(g1 "rdma link show | awk '\$NF == \"veth0\" {split(\$2, a, \"/\"); print a[1]}'")
	B_DEV=$(g1 "rdma link show | awk '\$NF == \"veth1\" {split(\$2, a, \"/\"); print a[1]}'")
	MTU=$(g1 "cat /sys/class/net/veth0/mtu")
	[[ -n "$A_IP" && -n "$B_IP" && -n "$A_DEV" && -n "$B_DEV" ]] ||
		{ echo "$BENCH: veth0/veth1 addresses or RDMA devices not found" >&2; exit 1; }
	A_NID="$A_IP@o2ib0"
	B_NID="$B_IP@o2ib0"
	say "g1: veth0 $A_IP ($A_DEV) <-> veth1 $B_IP ($B_DEV), MTU $MTU; $ROUNDS rounds, ${DURATION} s selftests, $1"
}

# perftest: server on B's device in the background, client on A's; a few
# tries (the server needs a moment to listen).
perftest() { # NAME SIZE TOOL ARGS... -> $RAW/NAME.txt
	local name=$1 size=$2 tool=$3 port=$((18515 + RANDOM % 1000))
	shift 3
	local args="-R -s $size -p $port $*"
	# -e (sleep on CQ events) only where perftest has it: ib_write_bw and
	# ib_read_bw refuse it ("Events feature not available on WRITE verb").
	if [[ "$PERFTEST_EVENTS" == 1 && "$tool" == ib_send_* ]]; then args+=" -e"; fi
	local cmd="pkill -x $tool; ($tool -d $B_DEV $args >/tmp/$name-server.txt 2>&1 &); sleep 2;"
	cmd+=" $tool -d $A_DEV $args --source_ip $A_IP $B_IP"
	local _
	for _ in 1 2 3; do
		if T=$PERFTEST_T g1 "$cmd" >"$RAW/$name.txt" 2>&1; then
			g1 "sleep 1; pkill -x $tool; true" >/dev/null
			return 0
		fi
		g1 "pkill -x $tool; sleep 2; true" >/dev/null
	done
	echo "$BENCH: $name failed 3 times:" >&2
	cat "$RAW/$name.txt" >&2
	return 1
}

# (Re)load o2lnd on both devices of the pair and wait until A reaches B;
# `o2lnd_load base` loads the O2_KO_BASE build instead.
o2lnd_load() {
	local ko=$KO ctl=$O2CTL
	[[ "${1:-}" == base ]] && ko=$KO_BASE ctl=$O2CTL_BASE
	g1 "if grep -q '^o2lnd ' /proc/modules; then rmmod o2lnd; fi; insmod $ko networks=\"o2ib0(veth0,veth1)\"" >/dev/null
	g1 "$ctl ping $B_NID --source $A_NID --timeout 20" >/dev/null
}

# The results table, after the rounds: bench_report ARGS... <<'EOF' runs
# the python on stdin with sys.argv[1:] = ARGS, after a prelude that
# defines rounds, dur, a_ip, b_ip, a_dev, b_dev, mtu; v(s) (the floats of
# a space-separated string), med (statistics.median); head(title, what)
# (the title and set-up lines), tail(errs) (the selftest errors and the
# test bed's kernel reports) and write(L) (writes the lines to OUT and
# prints them).
bench_report() {
	local reports body
	reports=$("${TB[@]}" reports 2>&1 || true)
	body=$(cat)
	$PY -c "$BENCH_REPORT_PY
$body" "$OUT" "$BENCH" "$ROUNDS" "$DURATION" "$A_IP" "$B_IP" "$A_DEV" "$B_DEV" "$MTU" "$reports" "$@"
}
read -r -d '' BENCH_REPORT_PY <<'EOF' || true
import statistics, sys, datetime
(out, bench, rounds, dur, a_ip, b_ip, a_dev, b_dev, mtu, reports) = sys.argv[1:11]
sys.argv[1:] = sys.argv[11:]
v = lambda s: [float(x) for x in s.split()]
med = statistics.median
def head(title, what):
    return ["# o2lnd %s (`make %s`)\n" % (title, bench),
            "%s, one guest (QEMU TCG), Soft-RoCE %s on veth0 %s <-> %s on veth1 %s, MTU %s; "
            "%s rounds, medians; %s.\n" % (
                datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                a_dev, a_ip, b_dev, b_ip, mtu, rounds, what)]
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
