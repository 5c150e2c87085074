#!/bin/bash
# make check: host unit tests (ctest), the integration scenarios in QEMU
# guests on Debian's kernel over Soft-RoCE (rxe) and again over Soft-iWARP
# (siw), the DKMS packaging (add/build/install/remove), then our own
# kernels: KUnit suites on the test kernel, o2lnd on the test kernel, and
# the scenarios again on the debug kernel (KASAN, lockdep, kmemleak,
# debugobjects, list debugging).  Ends
# with exactly one line "N passed, N failed" counting every test case of
# every stage (from their XML reports); exits non-zero if any failed.
#
#   testbed/check.sh [--filter GTEST_FILTER]    (FILTER applies to the scenarios)
#
# Stages:
#   1 host unit tests                    results/check/unit.xml
#   2 scenarios, Debian kernel           results/check/itest.xml, results/itest/
#   3 the OneGuestVeth and TwoGuests scenarios on Soft-iWARP (O2_TRANSPORT=siw;
#     siw.ko built for Debian's kernel by testbed/siw-module.sh, cached)
#                                        Siw/<Suite>.<Test>, results/siw/itest/
#   4 DKMS: testbed/dkms-test.sh, add/build/install/remove for the guest
#     kernel's headers (-k <.testbed-abi>)  Dkms.<Case>, results/check/dkms.xml
#   5 kernels: kernel/build.sh test, debug (cached; cold ~10-25 min each)
#   6 o2lnd.ko + o2lnd_kunit.ko against each, in copies of the sources
#     (results/build-test/, results/build-debug/; ./o2lnd.ko is not touched)
#   7 KUnit on the test kernel           KUnit/<suite>.<case>
#     and on the debug kernel            Debug/KUnit/<suite>.<case>
#   8 o2lnd on the test kernel: a ping   TestKernel/<Suite>.<Test>
#   9 scenarios on the debug kernel, kmemleak scan after each
#                                        Debug/<Suite>.<Test>, results/debug/itest/
#
# Env: BUILD (default <top>/build), O2_RESULTS (default <top>/results),
#      O2_CHECK_TIMEOUT (s, default 3000) for the Debian scenario binary,
#      O2_CHECK_KERNELS=0 skips stages 5-9 (a quick check on Debian's kernel),
#      O2_SIW_FILTER (gtest filter for stage 3; default: FILTER, else
#        OneGuestVeth.*:TwoGuests.*), O2_SIW_TIMEOUT (s, default 1200),
#      O2_CHECK_SIW=0 / O2_CHECK_DKMS=0 skip stage 3 / 4,
#      O2_DEBUG_FILTER (gtest filter for stage 9; default: FILTER, else a
#        subset covering every module path once: see stage 9),
#      O2_DEBUG_TIMEOUT (s, default 3000) for the stage 9 binary,
#      O2_DEBUG_SCALE (O2_TIMEOUT_SCALE of stage 9, default 5),
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
NSTAGES=9
[[ "$KERNELS" == 0 ]] && NSTAGES=4
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
		"[ RUN      ]"*|"[       OK ]"*|"[  FAILED  ]"*|"[  SKIPPED ]"*|"[ testbed  ]"*|"[ logs     ]"*|"[ kmemleak ]"*|"[ figure   ]"*)
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
	rm -rf "$RES/hostile"  # the Hostile suites' report (fuzzer counts, privilege, parameters)
	args=()
	[[ -n "$FILTER" ]] && args+=(--gtest_filter="$FILTER")
	O2_KMEMLEAK=${O2_KMEMLEAK:-0} run_itest "$OUT/itest.xml" "$OUT/itest.log" "${O2_CHECK_TIMEOUT:-3000}" "${args[@]}"
	stage_done 2 "log $OUT/itest.log, guest logs $RES/itest/"
	[[ -f "$RES/hostile/report.md" ]] && cp "$RES/hostile/report.md" "$OUT/hostile-report.md"
	[[ -s "$OUT/itest.xml" ]] || missing+=("integration binary wrote no XML report (crashed?)")
