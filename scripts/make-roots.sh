#!/usr/bin/env bash
# make-roots.sh [--refresh]: Debian roots holding the distribution's own
# builds of Python 3.13, 3.14 and 3.15 with their -dbg packages, made by
# debootstrap (minbase) from the suites the machine's Debian mirror
# serves, and a free-threaded 3.13t built from Debian's source package.
# The integration tests in detect/pywalk run each root's interpreter in
# its own mount and PID namespace and attach the host's gdb and lldb.
#
# Roots are cached between runs under $PYATTACH_ROOTS (default
# /var/cache/pyattach-test/roots), one directory per suite, each built in
# a staging directory and renamed into place only when complete, with
# its stamp written last; --refresh rebuilds them. $PYATTACH_ROOTS/versions
# records, one line per Python version, "VERSION SUITE" for the root that
# holds it or "VERSION - REASON" when the mirror does not serve it (the
# tests skip that version). Anything else that fails (a download, an
# install, the build) fails the script, and with it scripts/test.sh.
#
# The roots of $DEBUGGERS' suites (sid, trixie) also get that suite's
# debuggers, after its Pythons: gdb (sid's 18, trixie's 16, both with
# DAP), lldb-N with its Python module and lldb-dap-N (a file of lldb-N
# today; its own package where the suite has one): lldb-22 in sid,
# lldb-19 in trixie (Debian 12 cannot install lldb-19 beside the lldb-14
# the host tests use). The integration tests run them inside the root.
# A cached root without them gets them on the next run.
#
# Runs as root; tests skip (or fail under CI=true) when no root exists.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ROOTS=${PYATTACH_ROOTS:-/var/cache/pyattach-test/roots}
refresh=false
[ "${1:-}" = --refresh ] && refresh=true

# Python versions and, in order of preference, the suites to take them
# from: Debian's packages python3.N and python3.N-dbg. 3.14 goes into the
# sid root that 3.15 needs anyway when sid serves it (one root less to
# make), else into forky's.
PLAN="3.13:trixie 3.14:sid,forky 3.15:sid"
# The version also built free-threaded, from source (see build_freethreaded).
FREE_THREADED=3.13
# SUITE:N for each root that gets the debuggers (install_debuggers): gdb
# and lldb-N; debugger_debs and debugger_files say what that means.
DEBUGGERS="sid:22 trixie:19"

if [ "$(id -u)" -ne 0 ]; then
	echo "$0: error: debootstrap and chroot need root" >&2
	echo "  hint: sudo $0" >&2
	exit 1
fi
need_debs debootstrap debian-archive-keyring util-linux

# debian_mirror prints the URI of the machine's first Debian archive
# entry (not a security one), from deb822 .sources files or sources.list.
debian_mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			/^[ \t]*$/ { if (deb && uri != "" && !sec) { print uri; exit } deb = 0; uri = ""; sec = 0; next }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i ~ /-security$/) sec = 1 }
			END { if (deb && uri != "" && !sec) print uri }
		' "$f" | grep -m1 '/debian/\?$' && return 0
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^deb[ \t]\+\(\[[^]]*\][ \t]\+\)\?\([^ \t]*\)[ \t]\+[^ \t]*[ \t].*/\2/p' "$f" |
			grep -m1 '/debian/\?$' && return 0
	done
	return 1
}

mirror=$(debian_mirror) || {
	echo "$0: error: no Debian archive entry in /etc/apt/sources.list or /etc/apt/sources.list.d" >&2
	echo "  hint: add one (see sources.list(5)), then run $0 again" >&2
	exit 1
}

mkdir -p "$ROOTS"
exec 9>"$ROOTS/.lock"
flock 9

# in_root runs a command chrooted in root $1 with /proc mounted in a
# private mount namespace (unmounted when the command ends).
in_root() {
	local dir=$1
	shift
	unshare --mount --fork sh -c 'mount -t proc proc "$1/proc" && d=$1 && shift && exec chroot "$d" "$@"' sh "$dir" \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"
}

# apt_update refreshes a root's package lists. Testing and unstable carry
# a Valid-Until date that a mirror snapshot (or a machine clock ahead of
# it) has passed; the signatures are still checked.
apt_update() {
	in_root "$1" apt-get -o Acquire::Check-Valid-Until=false update -qq
}

