package pyext

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// lldbModule is the name of the lldb extension module for CPython
// (PyPI: cpython-lldb), loaded with `command script import cpython_lldb`.
const lldbModule = "cpython_lldb"

// FindLLDB finds an installed cpython_lldb module (cpython_lldb.py or
// cpython_lldb/__init__.py) in the host directories sitePackages, in
// order (see SitePackages). The module reads every CPython 3 version it
// supports, so VersionMatch is true; Version is the module's own
// version from its dist-info directory, when present. Absence is not an
// error: it returns nil, the paths looked at, and nil.
func FindLLDB(in Input, sitePackages []string) (*Extension, []string, error) {
	var tried []string
	for _, d := range sitePackages {
		if d == "" {
			continue
		}
		for _, name := range []string{lldbModule + ".py", filepath.Join(lldbModule, "__init__.py")} {
			p := filepath.Join(d, name)
			head, err := readFileHead(p)
			if err != nil {
				if os.IsNotExist(err) {
					tried = append(tried, p)
				} else {
					tried = append(tried, p+": "+errText(err))
				}
				continue
			}
			if !strings.Contains(string(head), "lldb") {
				tried = append(tried, p+": not the cpython_lldb module (it never mentions lldb)")
				continue
			}
			if why := untrusted(p, in.UID, "lldb"); why != "" {
				tried = append(tried, p+": "+why)
				continue
			}
			ext := &Extension{Path: p, Source: SourceSitePackage, VersionMatch: true, Version: distInfoVersion(d, "cpython_lldb")}
			if v, ok := parseVersion(in.Version); ok && v.Major() < 3 {
				ext.VersionMatch = false
				ext.Warnings = append(ext.Warnings, fmt.Sprintf("cpython_lldb is for Python 3; the interpreter is %s", in.Version))
			}
			return ext, tried, nil
		}
	}
	return nil, tried, nil
}

// distInfoVersion returns the version of distribution dist installed in
// site-packages dir d, from its <dist>-<version>.dist-info directory.
func distInfoVersion(d, dist string) string {
	matches, _ := filepath.Glob(filepath.Join(globEscape(d), dist+"-*.dist-info"))
	sort.Strings(matches)
	for i := len(matches) - 1; i >= 0; i-- {
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(matches[i]), dist+"-"), ".dist-info")
		if v != "" {
			return v
		}
	}
	return ""
}

// SitePackages lists the existing site-packages directories of a Python
// version ("3.11" or "3.11.2") for the installation prefixes given (the
// venv's, the interpreter's), then the user site of home, without
// repeats:
//
//	<prefix>/lib/python3.X/site-packages, <prefix>/lib64/python3.X/site-packages
//	<prefix>/lib/python3.X/dist-packages, <prefix>/lib/python3/dist-packages (Debian)
//	/usr/local/lib/python3.X/dist-packages (Debian, for prefix /usr)
//	<home>/.local/lib/python3.X/site-packages
//
// An unparsable version gives nil.
func SitePackages(prefixes []string, version, home string) []string {
	v, ok := parseVersion(version)
	if !ok {
		return nil
	}
	minor := "python" + v.MajorMinor()
	major := fmt.Sprintf("python%d", v.Major())
	var cand []string
	for _, p := range prefixes {
		if p == "" {
			continue
		}
		p = path.Clean(p)
		cand = append(cand,
			path.Join(p, "lib", minor, "site-packages"),
			path.Join(p, "lib64", minor, "site-packages"),
			path.Join(p, "lib", minor, "dist-packages"),
			path.Join(p, "lib", major, "dist-packages"),
		)
		if p == "/usr" {
			cand = append(cand, path.Join("/usr/local/lib", minor, "dist-packages"))
		}
	}
	if home != "" {
		cand = append(cand, path.Join(home, ".local/lib", minor, "site-packages"))
	}
	var out []string
	for _, c := range cand {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			out = appendNew(out, c)
		}
	}
	return out
}
