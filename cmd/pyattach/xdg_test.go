package main

import (
	"os"
	"reflect"
	"runtime"
	"testing"

	"github.com/adrg/xdg"

	"github.com/pyattach/pyattach/venv/environ"
)

// TestXDGLinuxLayout: asked as main asks it on macOS, adrg/xdg gives
// its defaults, not the variables set in the process, and the
// variables are as they were afterwards; on Linux its answer is
// environ.XDGLayout, the layout pyattach uses there without linking
// the library (xdg_other.go says why). Not parallel: it changes the
// process environment, as main does before anything runs.
func TestXDGLinuxLayout(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/elsewhere/cache")
	t.Setenv("XDG_CONFIG_DIRS", "/elsewhere/etc")
	t.Setenv("HOME", "/home/someone")
	t.Setenv("XDG_STATE_HOME", "")
	os.Unsetenv("XDG_STATE_HOME")
	var l environ.Layout
	withoutXDGVars(func() {
		xdg.Reload()
		l = layoutOf(xdg.Home, xdg.ConfigHome, xdg.DataHome, xdg.CacheHome, xdg.StateHome, xdg.ConfigDirs)
	})
	xdg.Reload()
	if os.Getenv("XDG_CACHE_HOME") != "/elsewhere/cache" || os.Getenv("XDG_CONFIG_DIRS") != "/elsewhere/etc" {
		t.Errorf("environment not restored: %q %q", os.Getenv("XDG_CACHE_HOME"), os.Getenv("XDG_CONFIG_DIRS"))
	}
	if _, ok := os.LookupEnv("XDG_STATE_HOME"); ok {
		t.Error("XDG_STATE_HOME set by withoutXDGVars")
	}
	if l.CacheHome == "/elsewhere/cache" || len(l.ConfigDirs) == 0 || l.ConfigDirs[0] == "/elsewhere/etc" {
		t.Errorf("the layout took the variables: %+v", l)
	}
	if runtime.GOOS == "linux" {
		if !reflect.DeepEqual(l, environ.XDGLayout) {
			t.Errorf("adrg/xdg's Linux layout %+v, want %+v", l, environ.XDGLayout)
		}
		if !reflect.DeepEqual(hostLayout(), environ.XDGLayout) {
			t.Errorf("hostLayout %+v", hostLayout())
		}
	}
}

// TestLayoutOf: adrg/xdg's macOS answers become a layout relative to
// HOME, without the configuration directories under HOME.
func TestLayoutOf(t *testing.T) {
	t.Parallel()
	as := "/Users/me/Library/Application Support"
	l := layoutOf("/Users/me", as, as, "/Users/me/Library/Caches", as,
		[]string{"/Users/me/Library/Preferences", "/Library/Application Support", "/Library/Preferences", "/Users/me/.config"})
	want := environ.Layout{ConfigHome: "Library/Application Support", DataHome: "Library/Application Support",
		CacheHome: "Library/Caches", StateHome: "Library/Application Support",
		ConfigDirs: []string{"/Library/Application Support", "/Library/Preferences"}}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("layout %+v\nwant %+v", l, want)
	}
	d := environ.Env{"HOME=/Users/me"}.DirsIn(l)
	if d.Cache("extensions") != "/Users/me/Library/Caches/pyattach/extensions" || d.ConfigFile() != as+"/pyattach/config.toml" {
		t.Errorf("dirs %+v", d)
	}
}
