# shellcheck shell=bash
# shellcheck disable=SC2154 # tmp, PYATTACH, PY and the rest are bench.sh's
# bench_pause.sh: the pause and scale sections of scripts/bench.sh, which
# sources this file (it uses bench.sh's $tmp, $PYATTACH, $PY, ROUNDS,
# LABEL, start_python, ratio, tasks_python and lib.sh's timing helpers;
# it is not run on its own).
#
# pause: how long a target stays stopped, as the target itself sees it,
# and the whole command's time, for pyattach dump, dump --native and
# dump --no-block beside pystack remote, remote --native and remote
# --no-block (BENCH_PYSTACK), on three shapes of process: 50 threads x 30
# frames, 500 threads x 10 frames, 1 thread 5,000 frames deep.
#
# scale: a process of 1,000 threads, one of 100,000 asyncio tasks
# (BENCH_SCALE_TASKS) and a core of 8 GiB (BENCH_CORE_GB): how long each
# dump takes, what `dump -v` says it cost, and that it stays within the
# default budget.

# ---------------------------------------------------------------------
# The probe: a thread of the target that wakes every 0.2 ms and keeps, in
# a 16-byte file shared with the bench, the longest gap between two of its
# wakes (int64 nanoseconds at offset 0) and how many times it has woken
# (uint64 at offset 8). The file reaches the target as an open descriptor
# (argv[1]), so a target in a chroot needs no path to it. pausectl (C,
# built here) sets the gap to 0 before a command ("reset") and after it
# ("read") waits until the probe has woken twice more, so that the gap
# spanning the command is in, then prints that gap in microseconds. The
# gap includes the probe's own 0.2 ms sleep and any wait for a CPU: the
# `nothing` row of each table (the same measure around a 0.5 s sleep of
# the bench's, the process left alone) is the floor on this machine now;
# the `one CPU busy` row (0.5 s of a shell loop spinning, no ptrace) shows
# what a reader's own CPU use alone costs the probe, on a busy machine:
# the floor that dump --no-block and pystack's --no-block stand on.
#
# The target: argv[2] threads (the main thread and argv[2]-1 more), each
# argv[3] Python frames deep (down() called argv[3] - 3 times under
# threading's 3 frames in a thread, argv[3] - 1 times under <module> in
# the main thread), asleep at the bottom; plus the probe thread.
PAUSE_APP='import mmap, os, struct, sys, threading, time
fd, nthreads, depth = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sys.setrecursionlimit(depth + 500)
shared = mmap.mmap(fd, 16)
os.close(fd)

def probe():
    last = time.monotonic_ns()
    wakes = 0
    while True:
        time.sleep(0.0002)
        now = time.monotonic_ns()
        gap, last = now - last, now
        wakes += 1
        if gap > struct.unpack_from("q", shared, 0)[0]:
            struct.pack_into("q", shared, 0, gap)
        struct.pack_into("Q", shared, 8, wakes)

gate = threading.Barrier(nthreads)

def down(n, main):
    if n > 1:
        return down(n - 1, main)
    gate.wait()
    if main:
        print("ready", flush=True)
    time.sleep(3600)

for i in range(nthreads - 1):
    threading.Thread(target=down, args=(depth - 3, False), name="worker-%d" % i, daemon=True).start()
threading.Thread(target=probe, name="pause-probe", daemon=True).start()
down(depth - 1, True)'

PAUSECTL_C='#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	if (argc != 3 || (strcmp(argv[1], "reset") && strcmp(argv[1], "read"))) {
		fprintf(stderr, "usage: pausectl reset|read FILE\n");
		return 2;
	}
	int fd = open(argv[2], O_RDWR);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	volatile int64_t *p = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (!strcmp(argv[1], "reset")) {
		p[0] = 0;
		return 0;
	}
	uint64_t w0 = (uint64_t)p[1];
	double give_up = now() + 30;
	while ((uint64_t)p[1] < w0 + 2) {
		if (now() > give_up) {
			fprintf(stderr, "pausectl: the probe did not wake for 30 s\n");
			return 1;
		}
		sched_yield();
	}
	printf("%lld\n", (long long)((p[0] + 500) / 1000));
	return 0;
}
'

