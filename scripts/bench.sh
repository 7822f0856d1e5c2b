#!/usr/bin/env bash
# bench.sh: whole-command timings of pyattach against the debuggers it
# feeds, on this machine, reported as medians and ratios.
#
#   scripts/bench.sh                       every section
#   scripts/bench.sh --only resolve-small  one section (comma-separate more)
#   scripts/bench.sh --list                the section names
#
# Environment: BENCH_ROUNDS (default 5) rounds per comparison,
# BENCH_LIBS (default 300) tiny shared objects in the many-libraries case,
# BENCH_PYTHON (default /usr/bin/python3.11) the interpreter under test,
# BENCH_PYATTACH a pyattach binary to time instead of building one.
# BENCH_DEBUGFILE (default: the build-id debug file of BENCH_PYTHON under
# /usr/lib/debug) the file the srcscan section scans.
# BENCH_ATTACH_THREADS (default 50) and BENCH_ATTACH_DEPTH (default 30)
# shape the process of the resolve-attach section.
# BENCH_STARTUP_ROUNDS (default 50) rounds of the startup section, whose
# runs take milliseconds.
# BENCH_TASKS_PYTHON a command that runs Python 3.14 or newer (words
# split at spaces, e.g. "chroot /var/cache/pyattach-test/roots/sid
# /usr/bin/python3.14"; default: python3.15 or python3.14 on PATH, else
# the sid root of scripts/make-roots.sh) and BENCH_TASKS (default 10000)
# the asyncio tasks of the dump-tasks section's process.
# BENCH_PYSTACK a command that runs pystack (words split at spaces, e.g.
# "chroot /srv/root /opt/pystack/bin/pystack"): the dump section then
# times `pystack remote PID` beside pyattach dump, on a 4-thread process
# started with BENCH_PYSTACK_PYTHON (default BENCH_PYTHON; e.g.
# "chroot /srv/root /usr/bin/python3", for a pystack that runs there).
# The pause section (scripts/bench_pause.sh) times pyattach dump,
# --native and --no-block on three shapes of process (50 threads x 30
# frames, 500 x 10, 1 x 5,000; BENCH_PAUSE_SHAPES, e.g. "1x5000", runs
# some), each with a probe thread that measures how
# long it was stopped, beside pystack remote, --native and --no-block when
# BENCH_PYSTACK is set; its processes run BENCH_PYSTACK_PYTHON too. The
# scale section dumps a process of 1,000 threads, one of
# BENCH_SCALE_TASKS (default 100000) asyncio tasks (BENCH_TASKS_PYTHON)
# and a core of BENCH_CORE_GB (default 8) GiB, mostly holes.
#
# Needs bash 4.4+, coreutils, Go (to build pyattach), gcc, gdb and the
# Python named above. Runs as root or with ptrace allowed, since gdb
# attaches to the processes this script starts. Everything it makes
# lives in one temporary directory, removed on exit with its processes.
#
# Adding a section: write cmd_* functions for the commands to time (they
# take the PID), label them in LABEL, write a section_NAME function that
# calls `compare`, and add NAME to SECTIONS.
# shellcheck disable=SC2317 # cmd_* and section_* are called indirectly
set -euo pipefail
shopt -s inherit_errexit

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

ROUNDS=${BENCH_ROUNDS:-5}
NLIBS=${BENCH_LIBS:-300}
PY=${BENCH_PYTHON:-/usr/bin/python3.11}

SECTIONS=(startup resolve-small resolve-manylibs resolve-attach gdb-pybt-small gdb-pybt-manylibs dump dump-tasks pause scale gcore bundle debuginfod srcscan)

usage() {
	sed -n '2,/^[^#]/{/^#/!d;/shellcheck/d;s/^# \{0,1\}//;p}' "$0"
}

only=()
while [ $# -gt 0 ]; do
	case $1 in
	--only)
		[ $# -ge 2 ] || { echo "$0: error: --only needs a section name" >&2; exit 2; }
		IFS=, read -r -a names <<<"$2"
		only+=("${names[@]}")
		shift 2
		;;
	--only=*)
		IFS=, read -r -a names <<<"${1#--only=}"
		only+=("${names[@]}")
		shift
		;;
	--list)
		printf '%s\n' "${SECTIONS[@]}"
		exit 0
		;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		echo "$0: error: unknown argument $1" >&2
		echo "  hint: $0 --help" >&2
		exit 2
		;;
	esac
done
for n in "${only[@]}"; do
	case " ${SECTIONS[*]} " in
	*" $n "*) ;;
	*)
		echo "$0: error: no section named $n; the sections are: ${SECTIONS[*]}" >&2
		exit 2
		;;
	esac
done
case $ROUNDS in
'' | *[!0-9]* | 0) echo "$0: error: BENCH_ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2 ;;
esac
STARTUP_ROUNDS=${BENCH_STARTUP_ROUNDS:-50}
case $STARTUP_ROUNDS in
'' | *[!0-9]* | 0) echo "$0: error: BENCH_STARTUP_ROUNDS must be a positive integer, not '$STARTUP_ROUNDS'" >&2; exit 2 ;;
esac
case $NLIBS in
'' | *[!0-9]* | 0) echo "$0: error: BENCH_LIBS must be a positive integer, not '$NLIBS'" >&2; exit 2 ;;
esac

