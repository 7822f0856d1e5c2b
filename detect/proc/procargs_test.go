package proc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// procArgs lays out kern.procargs2 data as macOS does: argc, the exec
// path, NUL padding to a word boundary, the arguments, the environment.
func procArgs(argc uint32, exe string, pad int, args, env []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, argc)
	b = append(b, exe...)
	b = append(b, make([]byte, 1+pad)...)
	for _, s := range append(args, env...) {
		b = append(append(b, s...), 0)
	}
	return b
}

func TestParseProcArgs(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin", "HOME=/Users/me"}
	for _, c := range []struct {
		name    string
		b       []byte
		want    ProcArgs
		abs     string
		wantErr string
	}{
		{"python", procArgs(3, "/opt/homebrew/bin/python3.13", 3, []string{"python3.13", "app.py", "--port=1"}, env),
			ProcArgs{"/opt/homebrew/bin/python3.13", []string{"python3.13", "app.py", "--port=1"}}, "/opt/homebrew/bin/python3.13", ""},
		{"no padding, no env", procArgs(1, "/usr/bin/python3", 0, []string{"python3"}, nil),
			ProcArgs{"/usr/bin/python3", []string{"python3"}}, "/usr/bin/python3", ""},
		{"empty argument", procArgs(2, "/x/y", 7, []string{"y", ""}, env),
			ProcArgs{"/x/y", []string{"y", ""}}, "/x/y", ""},
		{"relative exec path", procArgs(1, "./.venv/bin/python", 2, []string{"python"}, env),
			ProcArgs{"./.venv/bin/python", []string{"python"}}, "", ""},
		{"unclean exec path", procArgs(1, "/a/../b/python", 2, []string{"python"}, env),
			ProcArgs{"/a/../b/python", []string{"python"}}, "", ""},
		{"too short", []byte{1, 0}, ProcArgs{}, "", "at byte 0: shorter than its argument count"},
		{"no exec path NUL", append(binary.LittleEndian.AppendUint32(nil, 0), "/usr/bin/python"...), ProcArgs{}, "", "at byte 4: executable path without its NUL"},
		{"empty exec path", procArgs(0, "", 0, nil, nil), ProcArgs{}, "", "at byte 4: empty executable path"},
		{"lying argc", procArgs(0xffffffff, "/usr/bin/python3", 1, []string{"python3"}, nil), ProcArgs{}, "", "4294967295 arguments in 8 bytes"},
		{"last argument cut", append(procArgs(2, "/p", 1, []string{"p"}, nil), "cut"...), ProcArgs{}, "", "at byte 10: argument 1 without its NUL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseProcArgs(c.b)
			if c.wantErr != "" {
				var pe *ProcArgsError
				if !errors.As(err, &pe) || !errors.Is(err, ErrMalformedProcArgs) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want a *ProcArgsError with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if got.AbsExe() != c.abs {
				t.Errorf("AbsExe = %q, want %q", got.AbsExe(), c.abs)
			}
		})
	}
	if _, err := ParseProcArgs(make([]byte, MaxProcArgs+1)); !errors.Is(err, ErrMalformedProcArgs) {
		t.Errorf("oversized data: %v", err)
	}
}

// FuzzParseProcArgs checks that ParseProcArgs does not panic, fails
// only with a *ProcArgsError, and that what it accepts lays out again
// to data it reads the same.
func FuzzParseProcArgs(f *testing.F) {
	f.Add(procArgs(3, "/opt/homebrew/bin/python3.13", 3, []string{"python3.13", "app.py", "-X"}, []string{"HOME=/Users/me"}))
	f.Add(procArgs(1, "./python", 0, []string{"python"}, nil))
	f.Add(procArgs(0xffff, "/p", 1, nil, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		pa, err := ParseProcArgs(b)
		if err != nil {
			var pe *ProcArgsError
			if !errors.As(err, &pe) || !errors.Is(err, ErrMalformedProcArgs) {
				t.Fatalf("error %v is not a *ProcArgsError", err)
			}
			if pe.Off < 0 || pe.Off > max(len(b), MaxProcArgs) {
				t.Fatalf("offset %d out of range", pe.Off)
			}
			return
		}
		if pa.Exe == "" || strings.ContainsRune(pa.Exe, 0) {
			t.Fatalf("bad exec path %q", pa.Exe)
		}
		if abs := pa.AbsExe(); abs != "" && (abs[0] != '/' || strings.Contains(abs, "/../")) {
			t.Fatalf("AbsExe %q", abs)
		}
		for _, a := range pa.Args {
			if strings.ContainsRune(a, 0) {
				t.Fatalf("argument %q holds a NUL", a)
			}
		}
		again, err := ParseProcArgs(procArgs(uint32(len(pa.Args)), pa.Exe, 0, pa.Args, nil))
		if err != nil || !reflect.DeepEqual(again, pa) {
			t.Fatalf("again: %+v, %v; want %+v", again, err, pa)
		}
		if bytes.Equal(b, nil) {
			t.Fatal("accepted no data")
		}
	})
}

func TestCheckPlatform(t *testing.T) {
	if err := CheckPlatform("linux", 42); err != nil {
		t.Errorf("linux: %v", err)
	}
	err := CheckPlatform("darwin", 42)
	var ne *NeedsLinuxError
	if !errors.As(err, &ne) || !errors.Is(err, ErrNeedsLinux) || ne.PID != 42 {
		t.Fatalf("darwin: %v", err)
	}
	if want := "process 42: reading a running process needs Linux (/proc and ptrace); this system is darwin"; err.Error() != want {
		t.Errorf("darwin: %q\nwant %q", err, want)
	}
	if runtime.GOOS != "darwin" && ne.Exe != "" {
		t.Errorf("darwin seen from %s named an executable %q", runtime.GOOS, ne.Exe)
	}
	if got := CheckPlatform("", 42); (got == nil) != (runtime.GOOS == "linux") {
		t.Errorf("running system %s: %v", runtime.GOOS, got)
	}
}
