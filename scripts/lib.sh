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

# write_app FILE SECONDS writes README.md's example program to FILE: it
# prints "ready", then sleeps SECONDS in handle_request, called by serve,
# called by main.
write_app() {
	cat >"$1" <<PY
import time

def handle_request():
    print("ready", flush=True)
    time.sleep($2)

def serve():
    handle_request()

def main():
    serve()

main()
PY
}

# Timing, for bench.sh and bench_debuginfod.sh.

# now_us sets the variable named $1 to the wall clock in microseconds
# (bash 5 EPOCHREALTIME, no fork; else date +%s%6N). Clock slews are far
# smaller than the differences measured here.
if [ -n "${EPOCHREALTIME:-}" ]; then
	now_us() { local t=$EPOCHREALTIME; printf -v "$1" '%s' "${t//[!0-9]/}"; }
else
	now_us() { printf -v "$1" '%s' "$(date +%s%6N)"; }
fi

# fmt_ms US prints microseconds as milliseconds with one decimal.
fmt_ms() {
	local us=$1
	printf '%d.%d' $(((us + 50) / 1000)) $((((us + 50) % 1000) / 100))
}

# median NUM... prints the median (mean of the middle two when even).
median() {
	local -a v
	mapfile -t v < <(printf '%s\n' "$@" | sort -n)
	local n=${#v[@]}
	if [ $((n % 2)) -eq 1 ]; then
		printf '%d' "${v[n / 2]}"
	else
		printf '%d' $(((v[n / 2 - 1] + v[n / 2]) / 2))
	fi
}

# minimum NUM... prints the smallest.
minimum() {
	printf '%s\n' "$@" | sort -n | head -n 1
}

# medians SAMPLES MED LEAST CMD...: for each CMD, sets MED[CMD] and
# LEAST[CMD] to the median and the minimum of the space-separated numbers
# in SAMPLES[CMD] (the three are names of associative arrays).
medians() {
	local -n _samples=$1 _med=$2 _least=$3
	shift 3
	local c
	for c in "$@"; do
		# shellcheck disable=SC2086 # the samples are space-separated numbers
		_med[$c]=$(median ${_samples[$c]})
		# shellcheck disable=SC2086
		_least[$c]=$(minimum ${_samples[$c]})
	done
}

# table_head WIDTH TITLE prints a blank line, "== TITLE" and the header
# of a table of table_row rows whose first column is WIDTH wide.
table_head() {
	echo
	echo "== $2"
	table_row "$1" command "median ms" "min ms" "ratio (rounds: $ROUNDS)"
}

# table_row WIDTH NAME MEDIAN MIN NOTE prints one row of the table.
table_row() {
	printf "%-${1}s %10s %10s   %s\n" "$2" "$3" "$4" "$5"
}
