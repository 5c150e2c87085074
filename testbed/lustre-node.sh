#!/bin/bash
# Runs in a guest: makes it a Lustre LNet node with the peer that
# testbed/lustre-build.sh built (LNet + the in-kernel ko2iblnd), or takes
# that node down again.
#
#   lustre-node.sh DIR up NETWORKS [LNET_PARAM...] [-- KO2IBLND_PARAM...]
#       e.g. lustre-node.sh $dir up 'o2ib0(eth0)' -- peer_credits=16
#       (the LND from O2_LUSTRE_LND_KO when it is set)
#       loads what DIR/ko/*.ko need (modprobe), libcfs, lnet networks=...,
#       ko2iblnd, lnet_selftest, then `lnetctl lnet configure --all`; prints
#       the node's NIDs (`lctl list_nids`)
#   lustre-node.sh DIR down
#       unloads lnet_selftest, then `lnetctl lnet unconfigure` (else `lctl
#       network down`): LNet shuts its NIs and peers down; waits for
#       ko2iblnd to be free, then unloads the rest; nothing is left loaded
#   lustre-node.sh DIR loaded
#       exit 0 if any module of the peer is loaded
#   lustre-node.sh DIR brw FROM TO SECONDS [SIZE[,SIZE...]]
#       an lnet_selftest session run from this node: brw write and read of
#       each SIZE (default 1M; all in one batch, at once) with check=full,
#       concurrency 4 each, from NID FROM to
#       NID TO (both Lustre nodes with lnet_selftest loaded) for SECONDS;
#       prints `lst stat` and `lst show_error`; exit 0 when both groups
#       report "Total 0 error nodes" and the batch moved data
#   lustre-node.sh DIR bench FROM TO SECONDS CONCURRENCY LST_TEST...
#       one lst test (e.g. `brw write size=1M`, `ping`) from FROM to TO at
#       CONCURRENCY for SECONDS: 3 s of warm-up, then `lst stat` over the
#       rest (rates and bandwidth of both groups); exit 0 when both groups
#       report no error node
#
# DIR is the folder lustre-build.sh printed (ko/, bin/); the tools in
# DIR/bin run from the shared host root.  Exit status: 0, else the failing
# step's, with a line naming it.
set -uo pipefail

dir=${1:?usage: lustre-node.sh DIR up|down|loaded|brw|bench ...}
cmd=${2:?usage: lustre-node.sh DIR up|down|loaded|brw|bench ...}
shift 2
say() { echo "lustre-node: $*" >&2; }
# The LND: ko/ko2iblnd.ko, or the module O2_LUSTRE_LND_KO names (e.g.
# DIR/sdk/check/*.ko, Lustre's LND built out of tree against DIR/sdk/).
# Its module name: ko2iblnd, but in_kernel_ko2iblnd on 2.16 (its
# in-kernel-ko2iblnd.ko, which 2.16 itself installs as ko2iblnd.ko)
lnd_ko=${O2_LUSTRE_LND_KO:-$dir/ko/ko2iblnd.ko}
lnd=$(modinfo -F name "$lnd_ko" 2>/dev/null)
lnd=${lnd:-ko2iblnd}
mods=(lnet_selftest "$lnd" lnet libcfs)

loaded() {
	local m
	for m in "${mods[@]}"; do
		[[ -d /sys/module/$m ]] && return 0
	done
	return 1
}