PAUSECTL=
build_pausectl() {
	[ -n "$PAUSECTL" ] && return 0
	printf '%s' "$PAUSECTL_C" >"$tmp/pausectl.c"
	gcc -O2 -Wall -o "$tmp/pausectl" "$tmp/pausectl.c" || { echo "$0: error: gcc failed to build pausectl" >&2; exit 1; }
	PAUSECTL="$tmp/pausectl"
}

# start_shape VAR NAME THREADS DEPTH: starts the probe target (with
# BENCH_PYSTACK_PYTHON when set, so that pystack can read it, else PY),
# sets VAR to its PID and PROBE_FILE[PID] to its probe file.
declare -A PROBE_FILE
start_shape() {
	local var=$1 name=$2 threads=$3 depth=$4 f fd
	build_pausectl
	f="$tmp/probe-$name"
	head -c 16 /dev/zero >"$f"
	exec {fd}<>"$f"
	# shellcheck disable=SC2086 # BENCH_PYSTACK_PYTHON is a command line
	start_python "$var" ${BENCH_PYSTACK_PYTHON:-$PY} -c "$PAUSE_APP" "$fd" "$threads" "$depth"
	exec {fd}>&-
	PROBE_FILE[${!var}]=$f
}

# stop_shape PID: ends a probe target (they are big; one at a time).
stop_shape() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# The commands of the pause tables.
LABEL[cmd_idle]="nothing (0.5 s, process left alone)"
cmd_idle() { sleep 0.5; }
LABEL[cmd_busy]="one CPU busy (0.5 s, no ptrace)"
# (now_us's own local is t: the names here differ.)
cmd_busy() {
	local busy0 busy1
	now_us busy0
	busy1=$busy0
	while ((busy1 - busy0 < 500000)); do now_us busy1; done
}
LABEL[cmd_pyattach_dump_noblock]="pyattach dump --no-block PID"
cmd_pyattach_dump_noblock() { "$PYATTACH" dump --no-block "$1"; }
LABEL[cmd_pystack_noblock]="pystack remote --no-block PID"
# shellcheck disable=SC2086 # BENCH_PYSTACK is a command line
cmd_pystack_noblock() { $BENCH_PYSTACK remote --no-block "$1"; }

# pystack's command beside each of pyattach's, and the goals as ratios
# of pystack's median in millionths (pause, total; empty: no goal).
declare -A PEER=([cmd_pyattach_dump]=cmd_pystack [cmd_pyattach_dump_native]=cmd_pystack_native [cmd_pyattach_dump_noblock]=cmd_pystack_noblock)
declare -A GOAL_PAUSE=([cmd_pyattach_dump]=100000 [cmd_pyattach_dump_native]=200000)
declare -A GOAL_TOTAL=([cmd_pyattach_dump]=300000 [cmd_pyattach_dump_native]=700000)

# run_checked CMD PID OUT: runs CMD PID with its output in OUT; a
# failure or a partial walk (exit code 3) stops the run.
run_checked() {
	local rc=0
	"$1" "$2" >"$3" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$0: error: ${LABEL[$1]} failed for process $2 (exit code $rc):" >&2
		tail -n 5 "$3" | sed 's/^/  /' >&2
		exit 1
	fi
}

