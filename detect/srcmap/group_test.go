package srcmap

import (
	"reflect"
	"strings"
	"testing"
)

const echionPrefix = "/project/build/cmake.linux-x86_64-cpython-313/ddtrace.internal.datadog.profiling.stack_v2._stack_v2/_deps/echion-src"

func TestMissing(t *testing.T) {
	have := map[string]bool{"/usr/include/stdio.h": true}
	exists := func(p string) bool { return have[p] }
	got := Missing([]string{
		"/tmp/b.c", "/usr/include/stdio.h", "<built-in>", "rel/x.c", "/tmp/a.c", "/tmp/b.c", "",
	}, exists)
	want := []string{"/tmp/a.c", "/tmp/b.c"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Missing = %q, want %q", got, want)
	}
}

// groupSummary is a Group without its files, plus how many it has.
type groupSummary struct {
	Prefix, Layout, Name, Version string
	Files                         int
}

func summarize(gs []Group) []groupSummary {
	var out []groupSummary
	for _, g := range gs {
		out = append(out, groupSummary{g.Prefix, g.Layout, g.Name, g.Version, len(g.Files)})
	}
	return out
}

func TestGroupPathsLayouts(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []groupSummary
	}{
		{
			name: "fetchcontent inside scikit-build",
			paths: []string{
				echionPrefix + "/echion/frame.cc",
				echionPrefix + "/echion/frame.h",
				echionPrefix + "/echion/vm.h",
				"/project/build/cmake.linux-x86_64-cpython-313/ddtrace.internal.datadog.profiling.stack_v2._stack_v2/_stack_v2_autogen.cpp",
				"/project/ddtrace/internal/datadog/profiling/stack_v2/src/stack_v2.cpp",
				"/project/ddtrace/internal/datadog/profiling/stack_v2/include/sampler.hpp",
			},
			want: []groupSummary{
				{"/project", LayoutScikitBuild, "", "", 2},
				{"/project/build/cmake.linux-x86_64-cpython-313", LayoutScikitBuild, "", "", 1},
				{echionPrefix, LayoutFetchContent, "echion", "", 3},
			},
		},
		{
			name: "nested _deps: the innermost wins",
			paths: []string{
				"/src/b/_deps/outer-src/x.c",
				"/src/b/_deps/outer-build/_deps/inner-src/lib/y.c",
			},
			want: []groupSummary{
				{"/src/b/_deps/outer-build/_deps/inner-src", LayoutFetchContent, "inner", "", 1},
				{"/src/b/_deps/outer-src", LayoutFetchContent, "outer", "", 1},
			},
		},
		{
			name: "pyenv",
			paths: []string{
				"/tmp/python-build.20260509073544.228/Python-3.12.1/Python/ceval.c",
				"/tmp/python-build.20260509073544.228/Python-3.12.1/Include/object.h",
				"/tmp/python-build.20260509073544.228/Python-3.12.1/./Modules/_io/fileio.c",
				"/tmp/python-build.20260509073544.228/openssl-3.0.13/ssl/ssl_lib.c",
			},
			want: []groupSummary{
				{"/tmp/python-build.20260509073544.228/Python-3.12.1", LayoutPyenv, NameCPython, "3.12.1", 3},
				{"/tmp/python-build.20260509073544.228/openssl-3.0.13", LayoutPyenv, "openssl", "3.0.13", 1},
			},
		},
		{
			name: "debian",
			paths: []string{
				"/build/reproducible-path/python3.11-3.11.2/build-static/../Modules/timemodule.c",
				"/build/reproducible-path/python3.11-3.11.2/build-static/../Python/ceval.c",
				"/build/reproducible-path/python3.11-3.11.2/build-static/Modules/config.c",
				"/build/python-cffi-Ab3xQz/python-cffi-1.15.1/src/c/_cffi_backend.c",
			},
			want: []groupSummary{
				{"/build/python-cffi-Ab3xQz/python-cffi-1.15.1", LayoutDebian, "python-cffi", "1.15.1", 1},
				{"/build/reproducible-path/python3.11-3.11.2", LayoutDebian, NameCPython, "3.11.2", 3},
			},
		},
		{
			name: "fedora",
			paths: []string{
				"/builddir/build/BUILD/Python-3.12.1/Python/ceval.c",
				"/builddir/build/BUILD/Python-3.12.1/Objects/object.c",
				"/builddir/build/BUILD/python3.13-3.13.0-build/Python-3.13.0/Python/ceval.c",
				"/usr/src/debug/python3.12-3.12.1-1.fc39.x86_64/Python/pystate.c",
			},
			want: []groupSummary{
				{"/builddir/build/BUILD/Python-3.12.1", LayoutFedora, NameCPython, "3.12.1", 2},
				{"/builddir/build/BUILD/python3.13-3.13.0-build/Python-3.13.0", LayoutFedora, NameCPython, "3.13.0", 1},
				{"/usr/src/debug/python3.12-3.12.1-1.fc39.x86_64", LayoutFedora, NameCPython, "3.12.1", 1},
			},
		},
		{
			name: "conda",
			paths: []string{
				"/croot/python-split_1699999999999/work/Python/ceval.c",
				"/croot/python-split_1699999999999/work/Modules/main.c",
				"/home/conda/feedstock_root/build_artifacts/numpy_1707225342954/work/numpy/core/src/multiarray/ctors.c",
				"/opt/conda/conda-bld/libfoo_1690000000000/_h_env_placehold_placehold_placehold/include/foo.h",
				"/opt/conda/conda-bld/libfoo_1690000000000/work/foo.c",
			},
			want: []groupSummary{
				{"/croot/python-split_1699999999999/work", LayoutConda, NameCPython, "", 2},
				{"/home/conda/feedstock_root/build_artifacts/numpy_1707225342954/work", LayoutConda, "numpy", "", 1},
				{"/opt/conda/conda-bld/libfoo_1690000000000/_h_env_placehold_placehold_placehold", LayoutConda, "", "", 1},
				{"/opt/conda/conda-bld/libfoo_1690000000000/work", LayoutConda, "libfoo", "", 1},
			},
		},
		{
			name: "unknown layouts: clusters",
			paths: []string{
				"/home/runner/work/proj/proj/src/a.c",
				"/home/runner/work/proj/proj/include/a.h",
				"/home/runner/work/other/other/x.c",
				"/io/src/m.c",
				"/io/n.c",
				"/home/alice/code/lib/z.c",
				"/home/alice/code/lib/sub/w.c",
				"/w/x/build/../src/a.c",
				"/w/x/build/../src/b.c",
				"/data/p1/src/x.c",
				"/data/p1/inc/y.h",
				"/data/p2/y.c",
			},
			want: []groupSummary{
				{"/data/p1", "", "", "", 2},
				{"/data/p2", "", "", "", 1},
				{"/home/alice/code/lib", "", "", "", 2},
				{"/home/runner/work/other/other", "", "", "", 1},
				{"/home/runner/work/proj/proj", "", "", "", 2},
				{"/io", "", "", "", 2},
				{"/w/x", "", "", "", 2},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(GroupPaths(tt.paths))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GroupPaths:\n got %+v\nwant %+v", got, tt.want)
			}
			// The same groups whatever the input order, files sorted.
			rev := append([]string(nil), tt.paths...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			a, b := GroupPaths(tt.paths), GroupPaths(rev)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("order changes the result:\n%+v\n%+v", a, b)
			}
			for _, g := range a {
				for i, f := range g.Files {
					if i > 0 && g.Files[i-1] >= f {
						t.Errorf("files of %s not sorted: %q", g.Prefix, g.Files)
					}
					if g.Prefix != "/" && !strings.HasPrefix(f, g.Prefix+"/") {
						t.Errorf("%s is not under its prefix %s", f, g.Prefix)
					}
				}
			}
		})
	}
}

