package venv

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzVersionRE = regexp.MustCompile(`^[0-9]{1,9}\.[0-9]{1,9}(\.[0-9]{1,9})?$`)

// FuzzParsePyvenvCfg checks that the parser never panics, that every
// error is a *CfgError or comes from the reader, and that what it accepts
// obeys the documented shape. Seeds live in testdata/fuzz as well.
func FuzzParsePyvenvCfg(f *testing.F) {
	f.Add([]byte("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\nexecutable = /usr/bin/python3.11\ncommand = /usr/bin/python3.11 -m venv --copies /tmp/v\n"))
	f.Add([]byte("home = /x/uv/python/cpython-3.12.1-linux-x86_64-gnu/bin\nimplementation = CPython\nuv = 0.4.18\nversion_info = 3.12.1\n"))
	f.Add([]byte("version_info = 3.12.1.final.0\nbase-executable = /usr/bin/python3.12\n"))
	f.Add([]byte("\uFEFF# c\r\n\r\nHOME=C:\\Py\rversion = 3.13.0rc1\r\n"))
	f.Add([]byte("home = /usr/bin\ngarbage\n"))
	f.Add([]byte(" = empty key\n"))
	f.Add([]byte("version = 3.1\x001\n"))
	f.Add([]byte("home = \xff\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := ParsePyvenvCfg(bytes.NewReader(b))
		if err != nil {
			var ce *CfgError
			if !errors.As(err, &ce) || !errors.Is(err, ErrMalformedCfg) {
				t.Fatalf("error %v (%T) is not a *CfgError", err, err)
			}
			if ce.Line < 0 || ce.Line > bytes.Count(b, []byte("\n"))+bytes.Count(b, []byte("\r"))+1 {
				t.Fatalf("line %d out of range", ce.Line)
			}
			if ce.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		if len(b) > MaxCfgSize || !utf8.Valid(b) {
			t.Fatal("accepted oversized input or invalid UTF-8")
		}
		if cfg.Raw == nil {
			t.Fatal("nil Raw map")
		}
		for k, v := range cfg.Raw {
			if k == "" || k != strings.ToLower(k) || strings.Contains(k, "=") || k != strings.TrimSpace(k) {
				t.Fatalf("bad key %q", k)
			}
			if v != strings.TrimSpace(v) || strings.ContainsAny(v, "\r\n") {
				t.Fatalf("bad value %q", v)
			}
		}
		if cfg.Home != cfg.Raw["home"] || cfg.Executable != cfg.Raw["executable"] {
			t.Fatalf("fields disagree with Raw: %+v", cfg)
		}
		if cfg.Version != "" && !fuzzVersionRE.MatchString(cfg.Version) {
			t.Fatalf("version %q not normalised", cfg.Version)
		}
		// Parsing is deterministic.
		again, err := ParsePyvenvCfg(bytes.NewReader(b))
		if err != nil || again.Version != cfg.Version || len(again.Raw) != len(cfg.Raw) {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}