# compare_pause TITLE PID CMD...: one warm-up run of each command (its
# output must show down(), the shapes' function, unless it is cmd_idle
# or cmd_busy),
# then ROUNDS interleaved rounds (the order rotates every round), each
# run between a reset and a read of the probe. Prints for each command
# the median (and least) pause and total time, and for pyattach's, the
# ratios to pystack's where it ran, with the goals.
compare_pause() {
	local title=$1 pid=$2
	shift 2
	local -a cmds=("$@")
	local -A ps=() ts=() pmed=() pmin=() tmed=() tmin=()
	local c r i t0 t1 gap n=${#cmds[@]} f=${PROBE_FILE[$pid]} out="$tmp/pause.out"
	for c in "${cmds[@]}"; do
		run_checked "$c" "$pid" "$out"
		if [ "$c" != cmd_idle ] && [ "$c" != cmd_busy ] && ! grep -q 'in down' "$out"; then
			echo "$0: error: ${LABEL[$c]} shows no down() frame for process $pid:" >&2
			head -n 20 "$out" | sed 's/^/  /' >&2
			exit 1
		fi
	done
	for ((r = 0; r < ROUNDS; r++)); do
		for ((i = 0; i < n; i++)); do
			c=${cmds[(i + r) % n]}
			"$PAUSECTL" reset "$f"
			now_us t0
			run_checked "$c" "$pid" "$out"
			now_us t1
			gap=$("$PAUSECTL" read "$f") || { echo "$0: error: pausectl read failed" >&2; exit 1; }
			ps[$c]+="$gap "
			ts[$c]+="$((t1 - t0)) "
		done
	done
	medians ps pmed pmin "${cmds[@]}"
	medians ts tmed tmin "${cmds[@]}"
	echo
	echo "== $title"
	printf '%-36s %9s %8s %9s %8s   %s\n' command "pause ms" "(least)" "total ms" "(least)" "rounds: $ROUNDS"
	local note peer tm tl
	for c in "${cmds[@]}"; do
		note='' tm=$(fmt_ms "${tmed[$c]}") tl=$(fmt_ms "${tmin[$c]}")
		if [ "$c" = cmd_idle ]; then
			note="(the floor: the probe's own sleeps and waits for a CPU)" tm=- tl=-
		elif [ "$c" = cmd_busy ]; then
			note="(the floor beside a reader's CPU use)" tm=- tl=-
		fi
		printf '%-36s %9s %8s %9s %8s   %s\n' "${LABEL[$c]}" "$(fmt_ms "${pmed[$c]}")" "$(fmt_ms "${pmin[$c]}")" "$tm" "$tl" "$note"
	done
	for c in "${cmds[@]}"; do
		peer=${PEER[$c]:-}
		[ -n "$peer" ] || continue
		if [ -n "${pmed[$peer]:-}" ]; then
			echo "  ${LABEL[$c]}: pause $(ratio "${pmed[$c]}" "${pmed[$peer]}") x pystack's$(goal "${pmed[$c]}" "${pmed[$peer]}" "${GOAL_PAUSE[$c]:-}"), total $(ratio "${tmed[$c]}" "${tmed[$peer]}") x$(goal "${tmed[$c]}" "${tmed[$peer]}" "${GOAL_TOTAL[$c]:-}")"
		fi
		if [ "$c" = cmd_pyattach_dump_noblock ] && [ -n "${pmed[cmd_busy]:-}" ]; then
			echo "  ${LABEL[$c]}: pause $(fmt_ms "${pmed[$c]}") ms against $(fmt_ms "${pmed[cmd_idle]}") ms idle and $(fmt_ms "${pmed[cmd_busy]}") ms with one CPU busy (goal: about the floor, the process never stopped)"
		fi
	done
}

# goal A B LIMIT prints " (goal <= LIMIT: met|missed)" for the ratio A/B,
# LIMIT in millionths; nothing when LIMIT is empty.
goal() {
	[ -n "$3" ] || return 0
	local lim
	lim=$(printf '%d.%d' $(($3 / 1000000)) $((($3 % 1000000) / 100000)))
	if [ "$2" -gt 0 ] && [ $(($1 * 1000000)) -le $(($3 * $2)) ]; then
		printf ' (goal <= %s: met)' "$lim"
	else
		printf ' (goal <= %s: missed)' "$lim"
	fi
}

# load_line WHEN prints the machine's load now.
load_line() {
	local l1 l5 l15 procs
	read -r l1 l5 l15 procs _ </proc/loadavg
	echo "load $1: $l1 $l5 $l15 (1, 5, 15 min; $procs runnable/total tasks) on $(nproc) cpus; $(uptime | sed 's/^ *//')"
}

# has_noblock: this pyattach's dump takes --no-block.
# (The help is read whole first: grep -q ending early would give
# pyattach SIGPIPE and the pipeline, under pipefail, a failure.)
has_noblock() {
	local h
	h=$("$PYATTACH" dump --help 2>&1) || true
	[[ $h == *--no-block* ]]
}

section_pause() {
	local shape name threads depth cmds pyv
	echo
	echo "pause: the process as its probe thread sees it (a thread waking every 0.2 ms; the longest gap around each command)"
	load_line "at the start"
	# shellcheck disable=SC2086 # BENCH_PYSTACK_PYTHON is a command line
	pyv=$(${BENCH_PYSTACK_PYTHON:-$PY} -V 2>&1)
	cmds=(cmd_idle cmd_busy cmd_pyattach_dump cmd_pyattach_dump_native)
	if has_noblock; then
		cmds+=(cmd_pyattach_dump_noblock)
	else
		echo "pause: this pyattach has no dump --no-block: its rows are left out"
	fi
	if [ -n "${BENCH_PYSTACK:-}" ]; then
		cmds+=(cmd_pystack cmd_pystack_native cmd_pystack_noblock)
	else
		echo "pause: BENCH_PYSTACK not set: pyattach's own figures only, no pystack to compare with"
	fi
	for shape in ${BENCH_PAUSE_SHAPES:-50x30 500x10 1x5000}; do
		case $shape in
		[1-9]*x[1-9]*) ;;
		*) echo "$0: error: BENCH_PAUSE_SHAPES: $shape is not THREADSxFRAMES" >&2; exit 2 ;;
		esac
		threads=${shape%x*} depth=${shape#*x}
		name="shape$shape"
		start_shape SHAPE_PID "$name" "$threads" "$depth"
		compare_pause "pause, $threads thread(s) x $depth frames (+ the probe thread), $pyv (${BENCH_PYSTACK_PYTHON:-$PY}), pid $SHAPE_PID" "$SHAPE_PID" "${cmds[@]}"
		echo "  pyattach dump -v, where the time goes (1 run):"
		"$PYATTACH" dump -v "$SHAPE_PID" 2>&1 >/dev/null | grep -E '^pyattach: (reader|resolve|the walk)' | sed 's/^/    /' || true
		stop_shape "$SHAPE_PID"
	done
	echo
	load_line "at the end"
}

