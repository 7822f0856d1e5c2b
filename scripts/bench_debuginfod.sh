#!/usr/bin/env bash
# bench_debuginfod.sh: fetching 32 debug files from a debuginfod server
# that takes 100 ms per request, with the debuginfod package in parallel
# (cmd/internal/debuginfod/internal/fetchbench) against elfutils' debuginfod-find
# run once per build-id: a sequential shell loop, and xargs -P 8 for the
# same parallelism. Each run starts from an empty cache; the commands run
# interleaved, ROUNDS rounds; medians, minimums and ratios are printed.
#
#   bash scripts/bench_debuginfod.sh       standalone (BENCH_ROUNDS, default 5)
#   . scripts/bench_debuginfod.sh          from scripts/bench.sh, then call
#   bench_debuginfod                       bench_debuginfod (uses $tmp, ROUNDS)
#
# Environment: BENCH_DEBUGINFOD_IDS (default 32) build-ids,
# BENCH_DEBUGINFOD_DELAY (default 100ms) the server's delay per request.
# Needs Go, gcc, binutils (objcopy, readelf) and debuginfod-find (Debian:
# debuginfod, or libdebuginfod1 + elfutils' debuginfod-find). The server
# is testdata/benchserver, built here; it listens on 127.0.0.1.
#
# pyattach's own `debuginfo` command is not timed yet: $pyattach, when
# bench.sh sets it, is unused here.

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # now_us, fmt_ms, medians, table_*

# bdf_ratio A B prints A/B with two decimals.
bdf_ratio() {
	[ "$2" -gt 0 ] || { printf 'n/a'; return; }
	local v=$((($1 * 100 + $2 / 2) / $2))
	printf '%d.%02d' $((v / 100)) $((v % 100))
}

bdf_need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "bench_debuginfod: error: $1 is not installed" >&2
		echo "  hint: sudo apt-get install -y $2" >&2
		return 1
	fi
}

# The commands compared. Each takes a fresh cache directory and fetches
# every build-id in BDF_IDS from BDF_URL; output is discarded.
bdf_cmd_fetchbench() {
	DEBUGINFOD_URLS=$BDF_URL DEBUGINFOD_CACHE_PATH=$1 "$BDF_DIR/fetchbench" -parallel 8 "${BDF_IDS[@]}"
}
bdf_cmd_loop() {
	local id
	for id in "${BDF_IDS[@]}"; do
		DEBUGINFOD_URLS=$BDF_URL DEBUGINFOD_CACHE_PATH=$1 debuginfod-find debuginfo "$id" || return 1
	done
}
bdf_cmd_xargs() {
	printf '%s\n' "${BDF_IDS[@]}" |
		DEBUGINFOD_URLS=$BDF_URL DEBUGINFOD_CACHE_PATH=$1 xargs -P 8 -n 1 debuginfod-find debuginfo
}

# bdf_check_cache DIR: the cache must hold every build-id's debuginfo.
bdf_check_cache() {
	local id
	for id in "${BDF_IDS[@]}"; do
		[ -s "$1/$id/debuginfo" ] || { echo "bench_debuginfod: error: $1/$id/debuginfo missing" >&2; return 1; }
	done
}

