#!/usr/bin/env bash
# Builds pyattach's release artifacts for linux and darwin (macOS), amd64
# and arm64, into DIR (default dist/):
#
#   pyattach-OS-ARCH                             binary (CGO_ENABLED=0, -trimpath; static on Linux)
#   pyattach_VERSION_OS_ARCH.tar.gz              binary, README, LICENSE, completions, man page
#   pyattach-PEP440-py3-none-manylinux...whl     pip / pipx / uv tool install
#   pyattach_DEBVERSION_ARCH.deb                 apt-get install ./pyattach_...deb
#   checksums.txt                                sha256sum of all of the above
#
# The version comes from git describe (tags vX.Y.Z); without a tag it is
# 0.0.0 plus the number of commits and the commit. Every time stamp is
# SOURCE_DATE_EPOCH, by default the commit's time, so the same commit
# gives the same bytes.
#
# Usage: scripts/package.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_go

out=${1:-dist}
for tool in git tar gzip sha256sum dpkg-deb; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$0: error: $tool is not installed" >&2
		echo "  hint: on Debian or Ubuntu: sudo apt-get install git tar gzip coreutils dpkg" >&2
		exit 1
	fi
done

# --- versions -------------------------------------------------------------
if ! git rev-parse --verify -q HEAD >/dev/null; then
	echo "$0: error: the version comes from git, and this is not a git checkout with a commit" >&2
	echo "  hint: run it in a clone of the repository (git clone https://github.com/pyattach/pyattach)" >&2
	exit 1
fi
commit=$(git rev-parse HEAD)
dirty=
if [ -n "$(git status --porcelain)" ]; then
	dirty=1
