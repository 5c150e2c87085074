#!/bin/bash
# Run the kernel's checkpatch.pl --strict over o2lnd's kernel sources.
#
#   scripts/checkpatch.sh             checkpatch's findings on stdout; exit 0
#                                     when clean, 1 when it found something
#   scripts/checkpatch.sh --prepare   only fetch the tool
#
# checkpatch.pl comes from Debian's linux-source-6.1 (the headers package
# does not ship it): the package is downloaded into $O2_CACHE (never
# installed) and only the three files checkpatch needs are unpacked, into
# $O2_CACHE/checkpatch/<version>/.  Getting the tool prints nothing (apt's
# output goes to its log); if it cannot be had, one line on stderr says why
# and the exit status is 2, so a caller never mistakes an installer's
# chatter or a missing tool for a finding.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/o2-apt.sh
. "$top/scripts/o2-apt.sh"

prepare() {
	local src ver tar tools
	src=$(o2_linux_source 6.1) || return 1
	read -r ver tar <<<"$src"
	tools=$O2_CACHE/checkpatch/$ver
	if [[ ! -x "$tools/scripts/checkpatch.pl" ]]; then
		rm -rf "$tools.tmp"
		mkdir -p "$tools.tmp"
		tar -C "$tools.tmp" --strip-components=1 -xJf "$tar" \
			linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch || return 1
		rm -rf "$tools"
		mv "$tools.tmp" "$tools"
	fi
	echo "$tools/scripts/checkpatch.pl"
}

if ! checkpatch=$(prepare); then
	echo "checkpatch.sh: cannot get checkpatch.pl from linux-source-6.1 (see above)" >&2
	exit 2
fi
[[ "${1:-}" == --prepare ]] && { echo "$checkpatch"; exit 0; }
cd "$top"
# The X-macro counter lists (include/uapi/o2lnd_counters.h, lists only)
# are checked without the four macro checks checkpatch cannot apply to a
# list; every other file with all of them.
lists=include/uapi/o2lnd_counters.h
files=$(git ls-files 'module/*.[ch]' 'kunit/*.[ch]' 'include/uapi/*.h' 2>/dev/null || true)
[ -n "$files" ] || files=$(ls module/*.[ch] module/*/*.[ch] kunit/*.[ch] include/uapi/*.h 2>/dev/null)
files=$(printf '%s\n' $files | grep -vx "$lists" || true)
rc=0
# shellcheck disable=SC2086
"$checkpatch" --no-tree --strict --terse --show-types --ignore FILE_PATH_CHANGES -f $files || rc=1
if [ -f "$lists" ]; then
	"$checkpatch" --no-tree --strict --terse --show-types \
		--ignore FILE_PATH_CHANGES,COMPLEX_MACRO,MACRO_ARG_REUSE,MULTISTATEMENT_MACRO_USE_DO_WHILE,TRAILING_SEMICOLON \
		-f "$lists" || rc=1
fi
exit $rc
