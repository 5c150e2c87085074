#!/bin/bash
# Run o2lnd's KUnit suites in a guest and turn their KTAP into JUnit XML.
#
#   testbed/kunit.sh KERNEL MODDIR OUTDIR [PREFIX]
#
# KERNEL: a kernel folder with CONFIG_KUNIT (kernel/build.sh test|debug).
# MODDIR: where o2lnd_kunit.ko was built against that kernel.
# Boots a "plain" guest (state in OUTDIR/tb), loads o2lnd_kunit.ko (its
# suites run at load), copies /sys/kernel/debug/kunit/<suite>/results to
# OUTDIR/<suite>.ktap, unloads it, checks the kernel log for reports
# (KASAN, lockdep, WARNING... : a debug kernel checks the tests too), and
# writes OUTDIR/kunit.xml: one testcase per KUnit case, named
# PREFIX<suite>.<case>.  A suite that the sources declare (kunit/*.c,
# `.name = "..."`) but that produced no results, a suite that stopped
# before its plan, and kernel reports are failures too.
# Prints per-suite and total counts; exit 1 if anything failed.
set -uo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KERNEL=${1:?usage: testbed/kunit.sh KERNEL MODDIR OUTDIR [PREFIX]}
[[ -d "$KERNEL" ]] && KERNEL=$(realpath "$KERNEL")
MODDIR=$(realpath "${2:?}")
OUTDIR=${3:?}
PREFIX=${4:-KUnit/}
TB="$TOP/testbed/o2-testbed"
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
tb=("$TB" --dir "$OUTDIR/tb")
scale=${O2_TIMEOUT_SCALE:-1}
problems=()

if ! "${tb[@]}" up plain --kernel "$KERNEL" >"$OUTDIR/boot.log" 2>&1; then
	problems+=("guest did not boot (see $OUTDIR/boot.log)")
