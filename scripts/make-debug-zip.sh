#!/usr/bin/env bash
# make-debug-zip.sh: split the debug information out of the native
# extensions of a Python distribution, the way dd-trace-py ships it.
#
#   scripts/make-debug-zip.sh WHEEL_OR_DIR OUT_DIR [STEM]
#
# For every ELF *.so in a built wheel (a .whl file) or in an installed
# tree (a site-packages directory):
#
#   objcopy --only-keep-debug X.so X.so.debug
#   objcopy --strip-debug X.so                   (what strip -g does)
#   objcopy --add-gnu-debuglink=X.so.debug X.so  (name and CRC-32)
#
# and write OUT_DIR/<wheel-stem>-debug-symbols.zip holding
# <path inside the wheel>/<name>.so.debug for each of them.
#
# A wheel is left as it is; OUT_DIR receives the stripped copy under the
# same file name, with the RECORD rows of the changed files updated
# (sha256=<urlsafe base64, no padding>,<size>).
#
# A directory is stripped in place. When it holds *.dist-info directories,
# one of them names the zip (<name>-<version>-<tags from WHEEL>), only the
# .so files its RECORD lists are processed, and their RECORD rows are
# updated. STEM picks that distribution when there are several (as
# NAME-VERSION or a whole wheel stem), or names the zip when there is none.
#
# A .so without DWARF (already stripped, or built without -g) is left
# alone. Needs objcopy (binutils), zip and unzip; paths may hold spaces.
set -euo pipefail

prog=${0##*/}

usage() {
	cat >&2 <<EOF
usage: $prog WHEEL_OR_DIR OUT_DIR [STEM]

  WHEEL_OR_DIR  a built wheel (*.whl), or an installed tree such as a
                site-packages directory (stripped in place)
  OUT_DIR       where <wheel-stem>-debug-symbols.zip (and, for a wheel,
                the stripped wheel) are written; created if missing
  STEM          for a directory: the distribution to process (NAME-VERSION
                or a wheel stem) when it holds several *.dist-info, or the
                zip's name when it holds none

examples:
  $prog dist/ddtrace-2.9.0-cp311-cp311-linux_x86_64.whl out/
  $prog .venv/lib/python3.11/site-packages out/ ddtrace-2.9.0
EOF
	exit 2
}

die() {
	echo "$prog: error: $*" >&2
	exit 1
}

[ $# -eq 2 ] || [ $# -eq 3 ] || usage
case ${1-} in -h | --help) usage ;; esac
input=$1
out_dir=$2
stem_arg=${3-}
[ -n "$input" ] || usage
[ -n "$out_dir" ] || usage

missing=()
for tool in objcopy readelf zip unzip sha256sum base64 od; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "$prog: error: missing tools: ${missing[*]}" >&2
	echo "  hint: sudo apt-get install -y binutils zip unzip coreutils" >&2
	exit 1
fi

[ -e "$input" ] || die "$input: no such file or directory"
mkdir -p -- "$out_dir" || die "cannot create $out_dir"
out_abs=$(cd -- "$out_dir" && pwd -P)

work=$(mktemp -d "${TMPDIR:-/tmp}/make-debug-zip.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
debug_tree=$work/debug
mkdir -- "$debug_tree"

# normalize NAME: PEP 503 (lowercase; runs of -, _ and . become one -).
normalize() {
	printf '%s' "$1" | tr 'A-Z' 'a-z' | sed -E 's/[-_.]+/-/g'
}

# is_elf FILE: the file starts with the ELF magic.
is_elf() {
	[ "$(od -An -tx1 -N4 -- "$1" | tr -d ' \n')" = 7f454c46 ]
}

# has_dwarf FILE: the file carries .debug_info (or .zdebug_info).
has_dwarf() {
	LC_ALL=C readelf -SW -- "$1" 2>/dev/null | grep -Eq '[[:space:]]\.z?debug_info[[:space:]]'
}

# record_hash FILE: sha256=<urlsafe base64 without padding>,<size>
record_hash() {
	local hex bin size
	hex=$(sha256sum <"$1" | cut -c1-64)
	bin=$(printf '%s' "$hex" | sed 's/../\\x&/g')
	size=$(wc -c <"$1" | tr -d ' ')
	printf 'sha256=%s,%s' "$(printf '%b' "$bin" | base64 -w0 | tr '+/' '-_' | tr -d '=')" "$size"
}

# csv_field S: S as one CSV field, quoted when it holds , or " (as Python's
# csv module writes RECORD).
csv_field() {
	case $1 in
	*[,\"]*) printf '"%s"' "${1//\"/\"\"}" ;;
	*) printf '%s' "$1" ;;
	esac
}

# record_paths RECORD: the first field of every row, one per line.
record_paths() {
	awk '
	{
		line = $0
		sub(/\r$/, "", line)
		if (substr(line, 1, 1) != "\"") {
			i = index(line, ",")
			print (i ? substr(line, 1, i - 1) : line)
			next
		}
		f = ""; i = 2
		while (i <= length(line)) {
			c = substr(line, i, 1)
			if (c == "\"") {
				if (substr(line, i + 1, 1) == "\"") { f = f "\""; i += 2; continue }
				break
			}
			f = f c; i++
		}
		print f
	}' "$1"
}

# update_record RECORD PATH FILE: set the hash and size of PATH's row to
# those of FILE. The file is rewritten through a temporary file.
update_record() {
	local record=$1 rel=$2 file=$3 hash tmp
	hash=$(record_hash "$file")
	tmp=$record.tmp.$$
	REL_PLAIN=$rel REL_CSV=$(csv_field "$rel") HASH=$hash awk '
	BEGIN { plain = ENVIRON["REL_PLAIN"] ","; quoted = ENVIRON["REL_CSV"] ","; done = 0 }
	{
		line = $0
		if (!done && (index(line, plain) == 1 || index(line, quoted) == 1)) {
			print ENVIRON["REL_CSV"] "," ENVIRON["HASH"]
			done = 1
			next
		}
		print line
	}
	END { if (!done) print ENVIRON["REL_CSV"] "," ENVIRON["HASH"] }' "$record" >"$tmp"
	mv -f -- "$tmp" "$record"
}

# wheel_stem DISTINFO_DIR: <name>-<version>[-<build>]-<py>-<abi>-<plat>
# from the directory name and the WHEEL file's Tag and Build lines, or
# <name>-<version> when WHEEL has no tags.
wheel_stem() {
	local di=$1 base nv py="" abi="" plat="" build="" tag p a l
	base=${di##*/}
	nv=${base%.dist-info}
	if [ -f "$di/WHEEL" ]; then
		while IFS= read -r l || [ -n "$l" ]; do
			l=${l%$'\r'}
			case $l in
			Build:*) build=$(printf '%s' "${l#Build:}" | tr -d ' \t') ;;
			Tag:*)
				tag=$(printf '%s' "${l#Tag:}" | tr -d ' \t')
				IFS=- read -r p a l <<<"$tag"
				[ -n "$p" ] && [ -n "$a" ] && [ -n "$l" ] || continue
				case .$py. in *".$p."*) ;; *) py=${py:+$py.}$p ;; esac
				case .$abi. in *".$a."*) ;; *) abi=${abi:+$abi.}$a ;; esac
				case .$plat. in *".$l."*) ;; *) plat=${plat:+$plat.}$l ;; esac
				;;
			esac
		done <"$di/WHEEL"
	fi
	if [ -n "$py" ]; then
		printf '%s%s-%s-%s-%s' "$nv" "${build:+-$build}" "$py" "$abi" "$plat"
	else
		printf '%s' "$nv"
	fi
}

