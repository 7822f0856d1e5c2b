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
