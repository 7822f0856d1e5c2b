package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0ea7895abcdef0123456789"},
		{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name, ver, rev, when string
		bi                   *debug.BuildInfo
		want                 string
	}{
		{"stamped", "0.3.0-4-g0ea7895", "0ea7895abcdef0123456789", "2026-11-23T08:00:00Z", vcs,
			"0.3.0-4-g0ea7895 (commit 0ea7895abcde, built 2026-11-23T08:00:00Z, go1.x linux/amd64)"},
		{"checkout", "", "", "", vcs,
			"devel (commit 0ea7895abcde+dirty, 2026-11-20T10:00:00Z, not a release build, go1.x linux/amd64)"},
		{"go install", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}},
			"v0.3.0 (go1.x linux/amd64)"},
		{"nothing known", "", "", "", nil,
			"devel (not a release build, go1.x linux/amd64)"},
	}
	for _, tt := range tests {
		if got := formatVersion(tt.ver, tt.rev, tt.when, tt.bi, "go1.x linux/amd64"); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRoffText(t *testing.T) {
	got := roffText(".hidden line\nuse --flag 'x' \\n\n\nExamples:\n  pyattach -p 1\n  'quoted\ntail")
	want := "\\&.hidden line\nuse \\-\\-flag 'x' \\en\n.PP\nExamples:\n.RS 2\n.nf\npyattach \\-p 1\n\\&'quoted\n.fi\n.RE\ntail\n"
	if got != want {
		t.Errorf("roffText:\n%s\nwant:\n%s", got, want)
	}
}

// TestVersionFastPath: a lone --version skips kong; with another flag it
// goes through kong's VersionFlag. Both must print the same line.
func TestVersionFastPath(t *testing.T) {
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		if code := Main(args, strings.NewReader(""), &out, &errb, nil); code != 0 {
			t.Fatalf("pyattach %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
	fast, viaKong := run("--version"), run("--offline", "--version")
	if fast != viaKong || fast != versionLine()+"\n" {
		t.Errorf("--version printed %q, through kong %q, want %q", fast, viaKong, versionLine()+"\n")
	}
}