# ---------------------------------------------------------------------
# scale

# dump_costs TITLE ARGS...: runs pyattach dump -v ARGS... (the target
# last), prints the wall time, exit code and `-v`'s step and cost lines,
# and says so when the walk did not complete within the default budget
# (exit code 3, "output is partial"), counting it in SCALE_MISSED.
SCALE_MISSED=0
dump_costs() {
	local title=$1 t0 t1 rc=0 err="$tmp/scale.err" args
	shift
	args=("${@:1:$#-1}")
	now_us t0
	"$PYATTACH" dump -v "$@" >"$tmp/scale.out" 2>"$err" || rc=$?
	now_us t1
	echo "  $title: pyattach dump -v${args[*]:+ ${args[*]}} TARGET: $(fmt_ms $((t1 - t0))) ms, exit code $rc, $(wc -l <"$tmp/scale.out") lines out"
	grep -E '^pyattach: (reader|resolve|the walk|walk)' "$err" | sed 's/^/    /' || true
	if [ "$rc" -eq 3 ] || grep -qE 'output is partial' "$err"; then
		echo "    NOT within the default budget: the output is partial"
		SCALE_MISSED=$((SCALE_MISSED + 1))
	elif [ "$rc" -ne 0 ]; then
		echo "$0: error: $title failed (exit code $rc):" >&2
		tail -n 5 "$err" | sed 's/^/  /' >&2
		exit 1
	fi
}

# time_rounds TITLE ARGS...: ROUNDS runs of pyattach ARGS..., median and
# least wall time; a partial walk (exit code 3) counts, and is said.
time_rounds() {
	local title=$1 r t0 t1 rc s=() partial=''
	shift
	for ((r = 0; r < ROUNDS; r++)); do
		rc=0
		now_us t0
		"$PYATTACH" "$@" >/dev/null 2>&1 || rc=$?
		now_us t1
		case $rc in
		0) ;;
		3) partial=' (partial: the budget ran out)' ;;
		*) echo "$0: error: pyattach $* failed (exit code $rc)" >&2; exit 1 ;;
		esac
		s+=("$((t1 - t0))")
	done
	printf '  %-44s median %8s ms, least %8s ms (%d runs)%s\n' "$title" "$(fmt_ms "$(median "${s[@]}")")" "$(fmt_ms "$(minimum "${s[@]}")")" "$ROUNDS" "$partial"
}

# The process of the core: CORE_GB GiB of private anonymous memory, one
# page in every 256 (1 MiB) written (a byte pattern), the rest never
# touched; and 4 threads sleeping in Python.
CORE_APP='import mmap, sys, threading, time
size = int(sys.argv[1]) << 30
big = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, size, 1 << 20):
    big[off:off + 8] = (off >> 20).to_bytes(8, "little")