# need_tool CMD DEB: CMD must be on PATH (or be a path); DEB is the
# Debian package that provides it.
need_tool() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if command -v dpkg-query >/dev/null 2>&1; then
		need_debs "$2"
	fi
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "$0: error: $1 is not installed" >&2
		echo "  hint: install the $2 package" >&2
		exit 1
	fi
}

need_go
need_tool gcc gcc
need_tool gdb gdb
need_tool "$PY" "$(basename "$PY")"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pyattach-bench.XXXXXX")
pids=()  # long-lived processes, killed on exit
busy=()  # short-lived workers still running, killed on exit too
cleanup() {
	local p
	for p in "${busy[@]}" "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${busy[@]}" "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	# A killed worker's last gcc may still be writing: retry a little.
	for p in 1 2 3 4 5 6 7 8 9 10; do
		rm -rf "$tmp" 2>/dev/null && break
		sleep 0.3
	done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ratio A B prints A/B with about three significant digits.
ratio() {
	local a=$1 b=$2 v
	[ "$b" -gt 0 ] || { printf 'n/a'; return; }
	v=$(((a * 1000000 + b / 2) / b)) # A/B in millionths
	if [ "$v" -ge 100000000 ]; then
		printf '%d' $(((v + 500000) / 1000000))
	elif [ "$v" -ge 10000000 ]; then
		v=$(((v + 50000) / 100000))
		printf '%d.%d' $((v / 10)) $((v % 10))
	elif [ "$v" -ge 10000 ]; then
		v=$(((v + 50) / 100))
		printf '%d.%04d' $((v / 10000)) $((v % 10000))
	else
		printf '0.%06d' "$v"
	fi
}

# start_python NAME EXE ARGS...: starts EXE ARGS... in the background,
# waits for it to print "ready" and sets the variable named NAME to its
# PID. The process is killed on exit.
start_python() {
	local var=$1 exe=$2 out pid i
	shift 2
	out="$tmp/$var.out"
	"$exe" "$@" >"$out" 2>&1 &
	pid=$!
	pids+=("$pid")
	for ((i = 0; i < 600; i++)); do
		if grep -qx ready "$out" 2>/dev/null; then
			printf -v "$var" '%s' "$pid"
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	echo "$0: error: $exe did not get ready; its output:" >&2
	sed 's/^/  /' "$out" >&2
	exit 1
}

# ---------------------------------------------------------------------
# The commands compared. Each takes the PID; output is discarded by
# compare, a non-zero status fails the run.

declare -A LABEL
LABEL[cmd_resolve]="pyattach resolve PID"
cmd_resolve() { "$PYATTACH" resolve "$1"; }
LABEL[cmd_resolve_json]="pyattach resolve --json PID"
cmd_resolve_json() { "$PYATTACH" resolve --json "$1"; }
LABEL[cmd_gdb_attach]="gdb -nx -batch -p PID"
cmd_gdb_attach() { gdb -nx -batch -p "$1"; }

# check_gdb_attach PID: gdb must really attach (ptrace allowed); prints
# how many shared libraries gdb sees. Serves as gdb's warm-up run too.
check_gdb_attach() {
	local out="$tmp/gdb-check.out"
	if ! gdb -nx -batch -p "$1" -ex 'info sharedlibrary' >"$out" 2>&1 ||
		grep -qE 'ptrace: |Could not attach|Operation not permitted' "$out"; then
		echo "$0: error: gdb cannot attach to process $1:" >&2
		sed 's/^/  /' "$out" >&2
		echo "  hint: run as root, or: echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope" >&2
		exit 1
	fi
	grep -cE '^0x[0-9a-f]+ ' "$out" || true
}

# module_counts PID prints "TOTAL WITH_BUILD_ID" for the modules
# `pyattach resolve --json` lists.
module_counts() {
	local json="$tmp/resolve.json"
	"$PYATTACH" resolve --json "$1" >"$json"
	if command -v jq >/dev/null 2>&1; then
		jq -r '(.modules // []) | "\(length) \([.[] | select(.build_id != "")] | length)"' "$json"
	else
		"$PY" -c '
import json, sys
mods = json.load(open(sys.argv[1])).get("modules") or []
print(len(mods), sum(1 for m in mods if m.get("build_id")))
' "$json"
	fi
}

# MED holds the medians of the last compare, by command.
declare -A MED

# compare TITLE PID BASELINE CMD...: one warm-up run of every command,
# then ROUNDS rounds running each command once, interleaved (the order
# rotates every round so no command always runs first). Prints median and
# minimum milliseconds and each median as a ratio of BASELINE's.
compare() {
	local title=$1 pid=$2 base=$3
	shift 3
	local -a cmds=("$@" "$base")
	local -A samples=()
	local c r i t0 t1 note n=${#cmds[@]}
	for c in "${cmds[@]}"; do
		"$c" "$pid" >/dev/null 2>&1 || { echo "$0: error: ${LABEL[$c]} failed for process $pid" >&2; exit 1; }
	done
	for ((r = 0; r < ROUNDS; r++)); do
		for ((i = 0; i < n; i++)); do
			c=${cmds[(i + r) % n]}
			now_us t0
			"$c" "$pid" >/dev/null 2>&1 || { echo "$0: error: ${LABEL[$c]} failed for process $pid" >&2; exit 1; }
			now_us t1
			samples[$c]+="$((t1 - t0)) "
		done
	done
	local -A med=() least=()
	medians samples med least "${cmds[@]}"
	for c in "${cmds[@]}"; do
		MED[$c]=${med[$c]}
	done
	table_head 34 "$title"
	for c in "${cmds[@]}"; do
		if [ "$c" = "$base" ]; then
			note="1 (baseline)"
		else
			note="$(ratio "${med[$c]}" "${med[$base]}") x ${LABEL[$base]}"
		fi
		table_row 34 "${LABEL[$c]}" "$(fmt_ms "${med[$c]}")" "$(fmt_ms "${least[$c]}")" "$note"
	done
	for c in "$@"; do
		if [ "${med[$c]}" -gt 0 ]; then
			echo "  ${LABEL[$c]} = $(ratio "${med[$c]}" "${med[$base]}") x ${LABEL[$base]} ($(ratio "${med[$base]}" "${med[$c]}") times faster)"
		fi
	done
}

# ---------------------------------------------------------------------
# The processes, started when a section first needs them.

SMALL_PID=
start_small() {
	[ -n "$SMALL_PID" ] && return 0
	"$PY" -m venv --copies --without-pip "$tmp/venv"
	write_app "$tmp/app.py" 3600
	start_python SMALL_PID "$tmp/venv/bin/python" "$tmp/app.py"
}

MANY_PID=
start_manylibs() {
	[ -n "$MANY_PID" ] && return 0
	local d="$tmp/libs" i w par t0 t1
	par=$(($(nproc) * 2))
	mkdir -p "$d"
	now_us t0
	# 2 x nproc workers, each compiling every par-th library in turn; only
	# they are waited for (a bare `wait` would wait for the Python
	# processes too).
	for ((w = 0; w < par; w++)); do
		(
			for ((i = w; i < NLIBS; i += par)); do
				[ -d "$d" ] || exit 0 # the run was interrupted
				printf 'int f%d(void) { return %d; }\n' "$i" "$i" >"$d/f$i.c"
				gcc -shared -fPIC -nostdlib -O0 -pipe -Wl,--build-id=sha1 -o "$(printf '%s/libpyattachbench%04d.so' "$d" "$i")" "$d/f$i.c"
			done
		) &
		busy+=("$!")
	done
	wait "${busy[@]}" || true
	busy=()
	now_us t1
	for ((i = 0; i < NLIBS; i++)); do
		[ -f "$(printf '%s/libpyattachbench%04d.so' "$d" "$i")" ] || { echo "$0: error: gcc failed to build library $i" >&2; exit 1; }
	done
	echo "built $NLIBS shared objects with gcc in $(fmt_ms $((t1 - t0))) ms"
	start_python MANY_PID "$PY" -c '
import ctypes, sys, time
d, n = sys.argv[1], int(sys.argv[2])
libs = [ctypes.CDLL("%s/libpyattachbench%04d.so" % (d, i)) for i in range(n)]
assert libs[-1]["f%d" % (n - 1)]() == n - 1
print("ready", flush=True)
time.sleep(3600)
' "$d" "$NLIBS"
}

# ---------------------------------------------------------------------
# The sections.

# Start-up: pyattach --version against a Go hello-world built here with
# the same Go and the same flags, both started as a whole process.
# Package init work (regular expressions, tables, embedded files) shows
# here. The issue's target: at most 2 x. A lone --version is answered
# before kong builds the command model; pyattach --help shows what every
# other command pays for that model on top.
LABEL[cmd_version]="pyattach --version"
cmd_version() { "$PYATTACH" --version; }
LABEL[cmd_help]="pyattach --help (kong's model)"
cmd_help() { "$PYATTACH" --help; }
LABEL[cmd_hello]="Go hello-world"
cmd_hello() { "$HELLO"; }

section_startup() {
	local d="$tmp/hello"
	mkdir -p "$d"
	printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$d/main.go"
	printf 'module hello\n\ngo 1.21\n' >"$d/go.mod"
	if ! (cd "$d" && GOFLAGS='' CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/hello-bin" .); then
		echo "$0: error: go build of the hello-world failed (see above)" >&2
		exit 1
	fi
	HELLO="$tmp/hello-bin"
	echo
	echo "startup: pyattach $(stat -c %s "$PYATTACH") bytes, hello-world $(stat -c %s "$HELLO") bytes"
	local ROUNDS=$STARTUP_ROUNDS
	compare "startup: pyattach --version vs a Go hello-world (target: at most 2 x)" - cmd_hello cmd_version cmd_help
}

# case_info NAME PID prints what the case's process looks like.
case_info() {
	local counts gdblibs
	counts=$(module_counts "$2")
	gdblibs=$(check_gdb_attach "$2")
	echo "$1: pid $2; pyattach resolve --json lists ${counts% *} modules, ${counts#* } with a build-id; gdb lists $gdblibs shared libraries"
}

section_resolve_small() {
	start_small
	case_info "small process ($tmp/venv/bin/python, a --copies venv of $PY, sleeping 3 frames deep)" "$SMALL_PID"
	compare "resolve-small: pyattach resolve vs gdb attach+detach, small process" "$SMALL_PID" cmd_gdb_attach cmd_resolve cmd_resolve_json
}

section_resolve_manylibs() {
	start_manylibs
	case_info "many libraries ($PY with $NLIBS gcc-built shared objects loaded by ctypes)" "$MANY_PID"
	compare "resolve-manylibs: pyattach resolve vs gdb attach+detach, $NLIBS extra libraries" "$MANY_PID" cmd_gdb_attach cmd_resolve cmd_resolve_json
}

# resolve-attach: the issue's goal for resolve, at most 0.01 x a bare gdb
# attach (gdb -nx -batch -p PID) to the same process, here one with
# BENCH_ATTACH_THREADS (default 50) threads each BENCH_ATTACH_DEPTH
# (default 30) Python frames deep. compare's warm-up run fills
# pyattach's build-id cache, as any earlier run on the machine would.
section_resolve_attach() {
	local n=${BENCH_ATTACH_THREADS:-50} depth=${BENCH_ATTACH_DEPTH:-30} pid r g
	case $n$depth in
	*[!0-9]* | '') echo "$0: error: BENCH_ATTACH_THREADS and BENCH_ATTACH_DEPTH must be positive integers" >&2; exit 2 ;;
	esac
	start_python ATTACH_PID "$PY" -c '
import sys, threading, time
n, depth = int(sys.argv[1]), int(sys.argv[2])
def rec(k, last):
    if k > 1:
        rec(k - 1, last)
    elif last:
        print("ready", flush=True)
        time.sleep(3600)
    else:
        time.sleep(3600)
for _ in range(n - 1):
    threading.Thread(target=rec, args=(depth, False), daemon=True).start()
sys.setrecursionlimit(depth + 100)
rec(depth, True)
' "$n" "$depth"
	pid=$ATTACH_PID
	echo
	echo "resolve-attach: pid $pid, $PY with $n threads each $depth Python frames deep"
	compare "resolve-attach: pyattach resolve vs a bare gdb attach, $n threads x $depth frames (goal: at most 0.01 x)" "$pid" cmd_gdb_attach cmd_resolve
	r=${MED[cmd_resolve]} g=${MED[cmd_gdb_attach]}
	if [ $((r * 100)) -le "$g" ]; then
		echo "  goal met: $(ratio "$r" "$g") x, at most 0.01 x"
	else
		echo "  goal not met: $(ratio "$r" "$g") x, want at most 0.01 x ($(fmt_ms $((g / 100))) ms)"
	fi
}

# py-bt through pyattach against the best hand-written gdb command line
# that gives the same output: the real interpreter as the program file (so
# gdb auto-loads its python3.X-gdb.py and finds its debug file), then
# attach. --fast skips reading unrelated shared libraries.
cmd_gdb_handwritten() { gdb -nx -batch -iex "file $PY_REAL" -p "$1" -ex py-bt; }
cmd_pyattach_gdb() { "$PYATTACH" gdb -nx -batch -p "$1" -ex py-bt; }
cmd_pyattach_gdb_fast() { "$PYATTACH" --fast gdb -nx -batch -p "$1" -ex py-bt; }
LABEL[cmd_gdb_handwritten]="gdb -iex 'file PY' -p PID -ex py-bt"
LABEL[cmd_pyattach_gdb]="pyattach gdb -p PID -ex py-bt"
LABEL[cmd_pyattach_gdb_fast]="pyattach --fast gdb ... py-bt"

# check_pybt PID: every command must print the Python frames.
check_pybt() {
	local c out
	for c in cmd_gdb_handwritten cmd_pyattach_gdb cmd_pyattach_gdb_fast; do
		out=$("$c" "$1" 2>&1) || true
		if ! grep -q '^  File "' <<<"$out"; then
			echo "$0: error: ${LABEL[$c]} printed no Python frames for process $1:" >&2
			echo "$out" | tail -n 20 >&2
			exit 1
		fi
	done
}

section_gdb_pybt_small() {
	start_small
	PY_REAL=$(readlink -f "$PY")
	check_pybt "$SMALL_PID"
	compare "gdb-pybt-small: py-bt via pyattach vs hand-written gdb, small process" "$SMALL_PID" cmd_gdb_handwritten cmd_pyattach_gdb cmd_pyattach_gdb_fast
}

section_gdb_pybt_manylibs() {
	start_manylibs
	PY_REAL=$(readlink -f "$PY")
	check_pybt "$MANY_PID"
	compare "gdb-pybt-manylibs: py-bt via pyattach vs hand-written gdb, $NLIBS extra libraries" "$MANY_PID" cmd_gdb_handwritten cmd_pyattach_gdb cmd_pyattach_gdb_fast
}

# Every thread's Python stack without DWARF: pyattach dump (gdb with
# -readnever, no shared library's symbols, _PyRuntime placed by pyattach)
# and pyattach --fast gdb ... py-bt when pyattach gdb loads its walker,
# against the best hand-written py-bt line (Debian's -dbg debug file and
# CPython's auto-loaded extension). The issue's target: at most 0.25 x.
LABEL[cmd_pyattach_dump]="pyattach dump PID"
THREADS_PID=
cmd_pyattach_dump() { "$PYATTACH" dump "$1"; }
LABEL[cmd_pyattach_gdb_fast_batch]="pyattach --fast gdb -p PID py-bt"
cmd_pyattach_gdb_fast_batch() { "$PYATTACH" --fast gdb -p "$1" -batch -ex py-bt; }

# frames_of prints the `File ..., line N, in F` lines of the first
# traceback in its input (the main thread's, in a dump). It reads all of
# its input, so that the writer never gets SIGPIPE.
frames_of() {
	awk 'done { next } /^  File "/ { print; seen = 1; next } seen && !/^    / { done = 1 }'
}

section_dump() {
	start_small
	PY_REAL=$(readlink -f "$PY")
	local want got c cmds=(cmd_pyattach_dump)
	want=$(cmd_gdb_handwritten "$SMALL_PID" 2>&1 | frames_of)
	if [ -z "$want" ]; then
		echo "$0: error: ${LABEL[cmd_gdb_handwritten]} printed no Python frames; install $(basename "$PY_REAL")-dbg" >&2
		exit 1
	fi
	# (b) only where pyattach gdb loads the walker: its script says so.
	if "$PYATTACH" --print --fast gdb -p "$SMALL_PID" -batch 2>/dev/null | grep -q pyattach_gdb; then
		cmds+=(cmd_pyattach_gdb_fast_batch)
	else
		echo "dump: pyattach --fast gdb ... py-bt skipped: this pyattach gdb does not load its stack walker"
	fi
	for c in "${cmds[@]}"; do
		got=$("$c" "$SMALL_PID" 2>&1 | frames_of)
		if [ "$got" != "$want" ]; then
			echo "$0: error: ${LABEL[$c]} printed other frames than ${LABEL[cmd_gdb_handwritten]}:" >&2
			diff <(echo "$want") <(echo "$got") | sed 's/^/  /' >&2
			exit 1
		fi
	done
	echo "dump: same main-thread frames as py-bt: $(wc -l <<<"$want") frames"
	compare "dump: Python stacks without DWARF vs hand-written py-bt, small process (target: at most 0.25 x)" "$SMALL_PID" cmd_gdb_handwritten "${cmds[@]}"

	# --native: one merged stack per thread, against gdb's own C stacks
	# (which read the -dbg debug file's DWARF) and gdb with no separate
	# debug file (the unwinding alone, "??" for static functions).
	if ! cmd_pyattach_dump_native "$SMALL_PID" 2>&1 | grep -q '^Stack (most recent call first):'; then
		echo "$0: error: ${LABEL[cmd_pyattach_dump_native]} printed no merged stack" >&2
		exit 1
	fi
	compare "dump --native: merged stacks vs gdb's thread apply all bt, small process" "$SMALL_PID" cmd_gdb_bt_all cmd_pyattach_dump_native cmd_gdb_bt_nodebug

	section_dump_readers
}
LABEL[cmd_pyattach_dump_native]="pyattach dump --native PID"
cmd_pyattach_dump_native() { "$PYATTACH" dump --native "$1"; }
LABEL[cmd_gdb_bt_all]="gdb -p PID thread apply all bt"
cmd_gdb_bt_all() { gdb -nx -batch -p "$1" -ex 'thread apply all bt'; }
LABEL[cmd_gdb_bt_nodebug]="same, no separate debug files"
cmd_gdb_bt_nodebug() { gdb -nx -batch -iex 'set debug-file-directory' -iex 'set auto-load off' -p "$1" -ex 'thread apply all bt'; }

# The direct reader (the default) and dump --locals against pystack
# remote when BENCH_PYSTACK names one, else against dump with gdb, on a
# process of 4 threads with locals. The issue's target: dump at most
# 0.5 x pystack remote, --locals at most 20% over dump.
LABEL[cmd_pyattach_dump_locals]="pyattach dump --locals PID"
cmd_pyattach_dump_locals() { "$PYATTACH" dump --locals "$1"; }
LABEL[cmd_pyattach_dump_gdb]="pyattach dump --reader gdb PID"
cmd_pyattach_dump_gdb() { "$PYATTACH" dump --reader gdb "$1"; }
LABEL[cmd_pystack]="pystack remote PID"
# shellcheck disable=SC2086 # BENCH_PYSTACK is a command line
cmd_pystack() { $BENCH_PYSTACK remote "$1"; }
LABEL[cmd_pystack_native]="pystack remote --native PID"
# shellcheck disable=SC2086 # BENCH_PYSTACK is a command line
cmd_pystack_native() { $BENCH_PYSTACK remote --native "$1"; }

THREADS_APP='import threading, time
def leaf(n):
    table = {"n": n, "items": list(range(8)), "name": "worker-%d" % n}
    time.sleep(3600)
def work(n):
    leaf(n)
for i in range(3):
    threading.Thread(target=work, args=(i,), daemon=True).start()
time.sleep(0.2)
print("ready", flush=True)
work(99)'

section_dump_readers() {
	local base=cmd_pyattach_dump_gdb i out cmds=(cmd_pyattach_dump cmd_pyattach_dump_locals)
	# shellcheck disable=SC2086 # BENCH_PYSTACK_PYTHON is a command line
	start_python THREADS_PID ${BENCH_PYSTACK_PYTHON:-$PY} -c "$THREADS_APP"
	if [ -n "${BENCH_PYSTACK:-}" ]; then
		base=cmd_pystack
		cmds+=(cmd_pyattach_dump_gdb)
		out=$(cmd_pystack "$THREADS_PID" 2>&1) || true
		grep -q 'in leaf' <<<"$out" || { echo "$0: error: ${LABEL[cmd_pystack]} shows no leaf frame:" >&2; echo "$out" >&2; exit 1; }
	else
		echo "dump: BENCH_PYSTACK not set: pyattach dump compared with its gdb reader"
	fi
	out=$("$PYATTACH" dump "$THREADS_PID" 2>&1) || true
	grep -q 'in leaf' <<<"$out" || { echo "$0: error: ${LABEL[cmd_pyattach_dump]} shows no leaf frame:" >&2; echo "$out" >&2; exit 1; }
	echo "dump -v, where the time goes (3 runs):"
	for ((i = 0; i < 3; i++)); do
		"$PYATTACH" dump -v "$THREADS_PID" 2>&1 >/dev/null | grep -E '^pyattach: (reader|resolve)' | sed 's/^/  /'
	done
	compare "dump: direct reader, 4 threads (target: at most 0.5 x pystack remote; --locals at most 1.2 x dump)" "$THREADS_PID" "$base" "${cmds[@]}"
	echo "  ${LABEL[cmd_pyattach_dump_locals]} = $(ratio "${MED[cmd_pyattach_dump_locals]}" "${MED[cmd_pyattach_dump]}") x ${LABEL[cmd_pyattach_dump]}"
	if [ -n "${BENCH_PYSTACK:-}" ]; then
		compare "dump --native: merged stacks vs pystack remote --native, 4 threads (target: at most 1.0 x)" "$THREADS_PID" cmd_pystack_native cmd_pyattach_dump_native
	fi
}

# Taking a core of a live 4-thread process: pyattach's writer
# (cmd/internal/gcore, through its bench command gcorebench) beside
# gdb -p PID -ex gcore, interleaved on one process. gcorebench prints how
# long the process was stopped; gdb holds it stopped from its attach to
# its detach, most of its wall time. gdb's gcore reads every page of
# every mapping, which maps the zero page into untouched stacks; the
# writer skips untouched pages, so its stop time is shown first on a
# process no gdb has read.
LABEL[cmd_gcore_gdb]="gdb -batch -p PID -ex gcore"
cmd_gcore_gdb() { gdb -nx -batch -p "$1" -ex "gcore $tmp/gdb.core"; }
LABEL[cmd_gcore_pyattach]="gcorebench PID (cmd/internal/gcore)"
cmd_gcore_pyattach() { "$GCOREBENCH" "$1" "$tmp/pyattach.core"; }

section_gcore() {
	local i line
	if [ -z "${GCOREBENCH:-}" ]; then
		go build -o "$tmp/gcorebench" ./cmd/internal/gcore/internal/gcorebench || { echo "$0: error: go build ./cmd/internal/gcore/internal/gcorebench failed" >&2; exit 1; }
		GCOREBENCH="$tmp/gcorebench"
	fi
	start_python GCORE_FRESH_PID "$PY" -c "$THREADS_APP"
	start_python GCORE_PID "$PY" -c "$THREADS_APP"
	echo
	echo "gcore: pyattach's writer on a fresh 4-thread $("$PY" -V 2>&1) process, 5 runs:"
	for ((i = 0; i < 5; i++)); do
		line=$("$GCOREBENCH" "$GCORE_FRESH_PID" "$tmp/pyattach.core") || { echo "$0: error: gcorebench failed" >&2; exit 1; }
		echo "  $line; $(du -k "$tmp/pyattach.core" | cut -f1) KB on disk"
	done
	compare "gcore: a core of a 4-thread process, pyattach's writer vs gdb's gcore" "$GCORE_PID" cmd_gcore_gdb cmd_gcore_pyattach
	echo "  pyattach's writer, after gdb's gcore read the same process: $("$GCOREBENCH" "$GCORE_PID" "$tmp/pyattach.core")"
	echo "  sizes: gdb's core $(($(stat -c %s "$tmp/gdb.core") / 1024)) KB ($(du -k "$tmp/gdb.core" | cut -f1) KB on disk), pyattach's $(($(stat -c %s "$tmp/pyattach.core") / 1024)) KB ($(du -k "$tmp/pyattach.core" | cut -f1) KB on disk)"
	rm -f "$tmp/gdb.core" "$tmp/pyattach.core"
}

# dump --tasks beside dump on a process of BENCH_TASKS asyncio tasks
# (testdata/asyncio/app.py: the workers, awaits and cycle of the tests,
# plus that many sleeping tasks) under Python 3.14+: the default (1,000
# tasks printed, all counted) and every task printed.
LABEL[cmd_pyattach_dump_tasks]="pyattach dump --tasks PID"
cmd_pyattach_dump_tasks() { "$PYATTACH" dump --tasks "$1"; }
LABEL[cmd_pyattach_dump_tasks_all]="pyattach dump --tasks --max-tasks 0"
cmd_pyattach_dump_tasks_all() { "$PYATTACH" dump --tasks --max-tasks 0 "$1"; }

# tasks_python prints the command that runs Python 3.14+ for dump-tasks,
# or nothing.
tasks_python() {
	local p roots=${PYATTACH_ROOTS:-/var/cache/pyattach-test/roots}
	if [ -n "${BENCH_TASKS_PYTHON:-}" ]; then
		echo "$BENCH_TASKS_PYTHON"
		return
	fi
	for p in python3.15 python3.14; do
		if command -v "$p" >/dev/null 2>&1; then
			command -v "$p"
			return
		fi
	done
	for p in python3.15 python3.14; do
		if [ -x "$roots/sid/usr/bin/$p" ]; then
			echo "chroot $roots/sid /usr/bin/$p"
			return
		fi
	done
}

# start_tasks VAR SECTION N: starts testdata/asyncio/app.py with N more
# sleeping tasks under tasks_python, checks that dump --tasks counts them
# all, and sets VAR to its PID, TASKS_PY to the Python's command and
# TASKS_TOTAL to the tasks counted. SECTION names the caller in errors.
start_tasks() {
	local var=$1 section=$2 n=$3 pid
	TASKS_PY=$(tasks_python)
	if [ -z "$TASKS_PY" ]; then
		echo "$0: error: $section needs Python 3.14 or newer, and none was found" >&2
		echo "  hint: set BENCH_TASKS_PYTHON, install python3.14, or make the test roots: sudo scripts/make-roots.sh" >&2
		exit 1
	fi
	# shellcheck disable=SC2086 # TASKS_PY is a command line
	start_python "$var" $TASKS_PY -c "$(cat testdata/asyncio/app.py)" "$n"
	pid=${!var}
	TASKS_TOTAL=$("$PYATTACH" dump --tasks --json --max-tasks 1 "$pid" | "$PY" -c 'import json, sys; print(json.load(sys.stdin).get("tasks_total", 0))')
	if [ "${TASKS_TOTAL:-0}" -lt "$n" ]; then
		echo "$0: error: ${LABEL[cmd_pyattach_dump_tasks]} found ${TASKS_TOTAL:-0} tasks, the process has more than $n" >&2
		"$PYATTACH" dump --tasks "$pid" 2>&1 | tail -n 5 | sed 's/^/  /' >&2
		exit 1
	fi
}

TASKS_PID=
section_dump_tasks() {
	local n=${BENCH_TASKS:-10000} py total
	case $n in
	'' | *[!0-9]*) echo "$0: error: BENCH_TASKS must be a number, not '$n'" >&2; exit 2 ;;
	esac
	start_tasks TASKS_PID dump-tasks "$n"
	py=$TASKS_PY total=$TASKS_TOTAL
	echo
	echo "dump-tasks: $py, $total asyncio tasks; dump -v --tasks --max-tasks 0, where the time goes:"
	"$PYATTACH" dump -v --tasks --max-tasks 0 "$TASKS_PID" 2>&1 >/dev/null | grep -E '^pyattach: (resolve|the walk)' | sed 's/^/  /'
	compare "dump --tasks beside dump, $total asyncio tasks" "$TASKS_PID" cmd_pyattach_dump cmd_pyattach_dump_tasks cmd_pyattach_dump_tasks_all
}

# pause and scale: defined in bench_pause.sh.
# shellcheck source=scripts/bench_pause.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_pause.sh"

# Fetching 32 debug files from a debuginfod server that answers each
# request after 100 ms: pyattach's client (parallel) against a
# sequential loop of debuginfod-find. Defined in bench_debuginfod.sh.
# shellcheck source=scripts/bench_debuginfod.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_debuginfod.sh"
section_debuginfod() {
	bench_debuginfod
}

# Listing the source files that the DWARF of PY's debug file names:
# detect/srcscan (unit headers, first DIEs and line table headers,
# streamed) against readelf --debug-dump=line (every line table, decoded).
# The debug file is the build-id one under /usr/lib/debug (Debian's
# python3.X-dbg), or BENCH_DEBUGFILE.
LABEL[cmd_srcscan]="scanbench DEBUGFILE (srcscan)"
cmd_srcscan() { "$SCANBENCH" "$1"; }
LABEL[cmd_readelf_line]="readelf --debug-dump=line DEBUGFILE"
cmd_readelf_line() { readelf --debug-dump=line "$1"; }

# peak_kb PROGRAM ARGS... prints the peak resident set size in KB of
# running PROGRAM (a real program, not a shell function), from GNU time.
peak_kb() {
	/usr/bin/time -f %M -o "$tmp/time.out" "$@" >/dev/null 2>&1 || { echo "$0: error: $* failed" >&2; exit 1; }
	tail -n 1 "$tmp/time.out"
}

section_srcscan() {
	need_tool readelf binutils
	local dbg=${BENCH_DEBUGFILE:-} id kb
	if [ -z "$dbg" ]; then
		id=$(readelf -n "$(readlink -f "$PY")" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1)
		[ -n "$id" ] || { echo "$0: error: $PY has no build-id note" >&2; exit 1; }
		dbg="/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	fi
	if [ ! -f "$dbg" ]; then
		echo "$0: error: no debug file $dbg for $PY" >&2
		echo "  hint: sudo apt-get install $(basename "$(readlink -f "$PY")")-dbg, or set BENCH_DEBUGFILE" >&2
		exit 1
	fi
	if [ -z "${SCANBENCH:-}" ]; then
		go build -o "$tmp/scanbench" ./detect/srcscan/internal/scanbench || { echo "$0: error: go build ./detect/srcscan/internal/scanbench failed" >&2; exit 1; }
		SCANBENCH="$tmp/scanbench"
	fi
	echo
	echo "srcscan: $dbg ($(($(stat -c %s "$dbg") / 1024)) KB on disk): $("$SCANBENCH" "$dbg" | sed 's/^.*: //')"
	compare "srcscan: source files of the DWARF, srcscan vs readelf" "$dbg" cmd_readelf_line cmd_srcscan
	if [ ! -x /usr/bin/time ] && command -v dpkg-query >/dev/null 2>&1; then
		need_debs time
	fi
	if [ -x /usr/bin/time ]; then
		echo "peak memory (max RSS, GNU time):"
		kb=$(peak_kb "$SCANBENCH" "$dbg")
		printf '  %-34s %8s KB\n' "${LABEL[cmd_srcscan]}" "$kb"
		kb=$(peak_kb readelf --debug-dump=line "$dbg")
		printf '  %-34s %8s KB\n' "${LABEL[cmd_readelf_line]}" "$kb"
	else
		echo "peak memory: n/a (install GNU time: the Debian package time)"
	fi
}

# bundle: a crash bundle of the small process (its core, modules, debug
# files, extension and sources) against gdb's gcore alone, which writes
# only the core; then the bundle's size.
LABEL[cmd_gcore]="gcore -o CORE PID"
cmd_gcore() { gcore -o "$tmp/bench-core" "$1"; }
LABEL[cmd_pyattach_bundle]="pyattach bundle PID -o FILE"
cmd_pyattach_bundle() { XDG_CACHE_HOME="$tmp/cache" "$PYATTACH" bundle "$1" -o "$tmp/bench.pyattach"; }

section_bundle() {
	need_tool gcore gdb
	start_small
	compare "bundle (process $SMALL_PID)" "$SMALL_PID" cmd_gcore cmd_pyattach_bundle
	echo "  bundle size: $(stat -c %s "$tmp/bench.pyattach") bytes; core alone: $(stat -c %s "$tmp/bench-core.$SMALL_PID") bytes"
	XDG_CACHE_HOME="$tmp/cache" "$PYATTACH" bundle "$SMALL_PID" -o "$tmp/bench.pyattach" 2>&1 | sed -n 's/^pyattach: /  /p'
}

# ---------------------------------------------------------------------

if [ -n "${BENCH_PYATTACH:-}" ]; then
	PYATTACH=$BENCH_PYATTACH
else
	# Built as scripts/package.sh builds the release binaries: static,
	# so the start-up figure has no dynamic loader in it (the hello-world
	# is static too).
	if ! CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/pyattach" ./cmd/pyattach; then
		echo "$0: error: go build ./cmd/pyattach failed (see above)" >&2
		exit 1
	fi
	PYATTACH="$tmp/pyattach"
fi

read -r load1 load5 load15 _ </proc/loadavg
echo "machine: $(nproc) cpus, $(uname -srm), load $load1 $load5 $load15; $(gdb --version | head -n 1); $("$PY" -V 2>&1) ($PY); $(go env GOVERSION)"

for s in "${SECTIONS[@]}"; do
	if [ ${#only[@]} -gt 0 ]; then
		case " ${only[*]} " in
		*" $s "*) ;;
		*) continue ;;
		esac
	fi
	"section_${s//-/_}"
done
