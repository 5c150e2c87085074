#!/bin/bash
# ctest ProbesDecideForEachGuestKernel: runs the feature probes
# (scripts/o2-probe.sh) against the headers of every guest kernel the test
# bed prepared (.testbed-abi, .testbed-abi-debian612; the headers unpacked
# into $O2_CACHE/kernels) and checks what they
# decide: every probe yes on both (the tested kernels take no fallback),
# the canary no (a missing API is detected), the cache answers a second
# run without probing, and O2_PROBE_FORCE turns a result into its
# fallback's macro.  No headers at all: exits 77 (skipped).
set -uo pipefail
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for f in "$TOP/.testbed-abi" "$TOP/.testbed-abi-debian612"; do
	[[ -f "$f" ]] || continue
	rel=$(cat "$f")
	# the headers setup unpacked into $O2_CACHE/kernels
	# shellcheck source=scripts/o2-apt.sh
	hdr=$( (. "$TOP/scripts/o2-apt.sh" && o2_linux_headers "$rel") 2> "$tmp/headers.err") ||
		{ fail "$rel: no headers ($(cat "$tmp/headers.err"))"; continue; }
	[[ -d "$hdr" ]] || { fail "$rel: no headers at $hdr"; continue; }
	n=$((n + 1))
	out="$tmp/$rel.h"
	"$TOP/scripts/o2-probe.sh" "$hdr" "$out" > "$tmp/$rel.txt" 2>&1 || { fail "$rel: o2-probe.sh failed"; cat "$tmp/$rel.txt"; continue; }
	cat "$tmp/$rel.txt" | sed "s/^/[$rel] /"
	for p in rdma_connect_locked rdma_reject_reason ib_client_add_int rdma_set_ack_timeout \
		ib_alloc_cq_ctx ib_map_mr_sg_offset get_random_u32_below; do
		m="O2_HAVE_$(tr '[:lower:]' '[:upper:]' <<<"$p")"
		grep -q "^#define $m 1$" "$out" || fail "$rel: $p should be available ($m not defined)"
		grep -q "^o2lnd: probe $p: yes" "$tmp/$rel.txt" || fail "$rel: no 'o2lnd: probe $p: yes' line"
	done
	grep -q '^#define O2_HAVE_CANARY_ABSENT' "$out" && fail "$rel: the canary compiled"
	t0=$(date +%s%N)
	"$TOP/scripts/o2-probe.sh" "$hdr" "$out" > "$tmp/again.txt" 2>&1
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	cmp -s "$tmp/$rel.txt" "$tmp/again.txt" || fail "$rel: a cached run printed other results"
	[[ $ms -lt 2000 ]] || fail "$rel: a cached run took $ms ms (did it probe again?)"
	[[ $n == 1 ]] || continue  # the override is the script's, not the kernel's: once
	O2_PROBE_FORCE="rdma_connect_locked=no" "$TOP/scripts/o2-probe.sh" "$hdr" "$tmp/forced.h" > /dev/null 2>&1
	grep -q '^/\* #undef O2_HAVE_RDMA_CONNECT_LOCKED \*/' "$tmp/forced.h" ||
		fail "$rel: O2_PROBE_FORCE did not undefine O2_HAVE_RDMA_CONNECT_LOCKED"
	grep -q '^#define O2_HAVE_IB_CLIENT_ADD_INT 1' "$tmp/forced.h" ||
		fail "$rel: O2_PROBE_FORCE changed another probe"
done
[[ $n == 0 ]] && { echo "no guest kernel headers (run testbed/setup.sh): skipped"; exit 77; }
echo "$n kernel(s), $fails failure(s)"
[[ $fails == 0 ]]
