package pyinfo

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// fakeRoot builds a small file tree: entries ending in "/" are
// directories, entries with a target are symlinks, the rest are files
// holding their own name.
func fakeRoot(t *testing.T, entries map[string]string) string {
	t.Helper()
	files := map[string]string{}
	for name, target := range entries {
		files[name] = name
		if target != "" {
			files[name] = "->" + target
		}
	}
	root := t.TempDir()
	testenv.WriteTree(t, root, files)
	return root
}

func TestFindLibraryInRoot(t *testing.T) {
	root := fakeRoot(t, map[string]string{
		"usr/lib/x86_64-linux-gnu/libc.so.6":       "",
		"usr/lib/x86_64-linux-gnu/libboth.so":      "",
		"lib":                                      "usr/lib", // Debian's merged /usr
		"opt/app/bin/":                             "",
		"opt/app/lib/libapp.so":                    "",
		"opt/app/lib2/libapp2.so":                  "",
		"opt/app/lib/libboth.so":                   "",
		"opt/extra/libboth.so":                     "",
		"opt/extra/libextra.so":                    "",
		"opt/abs/libabs.so":                        "/opt/real/libabs.so.1",
		"opt/real/libabs.so.1":                     "",
		"usr/local/lib/libevil.so":                 "../../../../../../../../etc/passwd",
		"usr/local/lib/libevil2.so":                "/../../../etc/passwd",
		"usr/local/lib/libloop.so":                 "libloop2.so",
		"usr/local/lib/libloop2.so":                "libloop.so",
		"usr/local/lib/libdir.so/":                 "",
		"usr/lib64/libsixtyfour.so":                "",
		"usr/lib/x86_64-linux-gnu/libpython3.so":   "",
		"usr/lib/x86_64-linux-gnu/libnot.so.1.0.0": "",
		"usr/lib/x86_64-linux-gnu/libnot.so.1":     "libnot.so.1.0.0",
	})
	in := func(p string) string { return filepath.Join(root, p) }
	origin := "/opt/app/bin"
	runpath := []string{"$ORIGIN/../lib", "${ORIGIN}/../lib2", "lib-relative", "/opt/$LIB", ""}
	extra := []string{"/opt/extra", "/opt/abs"}
	tests := []struct {
		needed string
		want   string // "" means not found
	}{
		{"libapp.so", in("opt/app/lib/libapp.so")},
		{"libapp2.so", in("opt/app/lib2/libapp2.so")},
		{"libboth.so", in("opt/app/lib/libboth.so")}, // RUNPATH before extra and defaults
		{"libextra.so", in("opt/extra/libextra.so")},
		{"libc.so.6", in("usr/lib/x86_64-linux-gnu/libc.so.6")}, // through the /lib symlink or directly
		{"libsixtyfour.so", in("usr/lib64/libsixtyfour.so")},
		{"libabs.so", in("opt/real/libabs.so.1")},                       // absolute link resolved inside root
		{"libnot.so.1", in("usr/lib/x86_64-linux-gnu/libnot.so.1.0.0")}, // relative link
		{"/opt/app/lib/libapp.so", in("opt/app/lib/libapp.so")},
		{"/opt/app/../app/lib/libapp.so", in("opt/app/lib/libapp.so")},
		{"/../../opt/app/lib/libapp.so", in("opt/app/lib/libapp.so")},
		{"libevil.so", ""},  // ".." stops at root; root has no etc/passwd
		{"libevil2.so", ""}, // same, absolute
		{"libloop.so", ""},
		{"libdir.so", ""},
		{"passwd", ""},
		{"opt/app/lib/libapp.so", ""}, // relative path with a slash
		{"libmissing.so", ""},
		{"", ""},
		{"lib\x00c.so.6", ""},
	}
	for _, tt := range tests {
		got, err := FindLibrary(tt.needed, runpath, origin, root, extra)
		if tt.want == "" {
			if err == nil || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("FindLibrary(%q) = %q, %v; want an fs.ErrNotExist error", tt.needed, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("FindLibrary(%q) = %q, %v; want %q", tt.needed, got, err, tt.want)
		}
	}
	// An escaping RUNPATH entry is cleaned to a path inside root.
	if got, err := FindLibrary("passwd", []string{"/../../../../etc"}, origin, root, nil); err == nil {
		t.Errorf("FindLibrary(passwd) escaped root: %q", got)
	}
}

func TestFindLibraryHostRoot(t *testing.T) {
	dir := fakeRoot(t, map[string]string{"bin/": "", "lib/libx.so.1": "", "other/liby.so": ""})
	for _, root := range []string{"/", ""} {
		got, err := FindLibrary("libx.so.1", []string{"$ORIGIN/../lib"}, filepath.Join(dir, "bin"), root, nil)
		if want := filepath.Join(dir, "lib/libx.so.1"); err != nil || got != want {
			t.Errorf("root %q: got %q, %v; want %q", root, got, err, want)
		}
		got, err = FindLibrary("liby.so", nil, "", root, []string{filepath.Join(dir, "other")})
		if want := filepath.Join(dir, "other/liby.so"); err != nil || got != want {
			t.Errorf("root %q, extra dir: got %q, %v; want %q", root, got, err, want)
		}
	}
	if _, err := FindLibrary("libpyattach-does-not-exist.so.9", nil, "", "/", nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing library: err = %v, want fs.ErrNotExist", err)
	}
}
