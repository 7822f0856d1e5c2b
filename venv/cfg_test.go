package venv

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/testenv"
)

func TestParsePyvenvCfg(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Cfg
	}{
		{
			name: "cpython 3.11 venv --copies",
			in: "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n" +
				"executable = /usr/bin/python3.11\ncommand = /usr/bin/python3.11 -m venv --copies /tmp/v\n",
			want: Cfg{
				Home: "/usr/bin", Executable: "/usr/bin/python3.11", Version: "3.11.2",
				Command: "/usr/bin/python3.11 -m venv --copies /tmp/v",
				Raw: map[string]string{
					"home": "/usr/bin", "include-system-site-packages": "false", "version": "3.11.2",
					"executable": "/usr/bin/python3.11", "command": "/usr/bin/python3.11 -m venv --copies /tmp/v",
				},
			},
		},
		{
			name: "cpython 3.6 has no executable",
			in:   "home = /root/.pyenv/versions/3.6.15/bin\ninclude-system-site-packages = true\nversion = 3.6.15\n",
			want: Cfg{
				Home: "/root/.pyenv/versions/3.6.15/bin", Version: "3.6.15", IncludeSystemSitePackages: true,
				Raw: map[string]string{"home": "/root/.pyenv/versions/3.6.15/bin", "include-system-site-packages": "true", "version": "3.6.15"},
			},
		},
		{
			name: "uv writes version_info",
			in: "home = /root/.local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu/bin\nimplementation = CPython\n" +
				"uv = 0.4.18\nversion_info = 3.12.1\ninclude-system-site-packages = false\nprompt = app\n",
			want: Cfg{
				Home: "/root/.local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu/bin", Version: "3.12.1",
				Raw: map[string]string{
					"home": "/root/.local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu/bin", "implementation": "CPython",
					"uv": "0.4.18", "version_info": "3.12.1", "include-system-site-packages": "false", "prompt": "app",
				},
			},
		},
		{
			name: "virtualenv writes version_info with release level and base-executable",
			in: "home = /usr/bin\nimplementation = CPython\nversion_info = 3.12.1.final.0\nvirtualenv = 20.25.0\n" +
				"include-system-site-packages = false\nbase-prefix = /usr\nbase-exec-prefix = /usr\nbase-executable = /usr/bin/python3.12\n",
			want: Cfg{
				Home: "/usr/bin", BaseExecutable: "/usr/bin/python3.12", Version: "3.12.1",
				Raw: map[string]string{
					"home": "/usr/bin", "implementation": "CPython", "version_info": "3.12.1.final.0", "virtualenv": "20.25.0",
					"include-system-site-packages": "false", "base-prefix": "/usr", "base-exec-prefix": "/usr",
					"base-executable": "/usr/bin/python3.12",
				},
			},
		},
		{
			name: "version wins over version_info",
			in:   "version_info = 3.9.1\nversion = 3.10.0\n",
			want: Cfg{Version: "3.10.0", IncludeSystemSitePackages: true, Raw: map[string]string{"version_info": "3.9.1", "version": "3.10.0"}},
		},
		{
			name: "keys are case-insensitive, spaces optional, '=' in values, last wins",
			in:   "HOME=/a\n  Home\t=  /b  \ncommand = python -c x=1\nInclude-System-Site-Packages = TRUE\n",
			want: Cfg{
				Home: "/b", Command: "python -c x=1", IncludeSystemSitePackages: true,
				Raw: map[string]string{"home": "/b", "command": "python -c x=1", "include-system-site-packages": "TRUE"},
			},
		},
		{
			name: "comments, blank lines, CRLF, lone CR and a BOM",
			in:   "\uFEFF# made by hand\r\n\r\nhome = C:\\Python312\r\n   # indented comment\rversion = 3.12.0rc1\r\n\n",
			want: Cfg{
				Home: `C:\Python312`, Version: "3.12.0", IncludeSystemSitePackages: true,
				Raw: map[string]string{"home": `C:\Python312`, "version": "3.12.0rc1"},
			},
		},
		{
			// site.py ignores a line without '=' or with an empty key;
			// python3 -m venv writes one when the venv's path holds a
			// newline. NUL bytes do not stop site.py either.
			name: "lines site.py ignores",
			in:   "home = /usr/bin\ncommand = /usr/bin/python3.11 -m venv /tmp/x\ny/venv\r\n = 3\ngarbage here\rx\x00y = 1\n",
			want: Cfg{
				Home: "/usr/bin", Command: "/usr/bin/python3.11 -m venv /tmp/x", IncludeSystemSitePackages: true,
				Raw: map[string]string{"home": "/usr/bin", "command": "/usr/bin/python3.11 -m venv /tmp/x", "x\x00y": "1"},
			},
		},
		{
			name: "empty input",
			in:   "",
			want: Cfg{IncludeSystemSitePackages: true, Raw: map[string]string{}},
		},
		{
			name: "empty value and a bad version",
			in:   "home =\nversion = unknown\ninclude-system-site-packages = yes\n",
			want: Cfg{Raw: map[string]string{"home": "", "version": "unknown", "include-system-site-packages": "yes"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePyvenvCfg(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParsePyvenvCfgErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		line     int
		contains string
	}{
		{"invalid UTF-8", "home = /usr/\xffbin\n", 1, "not valid UTF-8"},
		{"invalid UTF-8 after CRLF", "a = b\r\nc = d\r\n\xfe\r\n", 3, "not valid UTF-8"},
		{"invalid UTF-8 after lone CR", "a = b\rx = \xc3", 2, "not valid UTF-8"},
		{"too large", strings.Repeat("a = b\n", MaxCfgSize/6+1), 0, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePyvenvCfg(strings.NewReader(tt.in))
			if !errors.Is(err, ErrMalformedCfg) {
				t.Fatalf("err = %v, want ErrMalformedCfg", err)
			}
			var ce *CfgError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %T, want *CfgError", err)
			}
			if ce.Line != tt.line {
				t.Errorf("line = %d, want %d (%v)", ce.Line, tt.line, err)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", err, tt.contains)
			}
		})
	}
}

func TestParsePyvenvCfgReadError(t *testing.T) {
	_, err := ParsePyvenvCfg(iotest.ErrReader(errors.New("disk on fire")))
	if err == nil || errors.Is(err, ErrMalformedCfg) || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v, want the read error, not ErrMalformedCfg", err)
	}
}

func TestReadCfgFileNamesFileAndLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pyvenv.cfg")
	writeFile(t, p, "home = /usr/bin\nversion = 3.11.2\xff\n", 0o644)
	_, err := ReadCfgFile(p)
	if !errors.Is(err, ErrMalformedCfg) {
		t.Fatalf("err = %v", err)
	}
	if want := p + ":2: malformed pyvenv.cfg: not valid UTF-8 (CPython's site.py refuses it)"; err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
}

func TestNormalizeVersion(t *testing.T) {
	testenv.Cases(t, "normalizeVersion", normalizeVersion, map[string]string{
		"3.12.1":             "3.12.1",
		"3.12.1.final.0":     "3.12.1",
		"2.7.18.final.0":     "2.7.18",
		"3.13.0rc1":          "3.13.0",
		"3.13.0a1":           "3.13.0",
		" 3.12 ":             "3.12",
		"3.12":               "3.12",
		"3":                  "",
		"":                   "",
		"abc":                "",
		"3.x.1":              "",
		"v3.12.1":            "",
		"3.12.1+":            "3.12.1",
		"3.1234567890.0":     "",
		"3.13t":              "3.13",
		"3.13.0.candidate.1": "3.13.0",
		"3.12.1.2":           "",
		"3.12x":              "",
	})
	if got := pyversion.MajorMinorOf("3.12.1.final.0"); got != "3.12" {
		t.Errorf("majorMinor = %q", got)
	}
}