else
	# The suites run inside insmod; a debug kernel is ~5x slower.
	"${tb[@]}" run -t $((120 * ${scale%.*})) g1 "
		set -e
		insmod '$MODDIR/o2lnd_kunit.ko'
		for d in /sys/kernel/debug/kunit/*/; do
			s=\$(basename \$d)
			cp \$d/results /out/\$s.ktap
		done
		rmmod o2lnd_kunit
		dmesg -t > /out/dmesg-kunit.txt" >"$OUTDIR/run.log" 2>&1 ||
		problems+=("loading/unloading o2lnd_kunit.ko failed: $(head -c 500 "$OUTDIR/run.log")")
	"${tb[@]}" reports >"$OUTDIR/reports.log" 2>&1 ||
		problems+=("kernel reports: $(head -c 2000 "$OUTDIR/reports.log")")
	"${tb[@]}" dmesg g1 >"$OUTDIR/dmesg.txt" 2>&1 || true
	cp "$OUTDIR/tb/g1/out/"*.ktap "$OUTDIR/tb/g1/out/dmesg-kunit.txt" "$OUTDIR/" 2>/dev/null || true
	"${tb[@]}" down >/dev/null 2>&1 || true
fi

# Human-readable view by KUnit's own parser (from the kernel's source tree).
kunit_py="$KERNEL/src/tools/testing/kunit/kunit.py"
if [[ -f "$kunit_py" ]] && ls "$OUTDIR"/*.ktap >/dev/null 2>&1; then
	for f in "$OUTDIR"/*.ktap; do
		python3 "$kunit_py" parse <"$f" 2>&1 || true
	done >"$OUTDIR/kunit-parse.log"
fi

expected=$(grep -ho '\.name = "[a-z0-9_]*"' "$TOP"/kunit/*.c | sed 's/.*"\(.*\)"/\1/' | sort -u)
python3 - "$OUTDIR" "$PREFIX" "$expected" "${problems[@]}" <<'PY'
import glob, os, re, sys
from xml.sax.saxutils import quoteattr, escape

out, prefix, expected, problems = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
cases = []          # (classname, name, status, text)
suites_seen = set()

def blocks_from_dmesg(path):
    """The full KTAP of each suite as printed to the kernel log (the
    debugfs results file loses lines of chatty failures: 6.1 keeps 512
    bytes of log per case)."""
    out, cur, name = {}, None, None
    if not os.path.exists(path):
        return out
    for l in open(path, errors="replace").read().splitlines():
        l = l.rstrip("\r")
        m = re.match(r"^    # Subtest: (\S+)$", l)
        if m:
            name, cur = m.group(1), []
            continue
        if cur is None:
            continue
        if re.match(r"^(not ok|ok) \d+ " + re.escape(name) + r"\b", l):
            out[name] = cur
            cur = None
            continue
        cur.append(l)
    return out

blocks = blocks_from_dmesg(os.path.join(out, "dmesg-kunit.txt"))
for path in sorted(glob.glob(os.path.join(out, "*.ktap"))):
    suite = os.path.basename(path)[:-5]
    if suite not in blocks:
        blocks[suite] = open(path, errors="replace").read().splitlines()
for suite, lines in sorted(blocks.items()):
    if not suite.startswith("o2lnd") and suite not in expected:
        continue
    suites_seen.add(suite)
    plan, n, nums = None, 0, set()
    for i, l in enumerate(lines):
        # Case lines are indented by 4 (one subtest level); deeper levels
        # are parameters of a case and roll up into it.
        m = re.match(r"^    1\.\.(\d+)\s*$", l)
        if m:
            plan = int(m.group(1))
            continue
        m = re.match(r"^    (not ok|ok) (\d+) (\S+)(.*)$", l)
        if not m:
            continue
        n += 1
        nums.add(int(m.group(2)))
        status = "fail" if m.group(1) == "not ok" else "pass"
        if re.search(r"#\s*SKIP", m.group(4), re.I):
            status = "skip"
        text = ""
        if status == "fail":
            # the expectation messages precede the result line
            j = i - 1
            msg = []
            while j >= 0 and not re.match(r"^    (not ok|ok) ", lines[j]) and not re.match(r"^    1\.\.", lines[j]):
                msg.insert(0, lines[j].strip())
                j -= 1
            text = "\n".join(msg[-60:])
        cases.append((prefix + suite, m.group(3), status, text))
    if plan is None or n != plan:
        cases.append((prefix + suite, "suite_completed", "fail",
                      f"plan {plan}, {n} results (none for cases "
                      f"{sorted(set(range(1, (plan or 0) + 1)) - nums)}): the suite stopped early "
                      "(crash?) or its log overflowed"))
for s in expected:
    if s not in suites_seen:
        cases.append((prefix + s, "suite_ran", "fail", "no results for this suite"))
for p in problems:
    cases.append((prefix + "run", "guest", "fail", p))

with open(os.path.join(out, "kunit.xml"), "w") as f:
    nf = sum(c[2] == "fail" for c in cases)
    f.write(f'<?xml version="1.0"?>\n<testsuites tests="{len(cases)}" failures="{nf}">\n')
    f.write(f'<testsuite name={quoteattr(prefix + "kunit")} tests="{len(cases)}" failures="{nf}">\n')
    for cls, name, status, text in cases:
        f.write(f'  <testcase classname={quoteattr(cls)} name={quoteattr(name)}>')
        if status == "fail":
            f.write(f'<failure message="failed">{escape(text)}</failure>')
        elif status == "skip":
            f.write("<skipped/>")
        f.write("</testcase>\n")
    f.write("</testsuite>\n</testsuites>\n")

by = {}
for cls, name, status, _ in cases:
    by.setdefault(cls, {"pass": 0, "fail": 0, "skip": 0})[status] += 1
for cls, c in sorted(by.items()):
    print(f"    {cls}: {c['pass']} passed, {c['fail']} failed" + (f", {c['skip']} skipped" if c["skip"] else ""))
for cls, name, status, text in cases:
    if status == "fail":
        print(f"    FAILED {cls}.{name}")
        for l in text.splitlines()[:20]:
            print(f"        {l}")
tp = sum(c[2] == "pass" for c in cases)
tf = sum(c[2] == "fail" for c in cases)
ts = sum(c[2] == "skip" for c in cases)
print(f"    {prefix}total: {len(cases)} cases, {tp} passed, {tf} failed, {ts} skipped")
sys.exit(1 if tf or not tp else 0)
PY
