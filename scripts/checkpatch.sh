#!/bin/bash
# Run the kernel's checkpatch.pl --strict over o2lnd's kernel sources.
# checkpatch.pl comes from Debian's linux-source-6.1 package (the headers
# package does not ship it); only the three files it needs are unpacked.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tools=${O2_CACHE:-/var/cache/o2lnd}/checkpatch
if [ ! -x "$tools/scripts/checkpatch.pl" ]; then
	if ! dpkg-query -W -f='${Status}' linux-source-6.1 2>/dev/null | grep -q 'ok installed'; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-source-6.1 >/dev/null
	fi
	mkdir -p "$tools"
	tar -C "$tools" --strip-components=1 -xJf /usr/src/linux-source-6.1.tar.xz \
		linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi
cd "$top"
files=$(git ls-files 'module/*.[ch]' 'kunit/*.[ch]' 'include/uapi/*.h' 2>/dev/null || true)
[ -n "$files" ] || files=$(ls module/*.[ch] kunit/*.[ch] include/uapi/*.h 2>/dev/null)
# shellcheck disable=SC2086
"$tools/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
	--ignore FILE_PATH_CHANGES -f $files
