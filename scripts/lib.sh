# Shared by the scripts in this directory; source it, do not run it.

# need_go makes sure a Go toolchain (1.21 or newer, which fetches the
# version go.mod asks for by itself) is on PATH.
need_go() {
	if ! command -v go >/dev/null 2>&1; then
		for d in /usr/local/go/bin "$HOME/go/bin" /usr/lib/go/bin; do
			if [ -x "$d/go" ]; then
				PATH="$d:$PATH"
				export PATH
				break
			fi
		done
	fi
	if ! command -v go >/dev/null 2>&1; then
		echo "$0: error: the Go toolchain is not installed" >&2
		echo "  hint: install Go 1.21 or newer (https://go.dev/doc/install), or on Debian 13 / Ubuntu 24.04: sudo apt-get install golang-go" >&2
		exit 1
	fi
	local v
	v=$(go env GOVERSION 2>/dev/null || echo go0)
	v=${v#go}
	local major=${v%%.*} rest=${v#*.}
	local minor=${rest%%.*}
	if [ "${major:-0}" -lt 1 ] || { [ "$major" -eq 1 ] && [ "${minor:-0}" -lt 21 ]; }; then
		echo "$0: error: Go $v is too old to build pyattach" >&2
		echo "  hint: install Go 1.21 or newer (https://go.dev/doc/install); it fetches the toolchain go.mod asks for" >&2
		exit 1
	fi
}

# need_debs installs the named Debian packages when some are missing:
# with apt-get as root, or else it prints the exact command and fails.
need_debs() {
	local missing=() p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
			missing+=("$p")
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "$0: installing ${missing[*]}" >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	else
		echo "$0: error: missing Debian packages: ${missing[*]}" >&2
		echo "  hint: sudo apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
}

# need_deb_src makes Debian source packages available to apt-get source
# (the tests fetch CPython's upstream tarball that way): when apt knows
# no deb-src entry, it adds one mirroring the machine's own deb entries,
# as root; otherwise it prints what to do and returns 1.
need_deb_src() {
	if apt-cache showsrc "$1" >/dev/null 2>&1 && [ -n "$(apt-cache showsrc "$1" 2>/dev/null)" ]; then
		return 0
	fi
	local out=/etc/apt/sources.list.d/pyattach-deb-src.sources
	if [ "$(id -u)" -ne 0 ]; then
		echo "$0: error: apt has no deb-src entries, needed for: apt-get source $1" >&2
		echo "  hint: add deb-src lines beside your deb lines (see sources.list(5)), then: sudo apt-get update" >&2
		return 1
	fi
	local f tmp
	tmp=$(mktemp)
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] && [ "$f" != "$out" ] || continue
		sed -n '/^Types:.*\bdeb\b/,/^$/p' "$f" | sed 's/^Types:.*/Types: deb-src/' >>"$tmp"
		echo >>"$tmp"
	done
	if [ -f /etc/apt/sources.list ]; then
		grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >"$tmp.list" || true
	fi
	if [ -s "$tmp" ]; then
		mv "$tmp" "$out"
		chmod 644 "$out"
		echo "$0: added deb-src entries in $out (mirroring the deb entries)" >&2
	fi
	if [ -s "$tmp.list" ]; then
		mv "$tmp.list" /etc/apt/sources.list.d/pyattach-deb-src.list
		chmod 644 /etc/apt/sources.list.d/pyattach-deb-src.list
	fi
	rm -f "$tmp" "$tmp.list"
	apt-get update -qq
}
