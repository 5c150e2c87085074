# shellcheck shell=bash
# o2lnd: the one way the project's scripts talk to apt (sourced, never run).
#
# Rules it enforces, for every stage of make check and make run:
#  - What an installer prints never reaches the caller's stdout or stderr
#    (debconf, dpkg and apt chatter go to $O2_APT_LOG); only the exit status
#    counts, and a failure prints one line naming what failed and the log.
#  - Every apt call waits for the dpkg lock (DPkg::Lock::Timeout) and for
#    the package lists lock (apt-get update is retried while another apt
#    holds it): a fresh machine may be installing something else right then.
#  - A dpkg left "interrupted" by a killed install is configured
#    (dpkg --configure -a) and the call tried again.
#  - apt-get update runs at most once per make check (O2_APT_UPDATED=1 is
#    exported to the stages after it), and only when something is missing.
#  - Sources and headers of Debian's kernels come as downloaded .deb files
#    unpacked into $O2_CACHE, keyed by package version (o2_linux_source,
#    o2_linux_headers), never as installed packages: an empty O2_CACHE
#    runs every download again.  No linux-image or linux-headers package
#    is ever installed on the host (6.12's headers depend on its image:
#    installing them would put a kernel and an initramfs into /boot).
#
# Functions: o2_pkgs_missing PKG...   o2_apt_update   o2_apt_install PKG...
#            o2_apt_candidate PKG     o2_apt_download PKG=VER DIR
#            o2_linux_source SERIES [VERSION]  (e.g. 6.1; prints "VERSION TARBALL")
#            o2_linux_headers RELEASE [VERSION] (e.g. 6.1.0-57-amd64; prints
#                                       the kernel build directory, KDIR)

O2_CACHE="${O2_CACHE:-/var/cache/o2lnd}"
O2_APT_LOG="${O2_APT_LOG:-$O2_CACHE/apt.log}"
O2_APT_LOCK_TIMEOUT="${O2_APT_LOCK_TIMEOUT:-900}"
O2_APT_OPTS=(-q -o "DPkg::Lock::Timeout=$O2_APT_LOCK_TIMEOUT" -o Dpkg::Use-Pty=0)

_o2_apt_log_init() {
	mkdir -p "$(dirname "$O2_APT_LOG")" && touch "$O2_APT_LOG"
}

_o2_apt_fail() {  # message
	echo "o2-apt: $1 (log $O2_APT_LOG: $(tail -n 3 "$O2_APT_LOG" 2>/dev/null | tr '\n' ' ' | cut -c1-400))" >&2
	return 1
}

# Packages of the list that are not installed, one a line.
o2_pkgs_missing() {
	local installed p
	installed=$(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null |
		awk '$NF == "installed" {print $1}')
	for p in "$@"; do
		grep -qx -- "$p" <<<"$installed" || echo "$p"
	done
}

# apt-get update, once; retried while another apt holds the lists lock.
o2_apt_update() {
	[[ "${O2_APT_UPDATED:-0}" == 1 ]] && return 0
	_o2_apt_log_init
	local t0=$SECONDS try=0
	while :; do
		echo "=== $(date -Is) apt-get update" >>"$O2_APT_LOG"
		if apt-get "${O2_APT_OPTS[@]}" update >>"$O2_APT_LOG" 2>&1; then
			export O2_APT_UPDATED=1
			return 0
		fi
		try=$((try + 1))
		if tail -n 5 "$O2_APT_LOG" | grep -qi 'lock' && ((SECONDS - t0 < O2_APT_LOCK_TIMEOUT)); then
			sleep 5
		elif ((try >= 3)); then
			_o2_apt_fail "apt-get update failed"
			return 1
		else
			sleep 5
		fi
	done
}