def leaf(n):
    time.sleep(3600)
for i in range(3):
    threading.Thread(target=leaf, args=(i,), daemon=True).start()
print("ready", flush=True)
leaf(99)'

section_scale() {
	local n=${BENCH_SCALE_TASKS:-100000} gb=${BENCH_CORE_GB:-8} core line
	case $n in '' | *[!0-9]*) echo "$0: error: BENCH_SCALE_TASKS must be a number, not '$n'" >&2; exit 2 ;; esac
	case $gb in '' | *[!0-9]* | 0) echo "$0: error: BENCH_CORE_GB must be a positive number, not '$gb'" >&2; exit 2 ;; esac
	echo
	echo "scale: dumps of big processes and a big core, within the default budget (--max-reads 500000, --timeout 20s)"
	load_line "at the start"

	# 1,000 threads, 10 frames each.
	start_shape SCALE_PID scale1000 1000 10
	echo
	# shellcheck disable=SC2086 # BENCH_PYSTACK_PYTHON is a command line
	echo "1,000 threads x 10 frames (+ the probe thread), $(${BENCH_PYSTACK_PYTHON:-$PY} -V 2>&1), pid $SCALE_PID:"
	dump_costs "dump" "$SCALE_PID"
	dump_costs "dump --native" --native "$SCALE_PID"
	local cmds=(cmd_idle cmd_busy cmd_pyattach_dump cmd_pyattach_dump_native)
	has_noblock && cmds+=(cmd_pyattach_dump_noblock)
	compare_pause "scale: 1,000 threads x 10 frames, pid $SCALE_PID" "$SCALE_PID" "${cmds[@]}"
	stop_shape "$SCALE_PID"

	# 100,000 asyncio tasks.
	start_tasks STASKS_PID scale "$n"
	echo
	echo "$n sleeping asyncio tasks (and the app's 13), $TASKS_PY, pid $STASKS_PID: dump --tasks counts $TASKS_TOTAL"
	dump_costs "dump --tasks (1,000 printed)" --tasks "$STASKS_PID"
	dump_costs "dump --tasks --max-tasks 0 (all printed)" --tasks --max-tasks 0 "$STASKS_PID"
	time_rounds "pyattach dump PID" dump "$STASKS_PID"
	time_rounds "pyattach dump --tasks PID" dump --tasks "$STASKS_PID"
	time_rounds "pyattach dump --tasks --max-tasks 0 PID" dump --tasks --max-tasks 0 "$STASKS_PID"
	kill "$STASKS_PID" 2>/dev/null || true
	wait "$STASKS_PID" 2>/dev/null || true

	# A core of gb GiB, written by pyattach's core writer (cmd/internal/gcore).
	if [ -z "${GCOREBENCH:-}" ]; then
		go build -o "$tmp/gcorebench" ./cmd/internal/gcore/internal/gcorebench || { echo "$0: error: go build ./cmd/internal/gcore/internal/gcorebench failed" >&2; exit 1; }
		GCOREBENCH="$tmp/gcorebench"
	fi
	start_python SCORE_PID "$PY" -c "$CORE_APP" "$gb"
	core="$tmp/scale.core"
	line=$("$GCOREBENCH" "$SCORE_PID" "$core") || { echo "$0: error: gcorebench failed" >&2; exit 1; }
	kill "$SCORE_PID" 2>/dev/null || true
	wait "$SCORE_PID" 2>/dev/null || true
	echo
	echo "a core of $gb GiB of anonymous memory (one page in 256 written, the rest never touched: holes in the file) and 4 threads of $("$PY" -V 2>&1) asleep:"
	echo "  written by cmd/internal/gcore: $line"
	echo "  core: $(stat -c %s "$core") bytes, $(du -k "$core" | cut -f1) KB on disk"
	dump_costs "dump" "$core"
	dump_costs "dump --native" --native "$core"
	time_rounds "pyattach dump CORE" dump "$core"
	time_rounds "pyattach dump --native CORE" dump --native "$core"
	rm -f "$core"
	echo
	if [ "$SCALE_MISSED" -gt 0 ]; then
		echo "scale: $SCALE_MISSED of the dumps above did NOT complete within the default budget"
	else
		echo "scale: every dump above completed within the default budget"
	fi
	load_line "at the end"
}