# make_root builds the root of one suite (once) and prints nothing; the
# suite's packages are listed in $ROOTS/$suite/pyattach-stamp.
declare -A made=()
make_root() {
	local suite=$1 dir="$ROOTS/$1" stage="$ROOTS/.$1.stage"
	if [ -n "${made[$suite]:-}" ] || { [ -f "$dir/pyattach-stamp" ] && ! $refresh; }; then
		return 0
	fi
	rm -rf "$stage"
	echo "$0: debootstrap --variant=minbase $suite (from the machine's Debian mirror)" >&2
	local script=/usr/share/debootstrap/scripts/$suite
	[ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
	if ! debootstrap --variant=minbase "$suite" "$stage" "$mirror" "$script" >"$ROOTS/.$suite.log" 2>&1; then
		rm -rf "$stage"
		if grep -q 'Failed getting release file' "$ROOTS/.$suite.log"; then
			echo "$0: the mirror does not serve $suite" >&2
			return 1
		fi
		echo "$0: error: debootstrap $suite failed (log: $ROOTS/.$suite.log)" >&2
		tail -3 "$ROOTS/.$suite.log" >&2 || true
		exit 1
	fi
	apt_update "$stage" >/dev/null
	rm -rf "$dir"
	mv "$stage" "$dir"
	made[$suite]=1
}

# install_python installs python3.N and its -dbg package in a suite's
# root when the suite serves them.
install_python() {
	local v=$1 suite=$2 dir="$ROOTS/$2"
	if [ -x "$dir/usr/bin/python$v" ] && [ -f "$dir/pyattach-stamp" ]; then
		return 0
	fi
	if [ -z "$(in_root "$dir" apt-cache showpkg "python$v-dbg" 2>/dev/null | sed -n '/^Versions:/,/^Reverse/p' | sed '1d;$d')" ]; then
		apt_update "$dir" >/dev/null 2>&1 || true
		if [ -z "$(in_root "$dir" apt-cache showpkg "python$v-dbg" 2>/dev/null | sed -n '/^Versions:/,/^Reverse/p' | sed '1d;$d')" ]; then
			return 1
		fi
	fi
	echo "$0: $suite: apt-get install python$v python$v-dbg" >&2
	in_root "$dir" apt-get install -y -qq --no-install-recommends "python$v" "python$v-dbg" >"$ROOTS/.$suite.log" 2>&1 || {
		echo "$0: error: $suite: installing python$v failed (log: $ROOTS/.$suite.log)" >&2
		exit 1
	}
	rm -f "$dir/pyattach-stamp"
}

# installed_debs DIR PKG... prints "PACKAGE VERSION" for each of the
# packages installed in root DIR (dpkg's database there, read from here).
installed_debs() {
	local dir=$1
	shift
	dpkg-query --admindir="$dir/var/lib/dpkg" -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' "$@" 2>/dev/null |
		awk '$1 == "ii" { print $2, $3 }' || true
}

# debugger_debs N: the packages of gdb and lldb-N; lldb-dap-N is a file
# of lldb-N today (install_debuggers adds its own package where the suite
# has one).
debugger_debs() {
	echo "gdb lldb-$1 python3-lldb-$1"
}

# debugger_files N: the files (shell patterns, under a root) that must be
# there once debugger_debs N are installed. The lldb module's directory
# is the Python of the root's lldb build.
debugger_files() {
	echo "usr/bin/gdb usr/bin/lldb-$1 usr/bin/lldb-dap-$1 usr/lib/llvm-$1/lib/python3*/*-packages/lldb/__init__.py"
}

# has_debuggers DIR N: whether root DIR holds every package and file
# install_debuggers installs for lldb-N.
has_debuggers() {
	local dir=$1 n=$2 f debs files
	debs=$(debugger_debs "$n")
	# shellcheck disable=SC2086 # a list of package names
	[ "$(installed_debs "$dir" $debs | wc -l)" -eq "$(echo $debs | wc -w)" ] || return 1
	read -r -a files <<<"$(debugger_files "$n")"
	for f in "${files[@]}"; do
		compgen -G "$dir/$f" >/dev/null || return 1
	done
}

# install_debuggers SUITE N installs debugger_debs N in SUITE's root (and
# lldb-dap-N where the suite has such a package) when they are not all
# there, then checks that debugger_files N are.
install_debuggers() {
	local suite=$1 n=$2 dir="$ROOTS/$1" debs
	if has_debuggers "$dir" "$n"; then
		return 0
	fi
	apt_update "$dir" >/dev/null
	debs=$(debugger_debs "$n")
	if [ -n "$(in_root "$dir" apt-cache showpkg "lldb-dap-$n" 2>/dev/null | sed -n '/^Versions:/,/^Reverse/p' | sed '1d;$d')" ]; then
		debs="$debs lldb-dap-$n"
	fi
	echo "$0: $suite: apt-get install $debs" >&2
	# shellcheck disable=SC2086 # a list of package names
	in_root "$dir" apt-get install -y -qq --no-install-recommends $debs >"$ROOTS/.$suite.log" 2>&1 || {
		echo "$0: error: $suite: installing $debs failed (log: $ROOTS/.$suite.log)" >&2
		exit 1
	}
	if ! has_debuggers "$dir" "$n"; then
		echo "$0: error: $suite: after apt-get install $debs, one of these is missing: $(debugger_files "$n")" >&2
		echo "  hint: see which package holds it now: apt-cache search --names-only lldb (in the root), and update debugger_debs in $0" >&2
		exit 1
	fi
	rm -f "$dir/pyattach-stamp"
}

# in_versions SUITE FILE: whether FILE (a versions list) names SUITE's root.
in_versions() {
	awk -v s="$1" '$2 == s { found = 1 } END { exit !found }' "$2"
}

# Free-threaded: Debian ships no --disable-gil build, so CPython is built
# from Debian's source package of the suite that serves python$FREE_THREADED
# (apt-get source; dpkg-source applies Debian's patches), the interpreter
# only, into that root's /usr/local: python${FREE_THREADED}t with its DWARF,
# and CPython's gdb extension of the same build where gdb auto-loads it.
# The compiler and the sources are removed again.
build_freethreaded() {
	local v=$1 suite=$2 dir="$ROOTS/$2"
	if [ -x "$dir/usr/local/bin/python${v}t" ]; then
		return 0
	fi
	rm -f "$dir/pyattach-stamp"
	echo "$0: $suite: building python${v}t from Debian's source package (--disable-gil)" >&2
	grep -q '^deb-src ' "$dir/etc/apt/sources.list" || echo "deb-src $mirror $suite main" >>"$dir/etc/apt/sources.list"
	cat >"$dir/usr/src/pyattach-ft.sh" <<'EOF'
set -e
v=$1
apt-get install -y -qq --no-install-recommends gcc make libc6-dev dpkg-dev >/dev/null
rm -rf /usr/src/pyattach-ft
mkdir /usr/src/pyattach-ft
cd /usr/src/pyattach-ft
apt-get source -qq --download-only "python$v"
dpkg-source -x python"$v"_*.dsc src >/dev/null
cd src
./configure -q --disable-gil --prefix=/usr/local --without-ensurepip >/dev/null
make -j"$(nproc)" -s >/dev/null
make -s altinstall >/dev/null
# altinstall also links python$v, which would shadow Debian's in PATH;
# the test suite (140 MB) is not run.
rm -rf "/usr/local/bin/python$v" "/usr/local/lib/python${v}t/test"
mkdir -p /usr/share/gdb/auto-load/usr/local/bin
cp python-gdb.py "/usr/share/gdb/auto-load/usr/local/bin/python${v}t-gdb.py"
cd /
rm -rf /usr/src/pyattach-ft
apt-get purge -y -qq gcc make libc6-dev dpkg-dev >/dev/null
apt-get autoremove -y -qq --purge >/dev/null
EOF
	if ! { apt_update "$dir" && in_root "$dir" sh /usr/src/pyattach-ft.sh "$v"; } >"$ROOTS/.ft.log" 2>&1; then
		rm -f "$dir/usr/src/pyattach-ft.sh"
		tail -5 "$ROOTS/.ft.log" >&2
		return 1
	fi
	rm -f "$dir/usr/src/pyattach-ft.sh"
	[ -x "$dir/usr/local/bin/python${v}t" ]
}

# finish cleans a root's caches and writes its stamp, last.
finish() {
	local dir="$ROOTS/$1" item
	[ -d "$dir" ] || return 0
	[ -f "$dir/pyattach-stamp" ] && return 0
	in_root "$dir" apt-get clean
	# The static libraries of the -dbg packages (70 MB each) are not run.
	rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/usr/share/doc/* \
		"$dir"/usr/share/man/* "$dir"/usr/share/locale/* "$dir"/usr/lib/python3.*/config-*/*.a \
		"$dir"/usr/local/lib/python3.*/config-*/*.a
	{
		ls "$dir"/usr/bin/ | grep -E '^python3\.[0-9]+$' | sed 's/^python//' || true
		for item in $DEBUGGERS; do
			[ "${item%%:*}" = "$1" ] || continue
			# shellcheck disable=SC2046 # a list of package names
			installed_debs "$dir" $(debugger_debs "${item#*:}") "lldb-dap-${item#*:}"
		done
	} >"$dir/pyattach-stamp.tmp"
	mv "$dir/pyattach-stamp.tmp" "$dir/pyattach-stamp"
}

# A complete cache is used as it is: no network. Versions the mirror did
# not serve are tried again with --refresh.
if ! $refresh && [ -f "$ROOTS/versions" ]; then
	complete=true
	while read -r v suite _; do
		[ "$suite" = - ] || [ -f "$ROOTS/$suite/pyattach-stamp" ] || complete=false
	done <"$ROOTS/versions"
	for item in $PLAN "${FREE_THREADED}t:"; do
		grep -q "^${item%%:*} " "$ROOTS/versions" || complete=false
	done
	# The debuggers, also in a root made before they were asked for.
	for item in $DEBUGGERS; do
		if in_versions "${item%%:*}" "$ROOTS/versions" && ! has_debuggers "$ROOTS/${item%%:*}" "${item#*:}"; then
			complete=false
		fi
	done
	if $complete; then
		cat "$ROOTS/versions" >&2
		exit 0
	fi
fi

declare -A failed=()
out=$(mktemp)
for item in $PLAN; do
	v=${item%%:*}
	done_in=""
	reason=""
	IFS=, read -r -a suites <<<"${item#*:}"
	for suite in "${suites[@]}"; do
		[ -n "${failed[$suite]:-}" ] && { reason="${failed[$suite]}"; continue; }
		if ! make_root "$suite"; then
			failed[$suite]="the mirror does not serve $suite"
			reason=${failed[$suite]}
			continue
		fi
		if install_python "$v" "$suite"; then
			done_in=$suite
			break
		fi
		reason="no python$v-dbg in ${suites[*]}"
	done
	if [ -n "$done_in" ]; then
		echo "$v $done_in" >>"$out"
	else
		echo "$0: Python $v is skipped: $reason" >&2
		echo "$v - $reason" >>"$out"
	fi
done
# The debuggers, after the Pythons of their root.
for item in $DEBUGGERS; do
	if in_versions "${item%%:*}" "$out"; then
		install_debuggers "${item%%:*}" "${item#*:}"
	else
		echo "$0: no ${item%%:*} root: its debuggers (gdb, lldb-${item#*:}, lldb-dap-${item#*:}) are not installed; the tests that need them skip (fail under CI=true)" >&2
	fi
done
ft_suite=$(awk -v v="$FREE_THREADED" '$1 == v && $2 != "-" { print $2 }' "$out")
if [ -z "$ft_suite" ]; then
	echo "${FREE_THREADED}t - no root with Python $FREE_THREADED to build it in" >>"$out"
elif build_freethreaded "$FREE_THREADED" "$ft_suite"; then
	echo "${FREE_THREADED}t $ft_suite" >>"$out"
else
	echo "$0: error: building python${FREE_THREADED}t from Debian's source package failed (log: $ROOTS/.ft.log)" >&2
	exit 1
fi
for d in "$ROOTS"/*/; do
	finish "$(basename "$d")"
done
mv "$out" "$ROOTS/versions"
chmod 644 "$ROOTS/versions"
cat "$ROOTS/versions" >&2