bench_debuginfod() {
	local root n delay i w par t0 t1 r c f cache run=0
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	n=${BENCH_DEBUGINFOD_IDS:-32}
	delay=${BENCH_DEBUGINFOD_DELAY:-100ms}
	BDF_DIR="$tmp/debuginfod"
	bdf_need gcc gcc || return 1
	bdf_need objcopy binutils || return 1
	bdf_need readelf binutils || return 1
	bdf_need debuginfod-find debuginfod || return 1
	bdf_need go golang-go || return 1
	mkdir -p "$BDF_DIR/src" "$BDF_DIR/srv"

	(cd "$root" && go build -o "$BDF_DIR/benchserver" ./testdata/benchserver &&
		go build -o "$BDF_DIR/fetchbench" ./cmd/internal/debuginfod/internal/fetchbench) || {
		echo "bench_debuginfod: error: go build failed (see above)" >&2
		return 1
	}

	# n distinct programs (distinct build-ids), their debug files split
	# off and named <build-id>.debug, nproc compilers at a time.
	now_us t0
	par=$(nproc)
	local -a workers=()
	for ((w = 0; w < par; w++)); do
		(
			for ((i = w; i < n; i += par)); do
				s="$BDF_DIR/src/p$i"
				printf '#include <stdio.h>\nint main(void) { printf("program %%d\\n", %d); return 0; }\n' "$i" >"$s.c"
				gcc -g -O0 -Wl,--build-id -o "$s" "$s.c" &&
					id=$(readelf -n "$s" | awk '/Build ID:/ {print $3; exit}') &&
					objcopy --only-keep-debug "$s" "$BDF_DIR/srv/$id.debug" || exit 1
			done
		) &
		workers+=("$!")
	done
	for w in "${workers[@]}"; do
		wait "$w" || { echo "bench_debuginfod: error: building the fixtures failed" >&2; return 1; }
	done
	now_us t1
	BDF_IDS=()
	for f in "$BDF_DIR"/srv/*.debug; do
		f=${f##*/}
		BDF_IDS+=("${f%.debug}")
	done
	[ ${#BDF_IDS[@]} -eq "$n" ] || { echo "bench_debuginfod: error: $n programs gave ${#BDF_IDS[@]} build-ids" >&2; return 1; }
	echo "built $n programs with gcc -g and split their debug files in $(fmt_ms $((t1 - t0))) ms"

	"$BDF_DIR/benchserver" -dir "$BDF_DIR/srv" -delay "$delay" >"$BDF_DIR/server.out" 2>"$BDF_DIR/server.err" &
	BDF_SERVER=$!
	if declare -p pids >/dev/null 2>&1; then
		pids+=("$BDF_SERVER") # bench.sh kills it on exit
	fi
	for ((i = 0; i < 100; i++)); do
		[ -s "$BDF_DIR/server.out" ] && break
		kill -0 "$BDF_SERVER" 2>/dev/null || break
		sleep 0.05
	done
	BDF_URL="http://$(head -n 1 "$BDF_DIR/server.out")"
	[ "$BDF_URL" != "http://" ] || {
		echo "bench_debuginfod: error: benchserver did not start:" >&2
		sed 's/^/  /' "$BDF_DIR/server.err" >&2
		return 1
	}

	local -A label=(
		[bdf_cmd_fetchbench]="fetchbench (Go client, 8 parallel)"
		[bdf_cmd_loop]="debuginfod-find, sequential loop"
		[bdf_cmd_xargs]="debuginfod-find, xargs -P 8"
	)
	local -a cmds=(bdf_cmd_fetchbench bdf_cmd_loop bdf_cmd_xargs)
	local -A samples=() med=() least=()
	# Warm-up, and the check that every command fills the cache.
	for c in "${cmds[@]}"; do
		cache="$BDF_DIR/cache.$((run++))"
		"$c" "$cache" >/dev/null 2>"$BDF_DIR/cmd.err" && bdf_check_cache "$cache" || {
			echo "bench_debuginfod: error: ${label[$c]} failed:" >&2
			sed 's/^/  /' "$BDF_DIR/cmd.err" >&2
			return 1
		}
		rm -rf "$cache"
	done
	for ((r = 0; r < ROUNDS; r++)); do
		for ((i = 0; i < ${#cmds[@]}; i++)); do
			c=${cmds[(i + r) % ${#cmds[@]}]}
			cache="$BDF_DIR/cache.$((run++))"
			now_us t0
			"$c" "$cache" >/dev/null 2>"$BDF_DIR/cmd.err" || {
				echo "bench_debuginfod: error: ${label[$c]} failed:" >&2
				sed 's/^/  /' "$BDF_DIR/cmd.err" >&2
				return 1
			}
			now_us t1
			samples[$c]+="$((t1 - t0)) "
			rm -rf "$cache"
		done
	done
	kill "$BDF_SERVER" 2>/dev/null || true
	wait "$BDF_SERVER" 2>/dev/null || true
	if declare -p pids >/dev/null 2>&1; then
		local -a keep=()
		for i in "${pids[@]}"; do
			[ "$i" = "$BDF_SERVER" ] || keep+=("$i")
		done
		pids=("${keep[@]}") # its PID may be reused before bench.sh exits
	fi
	BDF_SERVER=

	medians samples med least "${cmds[@]}"
	table_head 38 "debuginfod: $n build-ids, fresh cache each run, server delay $delay per request"
	for c in "${cmds[@]}"; do
		table_row 38 "${label[$c]}" "$(fmt_ms "${med[$c]}")" "$(fmt_ms "${least[$c]}")" \
			"$(bdf_ratio "${med[$c]}" "${med[bdf_cmd_fetchbench]}") x fetchbench"
	done
	echo "  fetchbench is $(bdf_ratio "${med[bdf_cmd_loop]}" "${med[bdf_cmd_fetchbench]}") times faster than the sequential loop," \
		"$(bdf_ratio "${med[bdf_cmd_xargs]}" "${med[bdf_cmd_fetchbench]}") times faster than xargs -P 8"
}

# Standalone: bash scripts/bench_debuginfod.sh
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	ROUNDS=${BENCH_ROUNDS:-5}
	case $ROUNDS in
	'' | *[!0-9]* | 0) echo "$0: error: BENCH_ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2 ;;
	esac
	if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
		PATH="/usr/local/go/bin:$PATH"
	fi
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/pyattach-bench.XXXXXX")
	BDF_SERVER=
	trap 'if [ -n "$BDF_SERVER" ]; then kill "$BDF_SERVER" 2>/dev/null || true; fi; rm -rf "$tmp"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	echo "machine: $(nproc) cpus, $(uname -srm); $(debuginfod-find --version 2>&1 | head -n 1); $(go env GOVERSION)"
	bench_debuginfod
fi
