#!/bin/bash
# make check: host unit tests (ctest), the integration scenarios in QEMU
# guests on Debian's kernel, then our own kernels: KUnit suites on the test
# kernel, o2lnd on the test kernel, and the scenarios again on the debug
# kernel (KASAN, lockdep, kmemleak, debugobjects, list debugging).  Ends
# with exactly one line "N passed, N failed" counting every test case of
# every stage (from their XML reports); exits non-zero if any failed.
#
#   testbed/check.sh [--filter GTEST_FILTER]    (FILTER applies to the scenarios)
#
# Stages:
#   1 host unit tests                    results/check/unit.xml
#   2 scenarios, Debian kernel           results/check/itest.xml, results/itest/
#   3 kernels: kernel/build.sh test, debug (cached; cold ~10-25 min each)
#   4 o2lnd.ko + o2lnd_kunit.ko against each, in copies of the sources
#     (results/build-test/, results/build-debug/; ./o2lnd.ko is not touched)
#   5 KUnit on the test kernel           KUnit/<suite>.<case>
#     and on the debug kernel            Debug/KUnit/<suite>.<case>
#   6 o2lnd on the test kernel: a ping   TestKernel/<Suite>.<Test>
#   7 scenarios on the debug kernel, kmemleak scan after each
#                                        Debug/<Suite>.<Test>, results/debug/itest/
#
# Env: BUILD (default <top>/build), O2_RESULTS (default <top>/results),
#      O2_CHECK_TIMEOUT (s, default 3000) for the Debian scenario binary,
#      O2_CHECK_KERNELS=0 skips stages 3-7 (a quick check on Debian's kernel),
#      O2_DEBUG_FILTER (gtest filter for stage 7; default: FILTER, else every
#        suite but TestbedRouter, which tests the test bed, not o2lnd),
#      O2_DEBUG_TIMEOUT (s, default 3000) for the stage 7 binary,
#      O2_DEBUG_SCALE (O2_TIMEOUT_SCALE of stage 7, default 5),
#      and what the test bed reads (O2_CACHE, ...: testbed/README.md).
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
KERNELS=${O2_CHECK_KERNELS:-1}
NSTAGES=7
[[ "$KERNELS" == 0 ]] && NSTAGES=2
T0=$SECONDS
say() { printf '[check %4ds] %s\n' $((SECONDS - T0)) "$*"; }
stage_t=0
stage() { stage_t=$SECONDS; say "stage $1/$NSTAGES: $2"; }
stage_done() { say "stage $1 done in $((SECONDS - stage_t)) s${2:+ ($2)}"; }
rm -rf "$OUT"
mkdir -p "$OUT"
missing=()
ITEST="$BUILD/userspace-tests/integration/o2lnd_itest"

# Runs the scenario binary; each result line gets the wall clock so far.
# run_itest XML LOG TIMEOUT [gtest args...]  (env for the binary set by the caller)
run_itest() {
	local xml=$1 log=$2 limit=$3
	shift 3
	# A hung scenario must not eat CI's budget: guests die with the binary.
	timeout --signal=KILL "$limit" "$ITEST" --gtest_output="xml:$xml" --gtest_color=no "$@" 2>&1 |
		tee "$log" | while IFS= read -r l; do
		case "$l" in
		"[ RUN      ]"*|"[       OK ]"*|"[  FAILED  ]"*|"[  SKIPPED ]"*|"[ testbed  ]"*|"[ logs     ]"*|"[ kmemleak ]"*)
			printf '[check %4ds] %s\n' $((SECONDS - T0)) "$l" ;;
		*) printf '    %s\n' "$l" ;;
		esac
	done
}

# ---------------------------------------------------------------- 1 unit tests
stage 1 "host unit tests (ctest in $BUILD)"
if [[ -f "$BUILD/CTestTestfile.cmake" ]]; then
	ctest --test-dir "$BUILD" -j"$(nproc)" --timeout 300 --output-on-failure \
		--output-junit "$OUT/unit.xml" > "$OUT/unit.log" 2>&1
	grep -E 'tests passed|tests failed|\*\*\*|\(Failed\)|Not Run' "$OUT/unit.log" | sed 's/^/    /' | tail -40
	stage_done 1 "log $OUT/unit.log"
else
	say "no build in $BUILD (make userspace)"
	missing+=("unit tests: no build")
fi

