#!/usr/bin/env bash
# Builds the release artifacts (scripts/package.sh, into a temporary
# directory) and installs this machine's architecture the ways users do:
# the wheel with pip --no-index into a fresh venv, with Debian's pipx and
# with uv (when installed), the archive unpacked, the .deb checked with
# dpkg-deb and installed with dpkg into a throwaway root. From each it runs
# the installed pyattach --version and pyattach doctor. As root, it also
# installs the .deb with apt-get into an overlay of a cached Debian root.
#
# Run by scripts/test.sh. With CI=true a missing tool fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_go

tmp=$(mktemp -d)
cleanup() {
	if [ -n "${overlay:-}" ] && mountpoint -q "$overlay"; then
		umount "$overlay" || umount -l "$overlay"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

passed=0 failed=0 skipped=0
# check NAME COMMAND...: runs COMMAND, prints ok or FAIL with its output.
check() {
	local name=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then
		passed=$((passed + 1))
		echo "ok    $name"
	else
		failed=$((failed + 1))
		echo "FAIL  $name"
		sed 's/^/      /' "$tmp/out"
	fi
}
# have TOOL WHAT: true when TOOL is installed; else WHAT is skipped, or
# with CI=true it fails.
have() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if [ "${CI:-}" = true ]; then
		failed=$((failed + 1))
		echo "FAIL  $2: $1 is not installed (CI=true)"
	else
		skipped=$((skipped + 1))
		echo "skip  $2: $1 is not installed"
	fi
	return 1
}

arch=$(go env GOARCH)
case $arch in
amd64) march=x86_64 ;;
arm64) march=aarch64 ;;
*)
	echo "$0: error: packages are built for amd64 and arm64, not $arch" >&2
	exit 1
	;;
esac
commit=$(git rev-parse HEAD)
dist=$tmp/dist
if ! scripts/package.sh "$dist" >"$tmp/package.log" 2>&1; then
	cat "$tmp/package.log" >&2
	echo "$0: error: scripts/package.sh failed" >&2
	exit 1
fi
# The installs and the installed pyattach see an empty home, and pip no
# package index.
export HOME=$tmp/home PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
mkdir -p "$HOME"