# Runs an apt command (its output to the log); when it fails on lists that
# were not updated in this run, updates them once and runs it again.
# _o2_apt_retry WHAT CMD...   (WHAT names it in the one failure line)
_o2_apt_retry() {
	local what=$1
	shift
	_o2_apt_log_init
	{ echo "=== $(date -Is) $what" && "$@"; } >>"$O2_APT_LOG" 2>&1 && return 0
	# An install that was killed half way (a stopped run) leaves dpkg
	# "interrupted": finish its configuration and try once more.
	if tail -n 5 "$O2_APT_LOG" | grep -q "dpkg --configure -a"; then
		{ echo "=== $(date -Is) dpkg --configure -a" &&
			env DEBIAN_FRONTEND=noninteractive dpkg --force-confold --configure -a; } >>"$O2_APT_LOG" 2>&1
		{ echo "=== $(date -Is) $what (after dpkg --configure -a)" && "$@"; } >>"$O2_APT_LOG" 2>&1 && return 0
	fi
	[[ "${O2_APT_UPDATED:-0}" == 1 ]] && { _o2_apt_fail "$what failed"; return 1; }
	o2_apt_update || return 1
	{ echo "=== $(date -Is) $what (after apt-get update)" && "$@"; } >>"$O2_APT_LOG" 2>&1 ||
		{ _o2_apt_fail "$what failed"; return 1; }
}

# Installs the packages that are missing.  Refuses a kernel image, or a
# headers package (6.12's depends on its image): the host's kernels are
# never changed (o2_linux_headers unpacks headers into the cache instead).
o2_apt_install() {
	local miss kern
	miss=$(o2_pkgs_missing "$@")
	[[ -z "$miss" ]] && return 0
	kern=$(grep -E '^linux-(image|headers)-' <<<"$miss" | paste -sd' ')
	if [[ -n "$kern" ]]; then
		echo "o2-apt: refusing to install $kern on the host: the test bed never changes the host's kernels" >&2
		return 1
	fi
	# shellcheck disable=SC2086
	_o2_apt_retry "apt-get install $(echo $miss)" env DEBIAN_FRONTEND=noninteractive \
		apt-get "${O2_APT_OPTS[@]}" -y --no-install-recommends install $miss || return 1
	# what the test bed put on the host (make distclean lists it)
	mkdir -p "$O2_CACHE" && printf '%s\n' $miss >> "$O2_CACHE/host-packages"
}

# The candidate version of a package ("" and status 1 if none), updating
# the lists once if they do not know it.
o2_apt_candidate() {
	local v
	v=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	if [[ -z "$v" || "$v" == "(none)" ]]; then
		o2_apt_update || return 1
		v=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	fi
	[[ -n "$v" && "$v" != "(none)" ]] || return 1
	echo "$v"
}

# Downloads PKG=VER's .deb into DIR (which must exist).
o2_apt_download() {
	local spec=$1 dir=$2
	chmod 755 "$dir" 2>/dev/null || true  # apt's sandbox user reads it
	_o2_apt_retry "apt-get download $spec" env -C "$dir" apt-get "${O2_APT_OPTS[@]}" download "$spec"
}

