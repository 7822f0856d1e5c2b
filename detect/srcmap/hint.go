package srcmap

import (
	"fmt"
	"path"
	"strings"
)

// Hint says which source tree would resolve a group's files, and how to
// hand it to pyattach.
func Hint(g Group) string {
	base := path.Base(g.Prefix)
	switch {
	case g.Layout == LayoutFetchContent && g.Name != "":
		return fmt.Sprintf("a checkout of %s (pyattach --source %s=DIR)", g.Name, g.Name)
	case g.Name == NameCPython:
		what := "the CPython sources"
		if g.Version != "" {
			what = fmt.Sprintf("the CPython %s sources", g.Version)
		}
		var how []string
		switch g.Layout {
		case LayoutDebian:
			pkg, _ := splitNameVersion(base)
			how = append(how, "apt-get source "+pkg)
		case LayoutFedora:
			pkg := "python3"
			if n, _ := splitNVR(base); strings.HasPrefix(n, "python3") {
				pkg = n
			}
			how = append(how, "dnf debuginfo-install "+pkg+" puts them under /usr/src/debug")
		case LayoutPyenv:
			how = append(how, "pyenv install --keep keeps them under $(pyenv root)/sources")
		}
		how = append(how, "pyattach --source cpython=DIR")
		return what + " (" + strings.Join(how, "; ") + ")"
	case g.Layout == LayoutDebian && g.Name != "":
		return fmt.Sprintf("the sources of Debian package %s %s (apt-get source %s; pyattach --source %s=DIR)", g.Name, g.Version, g.Name, g.Name)
	case g.Layout == LayoutFedora && g.Name != "":
		return fmt.Sprintf("the sources of %s %s (dnf debuginfo-install %s puts them under /usr/src/debug; pyattach --source %s=DIR)", g.Name, g.Version, g.Name, g.Name)
	}
	sample := samplePath(g)
	if g.Layout == LayoutUnknown && systemHeaders(g.Prefix) {
		return fmt.Sprintf("system headers not installed here, such as %s (install the development package that ships them)", joinPath(g.Prefix, sample))
	}
	if g.Name != "" {
		return fmt.Sprintf("a checkout of %s containing %s (pyattach --source %s=DIR)", g.Name, sample, g.Name)
	}
	return fmt.Sprintf("a checkout containing %s (pyattach --source DIR)", sample)
}

// Shipped reports whether the files of an unresolved group come from a
// build the user did not make: a distribution's, conda's or pyenv's
// (CPython and packaged modules), or the system's headers. Without them
// only `list` in those native frames is lost, not the user's own code.
func Shipped(u Unresolved) bool {
	switch u.Layout {
	case LayoutDebian, LayoutFedora, LayoutConda, LayoutPyenv:
		return true
	case LayoutUnknown:
		return systemHeaders(u.Prefix)
	}
	return false
}

// samplePath is a file of the group relative to its prefix, the first
// in order, with ".." cleaned away.
func samplePath(g Group) string {
	best := ""
	for _, f := range g.Files {
		rel, ok := under(path.Clean(f), g.Prefix)
		if !ok || rel == "" {
			rel = path.Base(f)
		}
		if best == "" || rel < best {
			best = rel
		}
	}
	return best
}

// systemHeaders reports whether dir holds the system's or the compiler's
// headers.
func systemHeaders(dir string) bool {
	for _, d := range []string{"/usr/include", "/usr/local/include", "/usr/lib/gcc"} {
		if _, ok := under(dir, d); ok {
			return true
		}
	}
	return false
}
