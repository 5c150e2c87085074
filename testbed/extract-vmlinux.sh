#!/bin/bash
# extract-vmlinux.sh BZIMAGE OUT: write the uncompressed ELF vmlinux held in
# a bzImage (tries xz, zstd, gzip, lz4 payloads); exit 1 if none is found.
set -uo pipefail
in=$1 out=$2
try() { # magic-regex decompress-cmd
	local off
	for off in $(LC_ALL=C grep -obUaP "$1" "$in" | cut -d: -f1); do
		tail -c +$((off + 1)) "$in" | $2 > "$out" 2>/dev/null
		if [[ "$(head -c 4 "$out" | od -An -tx1 | tr -d ' ')" == 7f454c46 ]]; then
			return 0
		fi
	done
	return 1
}
try '\xfd\x37\x7a\x58\x5a\x00' 'xz -dc --single-stream' && exit 0
try '\x28\xb5\x2f\xfd' 'zstd -dc' && exit 0
try '\x1f\x8b\x08' 'gzip -dc' && exit 0
try '\x02\x21\x4c\x18' 'lz4 -dc' && exit 0
rm -f "$out"
exit 1