# Style gates, counted as test cases (results/check/style.xml):
# clang-format on the C++ sources, checkpatch --strict on the kernel C.
style_case() {  # style_case NAME LOG CMD...
	local name=$1 log=$2
	shift 2
	if "$@" > "$log" 2>&1; then
		printf '  <testcase classname="Style" name="%s"/>\n' "$name"
		say "[       OK ] Style.$name" >&2
	else
		printf '  <testcase classname="Style" name="%s"><failure message="see %s"/></testcase>\n' "$name" "$log"
		say "[  FAILED  ] Style.$name (log $log)" >&2
		sed 's/^/    /' "$log" | head -20 >&2
	fi
}
clang_format_clean() {
	git -C "$TOP" ls-files '*.cc' '*.h' | grep -v '^module/\|^kunit/\|^include/' |
		(cd "$TOP" && xargs clang-format --dry-run -Werror)
}
checkpatch_clean() {
	local out
	out=$("$TOP/scripts/checkpatch.sh" 2>&1) || { echo "$out"; return 1; }
	[[ -z "$out" ]] || { echo "$out"; return 1; }
}
{
	echo '<testsuites><testsuite name="Style">'
	style_case ClangFormatClean "$OUT/clang-format.log" clang_format_clean
	style_case CheckpatchStrictClean "$OUT/checkpatch.log" checkpatch_clean
	echo '</testsuite></testsuites>'
} > "$OUT/style.xml"

