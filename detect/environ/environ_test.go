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
