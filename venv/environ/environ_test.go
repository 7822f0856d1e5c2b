package environ

import (
	"reflect"
	"testing"
)

func TestLookup(t *testing.T) {
	e := Env{"A=1", "junk", "B=", "A=2", "C=x=y", "=bad"}
	for _, c := range []struct {
		key, want string
		set       bool
	}{{"A", "2", true}, {"B", "", true}, {"C", "x=y", true}, {"junk", "", false}, {"D", "", false}} {
		v, ok := e.Lookup(c.key)
		if v != c.want || ok != c.set {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.set)
		}
		if e.Get(c.key) != c.want {
			t.Errorf("Get(%q) = %q", c.key, e.Get(c.key))
		}
	}
	if v, ok := Env(nil).Lookup("PATH"); ok || v != "" {
		t.Errorf("nil Env has PATH=%q", v)
	}
}

func TestWith(t *testing.T) {
	e := make(Env, 1, 4)
	e[0] = "A=1"
	w := e.With("A", "2")
	w2 := e.With("A", "3")
	if e.Get("A") != "1" || w.Get("A") != "2" || w2.Get("A") != "3" {
		t.Errorf("With shares or changes its receiver: %q %q %q", e, w, w2)
	}
}

func TestList(t *testing.T) {
	got := Env{"PATH=/a::/b:"}.List("PATH")
	if !reflect.DeepEqual(got, []string{"/a", "/b"}) {
		t.Errorf("List = %q", got)
	}
}

func TestDirs(t *testing.T) {
	for _, c := range []struct {
		env  Env
		want Dirs
	}{
		{Env{"HOME=/h"}, Dirs{"/h/.config", "/h/.local/share", "/h/.cache", "/h/.local/state"}},
		{nil, Dirs{"/.config", "/.local/share", "/.cache", "/.local/state"}},
		{Env{"HOME=rel"}, Dirs{"/.config", "/.local/share", "/.cache", "/.local/state"}},
		// Relative and empty values are ignored; absolute ones are cleaned.
		{Env{"HOME=/h", "XDG_CONFIG_HOME=/c/", "XDG_DATA_HOME=d", "XDG_CACHE_HOME=", "XDG_STATE_HOME=~/s"},
			Dirs{"/c", "/h/.local/share", "/h/.cache", "/h/.local/state"}},
		{Env{"HOME=/h", "XDG_DATA_HOME=/d", "XDG_CACHE_HOME=/k", "XDG_STATE_HOME=/s"},
			Dirs{"/h/.config", "/d", "/k", "/s"}},
	} {
		if got := c.env.Dirs(); got != c.want {
			t.Errorf("%q: Dirs = %+v, want %+v", c.env, got, c.want)
		}
	}
	d := Env{"HOME=/h"}.Dirs()
	if d.ConfigFile() != "/h/.config/pyattach/config.toml" || d.Data("debug") != "/h/.local/share/pyattach/debug" ||
		d.Cache() != "/h/.cache/pyattach" || d.State("x") != "/h/.local/state/pyattach/x" {
		t.Errorf("own dirs: %q %q %q %q", d.ConfigFile(), d.Data("debug"), d.Cache(), d.State("x"))
	}
}

// TestDirsIn: the same rule with another system's defaults: macOS's
// (adrg/xdg's answers there, relative to HOME), and an absolute default.
func TestDirsIn(t *testing.T) {
	mac := Layout{ConfigHome: "Library/Application Support", DataHome: "Library/Application Support",
		CacheHome: "Library/Caches", StateHome: "Library/Application Support",
		ConfigDirs: []string{"/Library/Application Support", "/Library/Preferences"}}
	d := Env{"HOME=/Users/me", "XDG_CACHE_HOME=/Volumes/fast/cache", "XDG_DATA_HOME=rel"}.DirsIn(mac)
	want := Dirs{"/Users/me/Library/Application Support", "/Users/me/Library/Application Support", "/Volumes/fast/cache", "/Users/me/Library/Application Support"}
	if d != want {
		t.Errorf("macOS: %+v, want %+v", d, want)
	}
	if got := d.ConfigFile(); got != "/Users/me/Library/Application Support/pyattach/config.toml" {
		t.Errorf("macOS config file %q", got)
	}
	if d := (Env{"HOME=/h"}).DirsIn(Layout{CacheHome: "/var/cache/x"}); d.CacheHome != "/var/cache/x" {
		t.Errorf("absolute default: %q", d.CacheHome)
	}
	if got := (Env{}).ConfigDirsIn(mac); !reflect.DeepEqual(got, mac.ConfigDirs) {
		t.Errorf("macOS config dirs %q", got)
	}
}

func TestConfigDirs(t *testing.T) {
	for _, c := range []struct {
		env  Env
		want []string
	}{
		{nil, []string{"/etc/xdg"}},
		{Env{"XDG_CONFIG_DIRS="}, []string{"/etc/xdg"}},
		{Env{"XDG_CONFIG_DIRS=rel:~/x"}, []string{"/etc/xdg"}},
		{Env{"XDG_CONFIG_DIRS=/opt/etc/:rel::/etc/xdg:/opt/etc"}, []string{"/opt/etc", "/etc/xdg"}},
	} {
		if got := c.env.ConfigDirsIn(XDGLayout); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %q, want %q", c.env, got, c.want)
		}
	}
	if got := ConfigFileIn("/etc/xdg"); got != "/etc/xdg/pyattach/config.toml" {
		t.Errorf("ConfigFileIn = %q", got)
	}
}