fi
if describe=$(git describe --tags --long --match 'v[0-9]*' 2>/dev/null); then
	# vX.Y.Z-N-gHASH
	hash=${describe##*-g}
	rest=${describe%-g*}
	n=${rest##*-}
	base=${rest%-*}
	base=${base#v}
else
	base=0.0.0
	n=$(git rev-list --count HEAD)
	hash=$(git rev-parse --short=7 HEAD)
fi
if ! [[ $base =~ ^[0-9]+(\.[0-9]+)*$ ]]; then
	echo "$0: error: the tag v$base is not a release version vX.Y.Z" >&2
	echo "  hint: tag releases as v1.2.3 (git tag -a v1.2.3)" >&2
	exit 1
fi
if [ "$n" = 0 ] && [ -z "$dirty" ]; then
	version=$base # pyattach --version and the archives
	pyversion=$base
	debversion=$base
else
	version=$base-$n-g$hash${dirty:+-dirty}
	pyversion=$base.post$n+g$hash${dirty:+.dirty}
	debversion=$base+git$n.g$hash${dirty:+.dirty}
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
echo "$0: pyattach $version (wheel $pyversion, deb $debversion), commit $commit, $date" >&2

summary="Make native debugging of Python processes with gdb and lldb work the first time"
homepage=https://github.com/pyattach/pyattach
# The .deb's Maintainer: PYATTACH_MAINTAINER, else whoever builds it.
maintainer=${PYATTACH_MAINTAINER:-}
if [ -z "$maintainer" ]; then
	maintainer="$(git config user.name || echo 'The pyattach authors') <$(git config user.email || echo pyattach@localhost)>"
fi

mkdir -p "$out"
rm -f "$out"/pyattach-linux-* "$out"/pyattach-darwin-* "$out"/pyattach_*.tar.gz "$out"/pyattach-*.whl "$out"/pyattach_*.deb "$out"/checksums.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every file of an archive or package gets the same owner and time.
stamp() { find "$@" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +; }
targz() { # targz OUT DIR NAME: DIR/NAME as OUT, reproducibly
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
		--format=gnu -C "$2" -cf - "$3" | gzip -9n >"$1"
}

# --- binaries ---------------------------------------------------------------
ldflags="-s -w -X main.version=$version -X main.commit=$commit -X main.date=$date"
for os in linux darwin; do
	for arch in amd64 arm64; do
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
			-ldflags "$ldflags" -o "$out/pyattach-$os-$arch" ./cmd/pyattach
	done
done

# Completions and the man page come from the binary itself: one built for
# this machine, with the same version.
host=$work/host/pyattach
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$host" ./cmd/pyattach
extras=$work/extras
mkdir -p "$extras/completions" "$extras/man"
"$host" completion bash >"$extras/completions/pyattach.bash"
"$host" completion zsh >"$extras/completions/_pyattach"
"$host" completion fish >"$extras/completions/pyattach.fish"
"$host" man >"$extras/man/pyattach.1"

# --- macOS archives ---------------------------------------------------------
# The same archive as Linux's; on macOS pyattach works on files (see
# README's install section), and no wheel or .deb is made for it.
for arch in amd64 arm64; do
	name=pyattach_${version}_darwin_$arch
	d=$work/$name
	mkdir -p "$d"
	install -m 755 "$out/pyattach-darwin-$arch" "$d/pyattach"
	install -m 644 README.md LICENSE "$d/"
	cp -r "$extras/completions" "$extras/man" "$d/"
	chmod -R u=rwX,go=rX "$d"
	stamp "$d"
	targz "$out/$name.tar.gz" "$work" "$name"
done

for arch in amd64 arm64; do
	case $arch in
	amd64) march=x86_64 ;;
	arm64) march=aarch64 ;;
	esac
	bin=$out/pyattach-linux-$arch

	# --- release archive ----------------------------------------------------
	name=pyattach_${version}_linux_$arch
	d=$work/$name
	mkdir -p "$d"
	install -m 755 "$bin" "$d/pyattach"
	install -m 644 README.md LICENSE "$d/"
	cp -r "$extras/completions" "$extras/man" "$d/"
	chmod -R u=rwX,go=rX "$d"
	stamp "$d"
	targz "$out/$name.tar.gz" "$work" "$name"

	# --- wheel ----------------------------------------------------------------
	# The binary is static: it runs on any Linux of the architecture, so
	# the wheel says so for glibc (manylinux2014) and musl systems alike.
	wdir=$work/wheel-$arch
	mkdir -p "$wdir"
	install -m 755 "$bin" "$wdir/pyattach"
	go run ./cmd/internal/mkwheel -version "$pyversion" \
		-tags "py3-none-manylinux_2_17_$march.manylinux2014_$march.musllinux_1_1_$march" \
		-binary "$wdir/pyattach" -readme README.md -license LICENSE \
		-mtime "$SOURCE_DATE_EPOCH" -o "$out" \
		-meta "Summary: $summary" \
		-meta "Home-page: $homepage" \
		-meta "Project-URL: Source, $homepage" \
		-meta "License: MIT" \
		-meta "Keywords: gdb,lldb,debugging,python,py-bt,debuginfod" \
		-meta "Classifier: Development Status :: 4 - Beta" \
		-meta "Classifier: Environment :: Console" \
		-meta "Classifier: Intended Audience :: Developers" \
		-meta "Classifier: License :: OSI Approved :: MIT License" \
		-meta "Classifier: Operating System :: POSIX :: Linux" \
		-meta "Classifier: Topic :: Software Development :: Debuggers" >/dev/null

	# --- .deb -----------------------------------------------------------------
	# A static binary depends on nothing; gdb is what most users drive
	# with it, lldb and elfutils' debuginfod client are optional.
	root=$work/deb-$arch
	install -D -m 755 "$bin" "$root/usr/bin/pyattach"
	install -D -m 644 "$extras/completions/pyattach.bash" "$root/usr/share/bash-completion/completions/pyattach"
	install -D -m 644 "$extras/completions/_pyattach" "$root/usr/share/zsh/vendor-completions/_pyattach"
	install -D -m 644 "$extras/completions/pyattach.fish" "$root/usr/share/fish/vendor_completions.d/pyattach.fish"
	install -d -m 755 "$root/usr/share/man/man1" "$root/usr/share/doc/pyattach"
	gzip -9n <"$extras/man/pyattach.1" >"$root/usr/share/man/man1/pyattach.1.gz"
	gzip -9n <README.md >"$root/usr/share/doc/pyattach/README.md.gz"
	{
		echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
		echo "Upstream-Name: pyattach"
		echo "Source: $homepage"
		echo
		echo "Files: *"
		echo "License: MIT"
		sed -e 's/^$/./' -e 's/^/ /' LICENSE
	} >"$root/usr/share/doc/pyattach/copyright"
	chmod 644 "$root/usr/share/doc/pyattach/copyright"
	mkdir -p "$root/DEBIAN"
	cat >"$root/DEBIAN/control" <<EOF
Package: pyattach
Version: $debversion
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Recommends: gdb
Suggests: lldb, elfutils
Section: devel
Priority: optional
Homepage: $homepage
Description: make gdb and lldb debugging of Python processes work
 pyattach resolves a PID, an executable, a virtualenv, a script or a core
 to the real Python interpreter (proved by equal ELF build-id), finds the
 debug files and the CPython debugger extension that match it, and starts
 gdb or lldb with all of it, so that py-bt works the first time. It also
 prints every thread's Python stack from memory alone (pyattach dump) and
 explains what is missing (pyattach doctor).
EOF
	chmod -R u=rwX,go=rX "$root"
	stamp "$root"
	dpkg-deb --root-owner-group -Zxz --build "$root" "$out/pyattach_${debversion}_$arch.deb" >/dev/null
done

(cd "$out" && sha256sum -- pyattach-linux-* pyattach-darwin-* *.tar.gz *.whl *.deb >checksums.txt)
echo "$0: wrote $out:" >&2
(cd "$out" && ls -1) >&2
