#!/usr/bin/env bash
# The main job of pyattach on a built-in example: a --copies venv of the
# system python3 (the case where gdb's py-bt goes missing), a program
# sleeping inside nested functions, pyattach resolving its PID back to the
# real interpreter, and gdb showing the Python stack through pyattach
# where plain gdb cannot. Everything it makes is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

python=/usr/bin/python3
if [ ! -x "$python" ]; then
	need_debs python3
fi
# Debian and Ubuntu split venv support out of the interpreter package.
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
	minor=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	need_debs "python$minor-venv"
fi
need_go
# gdb, and the interpreter's debug symbols and gdb extension.
dbg=""
if [ "$(readlink -f "$python")" != "" ]; then
	base=$(basename "$(readlink -f "$python")")
	case $base in python3.[0-9]*) dbg="$base-dbg" ;; esac
fi
need_debs gdb ${dbg:+"$dbg"}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pyattach-demo.XXXXXX")
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

echo "==> building pyattach"
go build -o "$tmp/pyattach" ./cmd/pyattach

echo "==> $python -m venv --copies $tmp/venv"
"$python" -m venv --copies --without-pip "$tmp/venv"

write_app "$tmp/app.py" 600

echo "==> starting $tmp/venv/bin/python app.py"
"$tmp/venv/bin/python" "$tmp/app.py" >"$tmp/app.out" &
pid=$!
for _ in $(seq 1 100); do
	grep -q ready "$tmp/app.out" 2>/dev/null && break
	sleep 0.1
done

echo
echo "\$ pyattach resolve $pid"
"$tmp/pyattach" resolve "$pid"

echo
echo "\$ gdb -batch -p $pid -ex py-bt        # plain gdb: the venv's python is a copy"
gdb -nx -batch -p "$pid" -ex py-bt 2>&1 | grep -E 'py-bt|Undefined' || true

echo
echo "\$ pyattach gdb -p $pid -batch -ex py-bt"
"$tmp/pyattach" gdb -p "$pid" -batch -ex py-bt 2>&1 | grep -v -E '^\[|^warning: ' || true
