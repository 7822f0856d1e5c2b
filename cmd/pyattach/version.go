package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time by scripts/package.sh:
//
//	-ldflags "-X main.version=0.3.0-4-gabc1234 -X main.commit=abc1234... -X main.date=2026-11-23T08:00:00Z"
//
// A build without them (go build in a checkout, go install module@version)
// says what the Go build info knows instead: the module version, or the
// VCS revision, time and dirty state that go build records.
var (
	version = ""
	commit  = ""
	date    = ""
)

// versionInfo is what `pyattach --version` prints, after "pyattach ".
// versionLine is what --version prints.
func versionLine() string { return "pyattach " + versionInfo() }

func versionInfo() string {
	bi, _ := debug.ReadBuildInfo()
	return formatVersion(version, commit, date, bi, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
}

// formatVersion prefers the stamped values and fills what is missing from
// bi (nil when the binary carries no build info):
//
//	0.3.0 (commit 1f2e3d4c5b6a, built 2026-11-23T08:00:00Z, go1.25.0 linux/amd64)
//	devel (commit 1f2e3d4c5b6a+dirty, 2026-11-23T08:00:00Z, not a release build, go1.25.0 linux/amd64)
func formatVersion(ver, rev, when string, bi *debug.BuildInfo, goinfo string) string {
	stamped := ver != ""
	dirty := false
	if bi != nil {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version // go install module@version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.time":
				if when == "" {
					when = s.Value
				}
			case "vcs.modified":
				dirty = !stamped && s.Value == "true"
			}
		}
	}
	release := ver != ""
	if ver == "" {
		ver = "devel"
	}
	var parts []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		parts = append(parts, "commit "+rev)
	}
	if when != "" {
		if stamped {
			parts = append(parts, "built "+when)
		} else {
			parts = append(parts, when)
		}
	}
	if !release {
		parts = append(parts, "not a release build")
	}
	parts = append(parts, goinfo)
	return ver + " (" + strings.Join(parts, ", ") + ")"
}

// releaseInfo is the version alone ("devel" when unknown) and the day
// of the build or commit ("" when unknown), for the man page's title.
func releaseInfo() (ver, day string) {
	ver, day = version, date
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" && day == "" {
				day = s.Value
			}
		}
	}
	if ver == "" {
		ver = "devel"
	}
	if len(day) > 10 {
		day = day[:10]
	}
	return ver, day
}