# ---------------------------------------------------------------- 2 scenarios
stage 2 "integration scenarios in QEMU guests, Debian kernel${FILTER:+ (filter $FILTER)}"
if [[ -x "$ITEST" ]]; then
	rm -f "$RES"/itest/*/*/out/*.xml  # guest-side reports of earlier runs
	args=()
	[[ -n "$FILTER" ]] && args+=(--gtest_filter="$FILTER")
	O2_KMEMLEAK=${O2_KMEMLEAK:-0} run_itest "$OUT/itest.xml" "$OUT/itest.log" "${O2_CHECK_TIMEOUT:-3000}" "${args[@]}"
	stage_done 2 "log $OUT/itest.log, guest logs $RES/itest/"
	[[ -s "$OUT/itest.xml" ]] || missing+=("integration binary wrote no XML report (crashed?)")
else
	say "no integration binary at $ITEST (make userspace)"
	missing+=("integration: no binary")
fi

if [[ "$KERNELS" != 0 ]]; then
	# ------------------------------------------------------------ 3 kernels
	stage 3 "our kernels (kernel/build.sh test, debug; cached)"
	declare -A KDIR
	for f in test debug; do
		t=$SECONDS
		# its heartbeat (every 30 s of a cold build) shows on the console
		"$TOP/kernel/build.sh" "$f" 2>&1 | tee "$OUT/kernel-$f.log" | sed 's/^/    /'
		if [[ ${PIPESTATUS[0]} -eq 0 && -d "$(tail -1 "$OUT/kernel-$f.log")" ]]; then
			KDIR[$f]=$(tail -1 "$OUT/kernel-$f.log")
			say "$f kernel: ${KDIR[$f]} ($((SECONDS - t)) s)"
		else
			tail -20 "$OUT/kernel-$f.log" | sed 's/^/    /'
			say "$f kernel: build FAILED ($((SECONDS - t)) s, log $OUT/kernel-$f.log)"
			missing+=("kernel/build.sh $f failed (log $OUT/kernel-$f.log)")
		fi
	done
	stage_done 3

	# ------------------------------------------------------------ 4 modules
	stage 4 "o2lnd.ko and o2lnd_kunit.ko against each kernel"
	declare -A MDIR
	for f in test debug; do
		[[ -n "${KDIR[$f]:-}" ]] || continue
		d="$RES/build-$f"
		rm -rf "$d"
		mkdir -p "$d/module" "$d/kunit"
		cp "$TOP/Kbuild" "$d/"
		cp -r "$TOP/include" "$d/"
		cp "$TOP"/module/*.[ch] "$d/module/"
		cp "$TOP"/kunit/*.[ch] "$d/kunit/"
		if make -C "${KDIR[$f]}/src" O="${KDIR[$f]}/obj" M="$d" modules > "$d/build.log" 2>&1 &&
			[[ -f "$d/o2lnd.ko" && -f "$d/o2lnd_kunit.ko" ]]; then
			MDIR[$f]=$d
			say "$f: $d/o2lnd.ko, $d/o2lnd_kunit.ko"
		else
			tail -20 "$d/build.log" | sed 's/^/    /'
			missing+=("building the modules against the $f kernel failed (log $d/build.log)")
		fi
	done
	stage_done 4

	# ------------------------------------------------------------ 5 KUnit
	stage 5 "KUnit suites (o2lnd_kunit.ko) on the test and debug kernels"
	for f in test debug; do
		[[ -n "${MDIR[$f]:-}" ]] || continue
		t=$SECONDS
		prefix=KUnit/
		scale=1
		[[ $f == debug ]] && prefix=Debug/KUnit/ && scale=${O2_DEBUG_SCALE:-5}
		O2_TIMEOUT_SCALE=$scale "$TOP/testbed/kunit.sh" "${KDIR[$f]}" "${MDIR[$f]}" "$OUT/kunit-$f" "$prefix"
		say "KUnit on the $f kernel: $((SECONDS - t)) s (KTAP in $OUT/kunit-$f/)"
	done
	stage_done 5

	# ------------------------------------------------------------ 6 test kernel
	stage 6 "o2lnd.ko on the test kernel: ping across the veth pair"
	if [[ -n "${MDIR[test]:-}" && -x "$ITEST" ]]; then
		rm -rf "$RES/testkernel"
		O2_KERNEL="${KDIR[test]}" O2_KO="${MDIR[test]}/o2lnd.ko" O2_RESULTS="$RES/testkernel" \
			O2_KMEMLEAK=0 run_itest "$OUT/itest-testkernel.xml" "$OUT/itest-testkernel.log" 600 \
			--gtest_filter='OneGuestVeth.PingAcrossVethPair'
		[[ -s "$OUT/itest-testkernel.xml" ]] || missing+=("test kernel ping: no XML report (crashed?)")
	fi
	stage_done 6 "log $OUT/itest-testkernel.log"

	# ------------------------------------------------------------ 7 debug kernel
	# The TestbedRouter suite tests the test bed itself (no o2lnd; timing
	# assertions made for TCG on a plain kernel): not on the debug kernel.
	DFILTER=${O2_DEBUG_FILTER:-${FILTER:--TestbedRouter.*}}
	stage 7 "integration scenarios on the debug kernel, kmemleak after each (filter $DFILTER)"
	if [[ -n "${MDIR[debug]:-}" && -x "$ITEST" ]]; then
		rm -rf "$RES/debug"
		O2_KERNEL="${KDIR[debug]}" O2_KO="${MDIR[debug]}/o2lnd.ko" O2_RESULTS="$RES/debug" \
			O2_TIMEOUT_SCALE="${O2_DEBUG_SCALE:-5}" O2_KMEMLEAK=1 \
			run_itest "$OUT/itest-debug.xml" "$OUT/itest-debug.log" "${O2_DEBUG_TIMEOUT:-3000}" \
			--gtest_filter="$DFILTER"
		[[ -s "$OUT/itest-debug.xml" ]] || missing+=("debug kernel scenarios: no XML report (crashed?)")
	fi
	stage_done 7 "log $OUT/itest-debug.log, guest logs $RES/debug/itest/"
fi

# ---------------------------------------------------------------- summary
say "summary (whole check: $((SECONDS - T0)) s)"
python3 - "$OUT" "$RES" "${missing[@]}" <<'PY'
import glob, os, sys, xml.etree.ElementTree as ET
out, res, missing = sys.argv[1], sys.argv[2], sys.argv[3:]
passed = failed = skipped = 0
failures = []
kunit = {}
# (report, prefix): unit tests, the scenarios per kernel, gtest binaries run
# inside guests (the guest ABI tests, written to the guest's /out), KUnit.
reports = [(os.path.join(out, "unit.xml"), ""), (os.path.join(out, "style.xml"), ""), (os.path.join(out, "itest.xml"), "")]
reports += [(p, "") for p in sorted(glob.glob(os.path.join(res, "itest", "*", "*", "out", "*.xml")))]
reports += [(os.path.join(out, "itest-testkernel.xml"), "TestKernel/")]
reports += [(p, "TestKernel/") for p in sorted(glob.glob(os.path.join(res, "testkernel", "itest", "*", "*", "out", "*.xml")))]
reports += [(os.path.join(out, "itest-debug.xml"), "Debug/")]
reports += [(p, "Debug/") for p in sorted(glob.glob(os.path.join(res, "debug", "itest", "*", "*", "out", "*.xml")))]
reports += [(os.path.join(out, "kunit-test", "kunit.xml"), ""), (os.path.join(out, "kunit-debug", "kunit.xml"), "")]
for p, prefix in reports:
    name = os.path.relpath(p, res)
    if not os.path.exists(p):
        continue
    try:
        root = ET.parse(p).getroot()
    except ET.ParseError as e:
        failures.append(f"{name}: unreadable ({e})")
        failed += 1
        continue
    is_kunit = os.path.basename(p) == "kunit.xml"
    where = "" if os.path.dirname(p) == out or is_kunit else f"[in guest: {name}] "
    for tc in root.iter("testcase"):
        cls = tc.get("classname", "")
        n = prefix + where + (f"{cls}.{tc.get('name')}" if cls and cls != tc.get("name") else tc.get("name"))
        k = None
        if is_kunit:
            k = kunit.setdefault(cls.split("KUnit/")[0] + "KUnit", [0, 0, 0])
        if tc.find("failure") is not None or tc.find("error") is not None or tc.get("status") == "fail":
            failed += 1
            failures.append(n)
            if k: k[1] += 1
        elif tc.find("skipped") is not None or tc.get("result") == "skipped" or tc.get("status") in ("notrun", "disabled"):
            skipped += 1
            if k: k[2] += 1
        else:
            passed += 1
            if k: k[0] += 1
for m in missing:
    failed += 1
    failures.append(m)
for f in failures:
    print(f"    FAILED: {f}")
for k, (p, f, s) in sorted(kunit.items()):
    print(f"{k} totals: {p + f + s} cases, {p} passed, {f} failed" + (f", {s} skipped" if s else ""))
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or passed == 0 else 0)
PY