else
	say "no integration binary at $ITEST (make userspace)"
	missing+=("integration: no binary")
fi

# ---------------------------------------------------------------- 3 siw
# Debian's kernel has no siw (CONFIG_RDMA_SIW is not set): siw-module.sh
# builds it from Debian's linux-source-6.1 into the test bed's copy of the
# kernel (cached); guests create siw0.. where they would create rxe0..
SFILTER=${O2_SIW_FILTER:-${FILTER:-OneGuestVeth.*:TwoGuests.*}}
stage 3 "scenarios on Soft-iWARP (siw), Debian kernel (filter $SFILTER)"
if [[ "${O2_CHECK_SIW:-1}" == 0 ]]; then
	say "skipped (O2_CHECK_SIW=0)"
elif [[ ! -x "$ITEST" ]]; then
	say "no integration binary at $ITEST (make userspace)"
elif ! "$TOP/testbed/siw-module.sh" > "$OUT/siw-module.log" 2>&1; then
	tail -20 "$OUT/siw-module.log" | sed 's/^/    /'
	missing+=("siw.ko for Debian's kernel: testbed/siw-module.sh failed (log $OUT/siw-module.log)")
else
	say "siw.ko: $(tail -1 "$OUT/siw-module.log")"
	rm -rf "$RES/siw"
	O2_TRANSPORT=siw O2_RESULTS="$RES/siw" O2_KMEMLEAK=${O2_KMEMLEAK:-0} \
		run_itest "$OUT/itest-siw.xml" "$OUT/itest-siw.log" "${O2_SIW_TIMEOUT:-1200}" \
		--gtest_filter="$SFILTER"
	[[ -s "$OUT/itest-siw.xml" ]] || missing+=("siw scenarios: no XML report (crashed?)")
fi
stage_done 3 "log $OUT/itest-siw.log, guest logs $RES/siw/itest/"

# ---------------------------------------------------------------- 4 DKMS
stage 4 "DKMS: add, build, install, remove for $(cat "$TOP/.testbed-abi" 2>/dev/null || echo '?')"
if [[ "${O2_CHECK_DKMS:-1}" == 0 ]]; then
	say "skipped (O2_CHECK_DKMS=0)"
else
	"$TOP/testbed/dkms-test.sh" "$OUT" || true
	[[ -s "$OUT/dkms.xml" ]] || missing+=("DKMS test wrote no XML report (log $OUT/dkms.log)")
fi
stage_done 4 "log $OUT/dkms.log"

