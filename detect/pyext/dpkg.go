package pyext

import (
	"bufio"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/saferead"
)

// dpkgArch lists the architecture qualifiers a multi-arch package's
// file list may carry (python3.11-dbg:amd64.list).
var dpkgArch = []string{"", ":amd64", ":arm64", ":i386"}

// dpkgVersion returns the upstream version ("3.11.2") of the Debian
// package that ships the target path p, found in dpkg's database in pl
// (<root>/var/lib/dpkg). Only python<X.Y>-dbg and libpython<X.Y>-dbg
// and their -dbg-less names are considered: they are the packages that
// ship CPython's auto-load files. It returns "" when none lists p.
func dpkgVersion(pl place, p, minor string) string {
	if minor == "" {
		return ""
	}
	info, err := pl.hostPath("/var/lib/dpkg/info")
	if err != nil {
		return ""
	}
	for _, pkg := range []string{"python" + minor + "-dbg", "libpython" + minor + "-dbg", "python" + minor, "libpython" + minor} {
		for _, arch := range dpkgArch {
			if listsPath(filepath.Join(info, pkg+arch+".list"), p) {
				return upstreamVersion(dpkgStatusVersion(pl, pkg))
			}
		}
	}
	return ""
}

// listsPath reports whether the dpkg file list at host path list holds
// the line p.
func listsPath(list, p string) bool {
	f, err := saferead.Open(list)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == p {
			return true
		}
	}
	return false
}

// dpkgStatusVersion returns the Version field of the installed package
// pkg in dpkg's status file.
func dpkgStatusVersion(pl place, pkg string) string {
	status, err := pl.hostPath("/var/lib/dpkg/status")
	if err != nil {
		return ""
	}
	f, err := saferead.Open(status)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			in = false
		case strings.HasPrefix(line, "Package: "):
			in = strings.TrimSpace(line[len("Package: "):]) == pkg
		case in && strings.HasPrefix(line, "Version: "):
			return strings.TrimSpace(line[len("Version: "):])
		}
	}
	return ""
}

// upstreamVersion turns a Debian version ("3.11.2-6+deb12u9",
// "1:3.13.0~rc1-1") into CPython's ("3.11.2", "3.13.0rc1"), or "" when
// it does not hold one.
func upstreamVersion(deb string) string {
	if i := strings.IndexByte(deb, ':'); i >= 0 {
		deb = deb[i+1:]
	}
	if i := strings.LastIndexByte(deb, '-'); i >= 0 {
		deb = deb[:i]
	}
	deb = strings.ReplaceAll(deb, "~", "")
	if v := pyversion.Leading(deb); v != "" {
		return v
	}
	return ""
}
