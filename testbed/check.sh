#!/bin/bash
# make check: host unit tests (ctest), then the integration scenarios in
# QEMU guests.  Ends with exactly one line "N passed, N failed" counting every
# test case of both (from their XML reports); exits non-zero if any failed.
#
#   testbed/check.sh [--filter GTEST_FILTER]    (FILTER applies to the scenarios)
# Env: BUILD (default <top>/build), O2_RESULTS (default <top>/results),
#      O2_CHECK_TIMEOUT (s, default 3000) for the scenario binary, and what the
#      test bed reads (O2_KERNEL, O2_TIMEOUT_SCALE, O2_KO, ...: testbed/README.md).
set -uo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$TOP/build}"
RES="${O2_RESULTS:-$TOP/results}"
OUT="$RES/check"
FILTER=
while [[ $# -gt 0 ]]; do
	case "$1" in
	--filter) FILTER="${2:-}"; shift 2 ;;
	--filter=*) FILTER="${1#--filter=}"; shift ;;
	*) echo "usage: testbed/check.sh [--filter GTEST_FILTER]" >&2; exit 2 ;;
	esac
done
T0=$SECONDS
say() { printf '[check %4ds] %s\n' $((SECONDS - T0)) "$*"; }
rm -rf "$OUT"
mkdir -p "$OUT"
missing=()

# ---------------------------------------------------------------- unit tests
say "stage 1/2: host unit tests (ctest in $BUILD)"
if [[ -f "$BUILD/CTestTestfile.cmake" ]]; then
	t=$SECONDS
	ctest --test-dir "$BUILD" -j"$(nproc)" --timeout 300 --output-on-failure \
		--output-junit "$OUT/unit.xml" > "$OUT/unit.log" 2>&1
	grep -E 'tests passed|tests failed|\*\*\*|\(Failed\)|Not Run' "$OUT/unit.log" | sed 's/^/    /' | tail -40
	say "unit tests done in $((SECONDS - t)) s (log $OUT/unit.log)"
else
	say "no build in $BUILD (make userspace)"
	missing+=("unit tests: no build")
fi

# ---------------------------------------------------------------- scenarios
ITEST="$BUILD/userspace-tests/integration/o2lnd_itest"
say "stage 2/2: integration scenarios in QEMU guests${FILTER:+ (filter $FILTER)}"
if [[ -x "$ITEST" ]]; then
	t=$SECONDS
	rm -f "$RES"/itest/*/*/out/*.xml  # guest-side reports of earlier runs
	args=(--gtest_output="xml:$OUT/itest.xml" --gtest_color=no)
	[[ -n "$FILTER" ]] && args+=(--gtest_filter="$FILTER")
	# Prefix each test's result with the wall clock so far.
	# A hung scenario must not eat CI's budget: guests die with the binary.
	timeout --signal=KILL "${O2_CHECK_TIMEOUT:-3000}" "$ITEST" "${args[@]}" 2>&1 | tee "$OUT/itest.log" | while IFS= read -r l; do
		case "$l" in
		"[ RUN      ]"*|"[       OK ]"*|"[  FAILED  ]"*|"[  SKIPPED ]"*|"[ testbed  ]"*|"[ logs     ]"*)
			printf '[check %4ds] %s\n' $((SECONDS - T0)) "$l" ;;
		*) printf '    %s\n' "$l" ;;
		esac
	done
	say "scenarios done in $((SECONDS - t)) s (log $OUT/itest.log, guest logs $RES/itest/)"
	[[ -s "$OUT/itest.xml" ]] || missing+=("integration binary wrote no XML report (crashed?)")
else
	say "no integration binary at $ITEST (make userspace)"
	missing+=("integration: no binary")
fi

# ---------------------------------------------------------------- summary
python3 - "$OUT" "$RES" "${missing[@]}" <<'PY'
import glob, os, sys, xml.etree.ElementTree as ET
out, res, missing = sys.argv[1], sys.argv[2], sys.argv[3:]
passed = failed = skipped = 0
failures = []
# unit tests, the host-side scenarios, and gtest binaries run inside guests
# (e.g. the guest ABI tests, written to the guest's /out)
reports = [os.path.join(out, "unit.xml"), os.path.join(out, "itest.xml")]
reports += sorted(glob.glob(os.path.join(res, "itest", "*", "*", "out", "*.xml")))
for p in reports:
    name = os.path.relpath(p, res)
    if not os.path.exists(p):
        continue
    try:
        root = ET.parse(p).getroot()
    except ET.ParseError as e:
        failures.append(f"{name}: unreadable ({e})")
        failed += 1
        continue
    where = "" if os.path.dirname(p) == out else f"[in guest: {name}] "
    for tc in root.iter("testcase"):
        cls = tc.get("classname", "")
        n = where + (f"{cls}.{tc.get('name')}" if cls and cls != tc.get("name") else tc.get("name"))
        if tc.find("failure") is not None or tc.find("error") is not None or tc.get("status") == "fail":
            failed += 1
            failures.append(n)
        elif tc.find("skipped") is not None or tc.get("result") == "skipped" or tc.get("status") in ("notrun", "disabled"):
            skipped += 1
        else:
            passed += 1
for m in missing:
    failed += 1
    failures.append(m)
for f in failures:
    print(f"    FAILED: {f}")
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or passed == 0 else 0)
PY