# bounded SECS WHAT CMD...: CMD, its output on stderr, waited for at most
# SECS.  A step that is still running then is stuck in the kernel (an
# rmmod or an ioctl in an uninterruptible wait, which no signal ends): it
# is left behind and named, with its kernel stack, the blocked tasks
# (sysrq w, into the kernel log) and the last kernel lines, so that a
# hang says where it is.  Return: CMD's status, 124 when stuck.
bounded() {
	local secs=$1 what=$2 pid t
	shift 2
	"$@" >&2 &
	pid=$!
	for ((t = 0; t < secs * 10; t++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			return
		fi
		sleep 0.1
	done
	say "$what: still running after $secs s; its kernel stack:"
	cat "/proc/$pid/stack" >&2 2>/dev/null
	echo w > /proc/sysrq-trigger 2>/dev/null
	say "the last kernel lines:"
	dmesg | tail -n 40 >&2
	# Lustre's own debug log (its neterror lines say which peers and
	# conns its LND still waits for): `lctl dk` writes it through the
	# debug control file, not LNet's ioctl, so it does not queue behind
	# the stuck step
	if timeout 10 "$dir/bin/lctl" dk /tmp/lustre-dk.txt > /dev/null 2>&1; then
		say "Lustre's debug log, its last LND lines:"
		grep -i 'iblnd\|peer\|conn' /tmp/lustre-dk.txt | tail -n 30 >&2
	fi
	return 124
}

# LNet shuts its NIs and peers down when its last user lets go of it:
# the configure's own reference (`lnetctl lnet configure`) and
# lnet_selftest's (LNetNIInit() at its load, LNetNIFini() at its unload).
# Unconfigure only drops the first and says EBUSY while lnet_selftest is
# loaded (measured on 2.15.8: "LNet unconfigure error: Device or resource
# busy", NIs still up), so lnet_selftest goes first.  Unconfigure is
# `lnetctl lnet unconfigure` (2.17: netlink, else the ioctl), else `lctl
# network down` (the same IOC_LIBCFS_UNCONFIGURE ioctl in every version,
# for an lnetctl that cannot).  The NIs are gone when the LND ($lnd) is
# free again (each NI of it holds a reference to the module); only then
# are the rest unloaded.  Every step is bounded (bounded()).
down() {
	local i m
	if [[ -d /sys/module/lnet_selftest ]]; then
		bounded 60 "rmmod lnet_selftest" rmmod lnet_selftest ||
			{ say "rmmod lnet_selftest failed"; return 1; }
	fi
	if [[ -d /sys/module/lnet ]]; then
		if ! bounded 60 "lnetctl lnet unconfigure" \
			"$dir/bin/lnetctl" lnet unconfigure; then
			say "lnetctl lnet unconfigure failed; lctl network down"
			bounded 60 "lctl network down" "$dir/bin/lctl" network down ||
				say "lctl network down failed too"
		fi
	fi
	if [[ -d /sys/module/$lnd ]]; then
		for ((i = 0; i < 600; i++)); do
			[[ $(cat "/sys/module/$lnd/refcnt" 2>/dev/null || echo 0) == 0 ]] && break
			sleep 0.1
		done
		if [[ $i == 600 ]]; then
			say "$lnd still in use after 60 s: LNet's NIs are not shut ($("$dir/bin/lctl" list_nids 2>&1 | tr '\n' ' '))"
			return 1
		fi
	fi
	for m in "${mods[@]}"; do
		[[ -d /sys/module/$m ]] || continue
		bounded 60 "rmmod $m" rmmod "$m" || { say "rmmod $m failed"; return 1; }
	done
	return 0
}

# lst_session NAME FROM TO: a new lst session NAME ($LST_SESSION = this
# shell) with groups "from" and "to" and an empty batch "b"
lst() { "$dir/bin/lst" "$@"; }
lst_session() {
	export LST_SESSION=$$
	lst new_session --timeout 60 "$1" > /dev/null || { say "lst new_session failed"; exit 1; }
	lst add_group from "$2" > /dev/null && lst add_group to "$3" > /dev/null &&
		lst add_batch b > /dev/null
}

case "$cmd" in
up)
	networks=${1:?usage: lustre-node.sh DIR up NETWORKS ...}
	shift
	lparams=()
	oparams=()
	while [[ $# -gt 0 && "$1" != "--" ]]; do lparams+=("$1"); shift; done
	[[ "${1:-}" == "--" ]] && shift
	oparams=("$@")
	loaded && { say "already loaded"; exit 1; }
	# the kernel's own modules the peer's depend on
	for ko in "$dir"/ko/*.ko; do
		for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
			case "$dep" in libcfs|lnet|"$lnd") continue ;; esac
			modprobe "$dep" || { say "modprobe $dep failed"; exit 1; }
		done
	done
	insmod "$dir/ko/libcfs.ko" || { say "insmod libcfs failed"; exit 1; }
	insmod "$dir/ko/lnet.ko" networks="$networks" "${lparams[@]}" ||
		{ say "insmod lnet networks=$networks ${lparams[*]} failed"; down; exit 1; }
	insmod "$lnd_ko" "${oparams[@]}" ||
		{ say "insmod ko2iblnd ${oparams[*]} failed"; down; exit 1; }
	insmod "$dir/ko/lnet_selftest.ko" || { say "insmod lnet_selftest failed"; down; exit 1; }
	timeout 120 "$dir/bin/lnetctl" lnet configure --all ||
		{ say "lnetctl lnet configure --all failed"; down; exit 1; }
	"$dir/bin/lctl" list_nids
	;;
down)
	down
	;;
loaded)
	loaded
	;;
brw)
	from=${1:?FROM}; to=${2:?TO}; secs=${3:?SECONDS}; size=${4:-1M}
	ok=1
	added=1
	lst_session interop "$from" "$to" || added=0
	for sz in ${size//,/ }; do
		[[ $added == 1 ]] || break
		lst add_test --batch b --concurrency 4 --from from --to to brw write check=full size="$sz" > /dev/null &&
			lst add_test --batch b --concurrency 4 --from from --to to brw read check=full size="$sz" > /dev/null ||
			added=0
	done
	if [[ $added == 1 ]] && lst run b > /dev/null; then
		sleep "$secs"
		out=$(lst stat --count 1 --delay 3 from to 2>&1)
		echo "$out"
		lst stop b > /dev/null
		errs=$(lst show_error from to 2>&1)
		echo "$errs"
		[[ $(grep -c '^Total 0 error nodes' <<<"$errs") == 2 ]] || ok=0
		# data moved: a non-zero bandwidth line of the sender group
		awk '/^\[LNet Bandwidth of from\]/ { n = 2; next }
			n && n-- && $3 + 0 > 0 { moved = 1 }
			END { exit !moved }' <<<"$out" || ok=0
	else
		say "setting up the lst batch failed"
		ok=0
	fi
	lst end_session > /dev/null
	[[ $ok == 1 ]]
	;;
bench)
	from=${1:?FROM}; to=${2:?TO}; secs=${3:?SECONDS}; conc=${4:?CONCURRENCY}
	shift 4
	ok=1
	if lst_session bench "$from" "$to" &&
		lst add_test --batch b --concurrency "$conc" --from from --to to "$@" > /dev/null &&
		lst run b > /dev/null; then
		sleep 3
		lst stat --count 1 --delay $((secs > 4 ? secs - 3 : 1)) from to 2>&1
		lst stop b > /dev/null
		errs=$(lst show_error from to 2>&1)
		[[ $(grep -c '^Total 0 error nodes' <<<"$errs") == 2 ]] || { echo "$errs"; ok=0; }
	else
		say "setting up the lst batch failed"
		ok=0
	fi
	lst end_session > /dev/null
	[[ $ok == 1 ]]
	;;
*)
	say "unknown command $cmd (up, down, loaded, brw, bench)"
	exit 2
	;;
esac