if [[ "$KERNELS" != 0 ]]; then
	# ------------------------------------------------------------ 5 kernels
	stage 5 "our kernels (kernel/build.sh test, debug; cached)"
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
	stage_done 5

	# ------------------------------------------------------------ 6 modules
	stage 6 "o2lnd.ko and o2lnd_kunit.ko against each kernel"
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
	stage_done 6

	# ------------------------------------------------------------ 7 KUnit
	stage 7 "KUnit suites (o2lnd_kunit.ko) on the test and debug kernels"
	for f in test debug; do
		[[ -n "${MDIR[$f]:-}" ]] || continue
		t=$SECONDS
		prefix=KUnit/
		scale=1
		[[ $f == debug ]] && prefix=Debug/KUnit/ && scale=${O2_DEBUG_SCALE:-5}
		O2_TIMEOUT_SCALE=$scale "$TOP/testbed/kunit.sh" "${KDIR[$f]}" "${MDIR[$f]}" "$OUT/kunit-$f" "$prefix"
		say "KUnit on the $f kernel: $((SECONDS - t)) s (KTAP in $OUT/kunit-$f/)"
	done
	stage_done 7

	# ------------------------------------------------------------ 8 test kernel
	stage 8 "o2lnd.ko on the test kernel: ping across the veth pair"
	if [[ -n "${MDIR[test]:-}" && -x "$ITEST" ]]; then
		rm -rf "$RES/testkernel"
		O2_KERNEL="${KDIR[test]}" O2_KO="${MDIR[test]}/o2lnd.ko" O2_RESULTS="$RES/testkernel" \
			O2_KMEMLEAK=0 run_itest "$OUT/itest-testkernel.xml" "$OUT/itest-testkernel.log" 600 \
			--gtest_filter='OneGuestVeth.PingAcrossVethPair'
		[[ -s "$OUT/itest-testkernel.xml" ]] || missing+=("test kernel ping: no XML report (crashed?)")
	fi
	stage_done 8 "log $OUT/itest-testkernel.log"

	# ------------------------------------------------------------ 9 debug kernel
	# The debug kernel (KASAN, lockdep, kmemleak scans) runs scenarios ~6x
	# slower than Debian's, so stage 9 runs a subset that exercises every
	# code path of the module once: the basic scenarios, the adversary and
	# the hostile-input suites, the connect race (20 rounds there, as
	# O2_TIMEOUT_SCALE > 1), rmmod in a stuck connect and under traffic, a
	# parameter renegotiation, a phase deadline and the race with a stuck
	# connect.  Not there: TestbedRouter (tests the test bed itself), the
	# dead-peer pacing runs (minutes of pings; their slab check means
	# nothing under KASAN, whose quarantine keeps freed objects allocated)
	# and the other parameter variants of the Connect suites.
	DEBUG_DEFAULT='OneGuestVeth.*:TwoGuests.*:Adversary.*:Hostile.*'
	DEBUG_DEFAULT+=':ConnectVeth.BothSides*:Connect/RmmodFinishes.*/connect'
	DEBUG_DEFAULT+=':Connect/RmmodFinishes.*/ping_flood'
	DEBUG_DEFAULT+=':Connect/EachRejectReason.IsHandled/msg_queue_size'
	DEBUG_DEFAULT+=':Connect/StuckConnect.*/connect*:Connect/RaceWithAStuckConnect.*/route'
	# credits: late Send completions, and the two-way flood (8 s there, as
	# O2_TIMEOUT_SCALE > 1)
	DEBUG_DEFAULT+=':CreditsVeth.LateSendCompletionsNeverCompleteEarly'
	DEBUG_DEFAULT+=':CreditsVeth.CreditsFloodBothWaysKeepsInvariants'
	# bulk: every size boundary both ways, and a dropped bulk message
	# (MRs recovered, nothing leaked)
	DEBUG_DEFAULT+=':BulkVeth.EveryBoundarySizeArrivesIntactBothWays'
	DEBUG_DEFAULT+=':BulkVeth.DroppedBulkMessageFailsCleanly'
	DFILTER=${O2_DEBUG_FILTER:-${FILTER:-$DEBUG_DEFAULT}}
	stage 9 "integration scenarios on the debug kernel, kmemleak after each (filter $DFILTER)"
	if [[ -n "${MDIR[debug]:-}" && -x "$ITEST" ]]; then
		rm -rf "$RES/debug"
		O2_KERNEL="${KDIR[debug]}" O2_KO="${MDIR[debug]}/o2lnd.ko" O2_RESULTS="$RES/debug" \
			O2_TIMEOUT_SCALE="${O2_DEBUG_SCALE:-5}" O2_KMEMLEAK=1 \
			run_itest "$OUT/itest-debug.xml" "$OUT/itest-debug.log" "${O2_DEBUG_TIMEOUT:-3000}" \
			--gtest_filter="$DFILTER"
		[[ -s "$OUT/itest-debug.xml" ]] || missing+=("debug kernel scenarios: no XML report (crashed?)")
	fi
	stage_done 9 "log $OUT/itest-debug.log, guest logs $RES/debug/itest/"
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
reports += [(os.path.join(out, "itest-siw.xml"), "Siw/")]
reports += [(p, "Siw/") for p in sorted(glob.glob(os.path.join(res, "siw", "itest", "*", "*", "out", "*.xml")))]
reports += [(os.path.join(out, "dkms.xml"), "")]
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
# The last line is exactly "N passed, N failed" (what CI reads); tests
# skipped by design (e.g. a debug-kernel-only case on Debian's kernel)
# are reported on the line before it.
if skipped:
    print(f"({skipped} skipped by design, not counted)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or passed == 0 else 0)
PY
