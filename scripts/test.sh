#!/usr/bin/env bash
# Installs what the tests need (Debian packages, as root with apt-get, or
# prints the apt-get line), then runs gofmt, go vet, the walker's lint
# (pyflakes) and unit tests (pytest), and every Go test: unit tests, fuzz
# seed corpora, testscript CLI tests and the integration tests that
# attach real gdb/lldb to real Python processes.
#
# With CI=true a missing tool fails the tests instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# gdb, lldb (+ its Python), Debian's python3.11 with debug symbols and
# the debug build, venv support, elfutils and a debuginfod server, a C
# compiler and binutils for ELF fixtures, zip for debug-symbol packages,
# util-linux for unshare and pivot_root, podman and runc for a real
# container engine; clang-14, lld-14 and llvm-14 (dsymutil, llvm-strip,
# llvm-lipo) for the Mach-O fixtures; zsh, fish, groff and man for the completion scripts
# and the man page, pipx for the wheel (test-package.sh); pytest and
# pyflakes for the walker's unit tests and lint.
# Not lldb-19 (lldb-dap-19 is a file of it): on Debian 12 its
# python3-lldb-19 conflicts with python3-lldb-14 (both are
# python3-lldb-x.y, the one /usr/lib/python3/dist-packages/lldb), so
# installing either removes the other; lldb 19 and lldb-dap-19 belong in
# the trixie root (Debian 13 ships lldb-19), as sid's lldb-22 is in
# sid's (make-roots.sh).
need_debs gdb lldb python3-lldb-14 python3.11 python3.11-dbg python3.11-venv \
	elfutils debuginfod gcc g++ binutils zip unzip util-linux procps podman runc \
	zsh fish groff-base man-db pipx python3-venv clang-14 lld-14 llvm-14 \
	python3-pytest pyflakes3
[ "$(id -u)" -ne 0 ] || scripts/make-roots.sh # Debian's 3.13-3.15 + -dbg, gdb and lldb-dap (sid's 22, trixie's 19) in cached debootstrap roots
need_go
# CPython's upstream sources for Debian's python3.11 (a srcmap test).
need_deb_src python3.11 || [ "${CI:-}" != true ] || exit 1

unformatted=$(gofmt -l cmd detect gdbgen lldbgen venv 2>/dev/null || true)
if [ -n "$unformatted" ]; then
	echo "scripts/test.sh: these files need gofmt -w:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
# macOS: pyattach builds for darwin without cgo, and go vet passes there
# (Linux-only code stays behind build tags; see README's install section).
for arch in amd64 arm64; do
	CGO_ENABLED=0 GOOS=darwin GOARCH=$arch go build -o /dev/null ./cmd/pyattach
	CGO_ENABLED=0 GOOS=darwin GOARCH=$arch go vet ./...
done
# The walker's lint and unit tests, on Debian's python3 (the Python gdb
# and lldb run the walker in), whatever python3 comes first on PATH.
# pyflakes fails on any finding; pytest fails when it collects no test.
/usr/bin/python3 -m pyflakes detect/pywalk/py
/usr/bin/python3 -m pytest -q -p no:cacheprovider detect/pywalk/py/tests
# cmd/pyattach alone runs for more than go test's default 10 minutes on a
# loaded 2-core machine (real gdb, lldb, podman and roots).
go test -count=1 -timeout 60m "$@" ./...
# The release artifacts, installed the ways users install them.
scripts/test-package.sh