# split_so ROOT REL: split ROOT/REL into $debug_tree/REL.debug and the
# stripped ROOT/REL with a .gnu_debuglink. Prints REL when it changed.
split_so() {
	local root=$1 rel=$2 so dbg
	so=$root/$rel
	dbg=$debug_tree/$rel.debug
	if ! is_elf "$so"; then
		echo "$prog: skipping $rel: not an ELF file" >&2
		return 0
	fi
	if ! has_dwarf "$so"; then
		echo "$prog: skipping $rel: no DWARF (already stripped?)" >&2
		return 0
	fi
	mkdir -p -- "$(dirname -- "$dbg")"
	objcopy --only-keep-debug -- "$so" "$dbg"
	# A .so can carry an old link (built by a tool that split it before);
	# objcopy refuses to add a second one.
	objcopy --strip-debug --remove-section=.gnu_debuglink -- "$so" "$work/stripped"
	objcopy --add-gnu-debuglink="$dbg" -- "$work/stripped"
	# Keep the original's mode and inode: write over it.
	cat -- "$work/stripped" >"$so"
	rm -f -- "$work/stripped"
	echo "$prog: split $rel -> $rel.debug" >&2
	printf '%s\n' "$rel"
}

# process ROOT LIST: split every .so named in LIST (paths relative to
# ROOT, one per line); prints the changed ones.
process() {
	local root=$1 list=$2 rel
	while IFS= read -r rel; do
		[ -n "$rel" ] || continue
		case /$rel/ in */../* | */./* | //*) echo "$prog: skipping $rel: not a plain relative path" >&2 && continue ;; esac
		[ -f "$root/$rel" ] || continue
		split_so "$root" "$rel"
	done <"$list"
}

# find_so ROOT: every *.so file under ROOT, relative, sorted.
find_so() {
	(cd -- "$1" && find . -type f -name '*.so' ! -name "$(printf '*\n*')" | sed 's|^\./||' | LC_ALL=C sort)
}

# make_zip: write the debug-symbols zip from $debug_tree.
make_zip() {
	local stem=$1 zip_path
	zip_path=$out_abs/$stem-debug-symbols.zip
	if [ -z "$(find "$debug_tree" -type f -print -quit)" ]; then
		die "no ELF *.so with debug information in $input; nothing to split"
	fi
	rm -f -- "$zip_path"
	(cd -- "$debug_tree" && zip -q -r -X -D "$zip_path" .)
	echo "$zip_path"
}

changed=$work/changed
: >"$changed"

if [ -f "$input" ]; then
	case $input in
	*.whl) ;;
	*) die "$input: not a wheel (*.whl) or a directory" ;;
	esac
	[ -z "$stem_arg" ] || die "STEM is only for a directory; a wheel is named by its file name"
	whl_name=${input##*/}
	stem=${whl_name%.whl}
	new_whl=$out_abs/$whl_name
	[ "$(cd -- "$(dirname -- "$input")" && pwd -P)/$whl_name" != "$new_whl" ] ||
		die "OUT_DIR must not be the wheel's own directory (the wheel would be overwritten)"
	tree=$work/wheel
	mkdir -- "$tree"
	unzip -q -- "$input" -d "$tree" || die "$input: cannot unpack (not a zip file?)"
	list=$work/so-list
	find_so "$tree" >"$list"
	process "$tree" "$list" >"$changed"

	# RECORD lives in the one <name>-<version>.dist-info at the top.
	record=""
	for di in "$tree"/*.dist-info; do
		[ -f "$di/RECORD" ] || continue
		[ -z "$record" ] || die "$input: more than one *.dist-info/RECORD"
		record=$di/RECORD
	done
	[ -n "$record" ] || die "$input: no *.dist-info/RECORD; not a wheel"
	while IFS= read -r rel; do
		update_record "$record" "$rel" "$tree/$rel"
	done <"$changed"
	di_rel=${record#"$tree"/}
	di_rel=${di_rel%/RECORD}

	make_zip "$stem"
	rm -f -- "$new_whl"
	# The .dist-info goes last and RECORD last of all, as wheel builders
	# write it.
	(
		cd -- "$tree"
		zip -q -r -X -D "$new_whl" . -x "$di_rel/*"
		zip -q -r -X -D "$new_whl" "$di_rel" -x "$di_rel/RECORD"
		zip -q -X "$new_whl" "$di_rel/RECORD"
	)
	echo "$new_whl"
	exit 0
fi

[ -d "$input" ] || die "$input: not a wheel (*.whl) or a directory"
root=$(cd -- "$input" && pwd -P)

# Pick the distribution.
dist_infos=()
for di in "$root"/*.dist-info; do
	[ -d "$di" ] && dist_infos+=("$di")
done
chosen=""
if [ -n "$stem_arg" ]; then
	case $stem_arg in */*) die "STEM $stem_arg must not hold a slash" ;; esac
	want_name=$(normalize "${stem_arg%%-*}")
	rest=${stem_arg#*-}
	want_version=${rest%%-*}
	[ "$rest" != "$stem_arg" ] || die "STEM $stem_arg is not NAME-VERSION or a wheel stem"
	for di in ${dist_infos[@]+"${dist_infos[@]}"}; do
		nv=${di##*/}
		nv=${nv%.dist-info}
		if [ "$(normalize "${nv%-*}")" = "$want_name" ] && [ "${nv##*-}" = "$want_version" ]; then
			chosen=$di
		fi
	done
	if [ -z "$chosen" ] && [ ${#dist_infos[@]} -gt 0 ]; then
		die "no $want_name-$want_version.dist-info in $root"
	fi
elif [ ${#dist_infos[@]} -eq 1 ]; then
	chosen=${dist_infos[0]}
elif [ ${#dist_infos[@]} -gt 1 ]; then
	echo "$prog: error: $root holds ${#dist_infos[@]} distributions; name one as STEM:" >&2
	for di in "${dist_infos[@]}"; do
		nv=${di##*/}
		echo "  $prog $input $out_dir ${nv%.dist-info}" >&2
	done
	exit 2
else
	die "$root holds no *.dist-info; name the zip as STEM (NAME-VERSION or a wheel stem)"
fi

list=$work/so-list
if [ -n "$chosen" ] && [ -f "$chosen/RECORD" ]; then
	record_paths "$chosen/RECORD" | grep -E '\.so$' | LC_ALL=C sort -u >"$list" || true
	stem=$(wheel_stem "$chosen")
	[ -z "$stem_arg" ] || case $stem_arg in *-*-*-*-*) stem=$stem_arg ;; esac
else
	find_so "$root" >"$list"
	stem=${stem_arg:-$(wheel_stem "$chosen")}
fi
process "$root" "$list" >"$changed"
if [ -n "$chosen" ] && [ -f "$chosen/RECORD" ]; then
	while IFS= read -r rel; do
		update_record "$chosen/RECORD" "$rel" "$root/$rel"
	done <"$changed"
fi
make_zip "$stem"