# Debian's linux-source-SERIES tarball (VERSION, default the candidate),
# downloaded and unpacked into $O2_CACHE/linux-source/<version>/ once per
# package version.  Prints
# "VERSION TARBALL".  One caller at a time (make check stages may overlap
# with another run on the machine).
o2_linux_source() {
	local series=$1 pkg ver=${2:-} dir tmp
	pkg=linux-source-$series
	[[ -n "$ver" ]] || ver=$(o2_apt_candidate "$pkg") || { _o2_apt_fail "no candidate version of $pkg"; return 1; }
	dir=$O2_CACHE/linux-source/$pkg-$ver
	mkdir -p "$O2_CACHE/linux-source"
	if [[ ! -f "$dir/.complete" ]]; then
		(
			flock -w 1200 9 || { _o2_apt_fail "timed out waiting for $O2_CACHE/linux-source/.lock"; exit 1; }
			[[ -f "$dir/.complete" ]] && exit 0
			tmp=$(mktemp -d "$O2_CACHE/linux-source/.tmp.XXXXXX")
			trap 'rm -rf "$tmp"' EXIT
			o2_apt_download "$pkg=$ver" "$tmp" || exit 1
			dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -C "$tmp" -x "./usr/src/$pkg.tar.xz" ||
				{ _o2_apt_fail "no usr/src/$pkg.tar.xz in the $pkg $ver package"; exit 1; }
			mv "$tmp/usr/src/$pkg.tar.xz" "$tmp/"
			rm -rf "$tmp/usr" "$tmp"/*.deb
			touch "$tmp/.complete"
			rm -rf "$dir"
			mv "$tmp" "$dir"
			trap - EXIT
		) 9>"$O2_CACHE/linux-source/.lock" || return 1
	fi
	echo "$ver $dir/$pkg.tar.xz"
}

# The build headers of Debian's kernel RELEASE (e.g. 6.1.0-57-amd64):
# linux-headers-RELEASE, the -common headers and the linux-kbuild package
# it depends on, downloaded as .deb files and unpacked (dpkg-deb -x) into
# $O2_CACHE/kernels/headers-RELEASE-<version>/ with their own layout
# (usr/src/linux-headers-*, usr/lib/linux-kbuild-*: the scripts and tools
# links are relative), the arch Makefile's absolute include of the common
# Makefile pointed at the unpacked copy; file "versions" there lists the
# packages and versions.  $O2_CACHE/kernels/headers-RELEASE links to the
# last one prepared.  Prints the build directory (what make -C takes):
# <that folder>/usr/src/linux-headers-RELEASE.  VERSION: that package
# version (prepared when missing, and linked); none: the linked one, else
# the candidate.  Unpacked into a temporary folder and renamed: an
# interrupted unpack is never taken for a complete one.
o2_linux_headers() {
	local rel=$1 ver=${2:-} kd=$O2_CACHE/kernels link dir
	link=$kd/headers-$rel
	if [[ -z "$ver" && -f "$link/.complete" ]]; then
		echo "$(readlink -f "$link")/usr/src/linux-headers-$rel"
		return 0
	fi
	[[ -n "$ver" ]] || ver=$(o2_apt_candidate "linux-headers-$rel") ||
		{ _o2_apt_fail "no candidate version of linux-headers-$rel"; return 1; }
	dir=$kd/headers-$rel-$ver
	mkdir -p "$kd"
	if [[ ! -f "$dir/.complete" ]]; then
		(
			local tmp deps common kbuild deb
			flock -w 1200 9 || { _o2_apt_fail "timed out waiting for $kd/.headers.lock"; exit 1; }
			[[ -f "$dir/.complete" ]] && exit 0
			tmp=$(mktemp -d "$kd/.tmp-headers.XXXXXX")
			trap 'rm -rf "$tmp"' EXIT
			mkdir "$tmp/deb"
			o2_apt_download "linux-headers-$rel=$ver" "$tmp/deb" || exit 1
			# the names of the common headers and kbuild packages, from its Depends
			deps=$(dpkg-deb -f "$tmp"/deb/linux-headers-*.deb Depends | sed 's/[,|]/\n/g')
			common=$(sed -n 's/^ *\(linux-headers-[^ ]*-common\)\( .*\)\{0,1\}$/\1/p' <<<"$deps" | head -1)
			kbuild=$(sed -n 's/^ *\(linux-kbuild-[^ ]*\)\( .*\)\{0,1\}$/\1/p' <<<"$deps" | head -1)
			[[ -n "$common" && -n "$kbuild" ]] ||
				{ _o2_apt_fail "linux-headers-$rel $ver names no -common or linux-kbuild package"; exit 1; }
			o2_apt_download "$common=$ver" "$tmp/deb" || exit 1
			# the same source package: the same version, else the candidate
			o2_apt_download "$kbuild=$ver" "$tmp/deb" 2>/dev/null ||
				o2_apt_download "$kbuild" "$tmp/deb" || exit 1
			mkdir "$tmp/root"
			for deb in "$tmp"/deb/*.deb; do
				dpkg-deb -x "$deb" "$tmp/root" || { _o2_apt_fail "dpkg-deb -x $(basename "$deb") failed"; exit 1; }
				echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >> "$tmp/root/versions"
			done
			# "include /usr/src/linux-headers-<ver>-common/Makefile"
			sed -i "s|^include /usr/src/|include $dir/usr/src/|" "$tmp/root/usr/src/linux-headers-$rel/Makefile"
			grep -q "^include $dir/usr/src/.*-common/Makefile" "$tmp/root/usr/src/linux-headers-$rel/Makefile" ||
				{ _o2_apt_fail "unexpected Makefile in linux-headers-$rel $ver"; exit 1; }
			# not the /lib/modules/<release>/{build,source} links (absolute)
			rm -rf "$tmp/root/usr/share/doc" "$tmp/root/lib" "$tmp/root/usr/lib/modules" "$tmp/deb"
			touch "$tmp/root/.complete"
			rm -rf "$dir"
			mv "$tmp/root" "$dir"
		) 9>"$kd/.headers.lock" || return 1
	fi
	ln -sfn "headers-$rel-$ver" "$link"
	echo "$dir/usr/src/linux-headers-$rel"
}