func TestHints(t *testing.T) {
	tests := []struct {
		path, want string
	}{
		{echionPrefix + "/echion/frame.cc", "a checkout of echion (pyattach --source echion=DIR)"},
		{"/tmp/python-build.1/Python-3.12.1/Python/ceval.c", "the CPython 3.12.1 sources (pyenv install --keep keeps them under $(pyenv root)/sources; pyattach --source cpython=DIR)"},
		{"/build/reproducible-path/python3.11-3.11.2/build-static/../Modules/timemodule.c", "the CPython 3.11.2 sources (apt-get source python3.11; pyattach --source cpython=DIR)"},
		{"/builddir/build/BUILD/Python-3.12.1/Python/ceval.c", "the CPython 3.12.1 sources (dnf debuginfo-install python3 puts them under /usr/src/debug; pyattach --source cpython=DIR)"},
		{"/usr/src/debug/python3.12-3.12.1-1.fc39.x86_64/Python/ceval.c", "the CPython 3.12.1 sources (dnf debuginfo-install python3.12 puts them under /usr/src/debug; pyattach --source cpython=DIR)"},
		{"/croot/python-split_1699999999999/work/Python/ceval.c", "the CPython sources (pyattach --source cpython=DIR)"},
		{"/build/reproducible-path/zlib-1.2.13/inflate.c", "the sources of Debian package zlib 1.2.13 (apt-get source zlib; pyattach --source zlib=DIR)"},
		{"/opt/ci/proj/src/lib/a.c", "a checkout containing a.c (pyattach --source DIR)"},
		{"/usr/include/bluetooth/bluetooth.h", "system headers not installed here, such as /usr/include/bluetooth/bluetooth.h (install the development package that ships them)"},
		{"/croot/numpy_1707225342954/work/numpy/core/src/x.c", "a checkout of numpy containing numpy/core/src/x.c (pyattach --source numpy=DIR)"},
	}
	for _, tt := range tests {
		gs := GroupPaths([]string{tt.path})
		if len(gs) != 1 {
			t.Fatalf("%s: %d groups", tt.path, len(gs))
		}
		if got := Hint(gs[0]); got != tt.want {
			t.Errorf("Hint(%s):\n got %q\nwant %q", tt.path, got, tt.want)
		}
	}
}

// TestShipped: the builds the user did not make (a distribution's,
// conda's or pyenv's, the system's headers) against their own.
func TestShipped(t *testing.T) {
	tests := map[string]bool{
		"/build/reproducible-path/python3.11-3.11.2/Modules/timemodule.c": true,
		"/build/reproducible-path/zlib-1.2.13/inflate.c":                  true,
		"/tmp/python-build.1/Python-3.12.1/Python/ceval.c":                true,
		"/usr/src/debug/python3.12-3.12.1-1.fc39.x86_64/Python/ceval.c":   true,
		"/croot/numpy_1707225342954/work/numpy/core/src/x.c":              true,
		"/usr/include/bluetooth/bluetooth.h":                              true,
		echionPrefix + "/echion/frame.cc":                                 false,
		"/opt/ci/proj/src/lib/a.c":                                        false,
	}
	for path, want := range tests {
		gs := GroupPaths([]string{path})
		if len(gs) != 1 {
			t.Fatalf("%s: %d groups", path, len(gs))
		}
		if got := Shipped(Unresolved{Prefix: gs[0].Prefix, Layout: gs[0].Layout}); got != want {
			t.Errorf("Shipped(%s, layout %q) = %v, want %v", gs[0].Prefix, gs[0].Layout, got, want)
		}
	}
}