# installed NAME BIN: the installed pyattach tells the stamped release
# version and commit, its doctor runs, and it prints the reference pages
# README.md links to (they are not shipped as files).
installed() {
	check "$1: pyattach --version" version_ok "$2"
	check "$1: pyattach doctor" "$2" doctor
	check "$1: pyattach help security prints the reference page" bash -c \
		"'$2' help security | head -n 1 | grep -qx '# security: the debuggee is hostile'"
}
version_ok() {
	local v
	v=$("$1" --version)
	echo "$v"
	[[ $v =~ ^pyattach\ [0-9][^\ ]*\ \(commit\ ${commit:0:12},\ built\ [0-9]{4}-[0-9]{2}-[0-9]{2}T ]]
}

# --- checksums and file names -------------------------------------------
check "checksums.txt verifies" bash -c "cd '$dist' && sha256sum -c checksums.txt"
for a in amd64:x86_64 arm64:aarch64; do
	m=${a#*:} a=${a%:*}
	check "$a: archive, wheel and .deb built" bash -c "cd '$dist' && ls pyattach-linux-$a pyattach_*_linux_$a.tar.gz \
		pyattach-*-py3-none-manylinux_2_17_$m.manylinux2014_$m.musllinux_1_1_$m.whl pyattach_*_$a.deb"
	check "$a: static binary (no program interpreter)" bash -c "readelf -lW '$dist/pyattach-linux-$a' >'$tmp/phdrs' && ! grep -q INTERP '$tmp/phdrs'"
done
# macOS: an archive per architecture, holding the same files as Linux's
# and a 64-bit Mach-O executable of its architecture (magic 0xfeedfacf,
# CPU type x86_64 0x01000007 or arm64 0x0100000c, file type MH_EXECUTE).
for a in amd64:01000007 arm64:0100000c; do
	cpu=${a#*:} a=${a%:*}
	check "darwin/$a: archive holds a Mach-O $a executable" bash -c "
		cd '$dist' && ls pyattach-darwin-$a >/dev/null && t=\$(ls pyattach_*_darwin_$a.tar.gz) && s=\${t%.tar.gz} &&
		tar -tzf \$t | sort | sed \"s|^\$s/|STEM/|\" >'$tmp/darwin-$a.list' &&
		printf '%s\n' STEM/ STEM/LICENSE STEM/README.md STEM/completions/ STEM/completions/_pyattach STEM/completions/pyattach.bash \
			STEM/completions/pyattach.fish STEM/man/ STEM/man/pyattach.1 STEM/pyattach | diff -u - '$tmp/darwin-$a.list' &&
		tar -xzOf \$t \$s/pyattach | od -An -tx4 -N16 | tr -s ' ' | tee /dev/stderr | grep -qx ' feedfacf $cpu [0-9a-f]* 00000002'"
done

archive=$(ls "$dist"/pyattach_*_linux_"$arch".tar.gz)
wheel=$(ls "$dist"/pyattach-*-py3-none-manylinux_2_17_"$march".*.whl)
deb=$(ls "$dist"/pyattach_*_"$arch".deb)

# --- release archive ----------------------------------------------------
stem=$(basename "$archive" .tar.gz)
check "archive: contents" bash -c "tar -tzf '$archive' | sort >'$tmp/archive.list' && diff -u - '$tmp/archive.list' <<EOF
$stem/
$stem/LICENSE
$stem/README.md
$stem/completions/
$stem/completions/_pyattach
$stem/completions/pyattach.bash
$stem/completions/pyattach.fish
$stem/man/
$stem/man/pyattach.1
$stem/pyattach
EOF"
mkdir -p "$tmp/archive"
tar -xzf "$archive" -C "$tmp/archive"
installed archive "$tmp/archive/$stem/pyattach"
check "archive: README.md names pyattach help for the pages it links" \
	grep -q 'pyattach help TOPIC' "$tmp/archive/$stem/README.md"
check "archive: bash completion loads" env PATH="$tmp/archive/$stem:$PATH" \
	bash -c "source '$tmp/archive/$stem/completions/pyattach.bash' && complete -p pyattach"
if have groff "archive: man page renders without warnings"; then
	check "archive: man page renders without warnings" bash -c \
		"groff -man -ww -z -Tutf8 '$tmp/archive/$stem/man/pyattach.1' 2>&1 | { ! grep .; }"
fi

# --- wheel --------------------------------------------------------------
# The RECORD is checked here with Python's own zipfile, csv and hashlib,
# since pip does not verify it.
check "wheel: RECORD digests and sizes" python3 - "$wheel" <<'EOF'
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
record = [n for n in names if n.endswith(".dist-info/RECORD")]
assert len(record) == 1, names
rows = list(csv.reader(io.TextIOWrapper(z.open(record[0]), "utf-8")))
assert sorted(r[0] for r in rows) == sorted(names), (rows, names)
for path, digest, size in rows:
    if path == record[0]:
        assert digest == size == "", (path, digest, size)
        continue
    data = z.read(path)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert digest == want and int(size) == len(data), (path, digest, size)
script = [i for i in z.infolist() if ".data/scripts/" in i.filename]
assert len(script) == 1 and (script[0].external_attr >> 16) & 0o111, script
print("ok", len(rows), "files")
EOF
if have /usr/bin/python3 "wheel: pip install --no-index"; then
	/usr/bin/python3 -m venv "$tmp/venv"
	check "wheel: pip install --no-index" "$tmp/venv/bin/pip" install --no-index "$wheel"
	installed "wheel (pip)" "$tmp/venv/bin/pyattach"
	check "wheel: METADATA has the README as Markdown" "$tmp/venv/bin/python" -c '
import importlib.metadata as m
md = m.metadata("pyattach")
assert md["Description-Content-Type"] == "text/markdown", md["Description-Content-Type"]
assert md.get_payload().startswith("# pyattach"), md.get_payload()[:80]
assert md["Summary"], md'
fi
if have pipx "wheel: pipx install"; then
	# Offline, pipx cannot upgrade its shared pip (it says so and goes on).
	check "wheel: pipx install" env PIPX_HOME="$tmp/pipx" PIPX_BIN_DIR="$tmp/pipx-bin" pipx install "$wheel"
	installed "wheel (pipx)" "$tmp/pipx-bin/pyattach"
fi
# uv is not packaged by Debian 12: tested where it is installed.
if command -v uv >/dev/null 2>&1; then
	check "wheel: uv tool install" env UV_TOOL_DIR="$tmp/uv" UV_TOOL_BIN_DIR="$tmp/uv-bin" uv tool install --offline "$wheel"
	installed "wheel (uv)" "$tmp/uv-bin/pyattach"
else
	skipped=$((skipped + 1))
	echo "skip  wheel: uv tool install (uv is not installed; Debian 12 does not package it)"
fi

# --- .deb ----------------------------------------------------------------
check ".deb: control fields" bash -c "
	[ \"\$(dpkg-deb -f '$deb' Package)\" = pyattach ] &&
	[ \"\$(dpkg-deb -f '$deb' Architecture)\" = $arch ] &&
	[ -z \"\$(dpkg-deb -f '$deb' Depends)\" ] &&
	[ \"\$(dpkg-deb -f '$deb' Recommends)\" = gdb ] &&
	[ \"\$(dpkg-deb -f '$deb' Suggests)\" = 'lldb, elfutils' ] && dpkg-deb --info '$deb'"
check ".deb: contents" bash -c "dpkg-deb --contents '$deb' | awk '{print \$6}' >'$tmp/deb.list' && for f in \
	./usr/bin/pyattach \
	./usr/share/man/man1/pyattach.1.gz \
	./usr/share/bash-completion/completions/pyattach \
	./usr/share/zsh/vendor-completions/_pyattach \
	./usr/share/fish/vendor_completions.d/pyattach.fish \
	./usr/share/doc/pyattach/copyright; do grep -qx \"\$f\" '$tmp/deb.list' || { echo missing \$f; exit 1; }; done"
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
check ".deb: dpkg --root -i into a throwaway root" dpkg --root="$root" --log=/dev/null --force-not-root -i "$deb"
installed ".deb" "$root/usr/bin/pyattach"
if have man ".deb: man -l shows the page"; then
	check ".deb: man -l shows the page" bash -c "MANWIDTH=80 man -l '$root/usr/share/man/man1/pyattach.1.gz' | grep -q 'pyattach completion SHELL'"
	check ".deb: the man page has FILES, ENVIRONMENT, CONFIGURATION and SECURITY" bash -c \
		"MANWIDTH=80 man -l '$root/usr/share/man/man1/pyattach.1.gz' >'$tmp/man.txt' && for s in FILES ENVIRONMENT CONFIGURATION SECURITY; do grep -qx \$s '$tmp/man.txt' || exit 1; done"
fi

# apt-get install ./pyattach_...deb, as a user would, in a Debian 13 root
# made by scripts/make-roots.sh (as root: an overlay keeps it unchanged).
debroot=/var/cache/pyattach-test/roots/trixie
if [ "$(id -u)" -eq 0 ] && [ -x "$debroot/usr/bin/apt-get" ]; then
	overlay=$tmp/overlay/merged
	mkdir -p "$tmp/overlay/upper" "$tmp/overlay/work" "$overlay"
	if mount -t overlay overlay -o "lowerdir=$debroot,upperdir=$tmp/overlay/upper,workdir=$tmp/overlay/work" "$overlay"; then
		cp "$deb" "$overlay/tmp/"
		check ".deb: apt-get install ./$(basename "$deb") (Debian 13 root), nothing else pulled in" bash -c "
			chroot '$overlay' env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
				apt-get install -y --no-install-recommends -o Debug::NoLocking=1 './tmp/$(basename "$deb")' >'$tmp/apt.log' 2>&1
			s=\$?; cat '$tmp/apt.log'; [ \$s -eq 0 ] && grep -q '^0 upgraded, 1 newly installed' '$tmp/apt.log'"
		check ".deb (apt-get): pyattach --version" version_ok "$overlay/usr/bin/pyattach"
	else
		failed=$((failed + 1))
		echo "FAIL  .deb: apt-get install: cannot mount an overlay over $debroot"
	fi
elif [ "${CI:-}" = true ] && [ "$(id -u)" -eq 0 ]; then
	failed=$((failed + 1))
	echo "FAIL  .deb: apt-get install: no Debian root at $debroot (scripts/make-roots.sh makes it)"
else
	skipped=$((skipped + 1))
	echo "skip  .deb: apt-get install into a Debian root (needs root and scripts/make-roots.sh)"
fi

echo "scripts/test-package.sh: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
