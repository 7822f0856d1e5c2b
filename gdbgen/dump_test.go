package gdbgen

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/plan"
)

func goldenDump() plan.Dump {
	return plan.Dump{
		Target: "4242",
		Walker: plan.Walker{
			Dir:      "/home/me/.local/share/pyattach/walker/1a2b",
			Version:  "3.11.2",
			ABIFlags: "d",
			Root:     "/proc/4242/root",
			Creds:    &plan.Creds{UID: 1000, GID: 100},
		},
		Runtime:   0x7f12_3456_7000,
		Output:    "/home/me/.cache/pyattach/dump/.pyattach-tmp-99-0011",
		Source:    true,
		MaxFrames: 4096,
		MaxReads:  500000,
		Timeout:   20 * time.Second,
	}
}

func TestDumpGolden(t *testing.T) {
	native := goldenDump()
	native.Target = ""
	native.Source = false
	native.Timeout = 1500 * time.Millisecond
	native.Walker.Root, native.Walker.Creds, native.Walker.ABIFlags = "", nil, ""
	np := plan.Plan{
		Target:       "4242",
		PID:          4242,
		Program:      "/usr/bin/python3.11",
		DebugDirs:    []string{"/srv/debug"},
		GDBExtension: "/home/me/.cache/pyattach/extensions/3.11.2/libpython.py",
		Walker:       &plan.Walker{Dir: "/ignored", Version: "3.11.2"},
	}
	native.Native = &np
	for _, tt := range []struct {
		name string
		d    plan.Dump
	}{{"dump", goldenDump()}, {"dump-native", native}} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Dump(tt.d)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.name+".early.gdb", s.Early)
			checkGolden(t, tt.name+".late.gdb", s.Late)
		})
	}
}

func TestDumpRefused(t *testing.T) {
	for _, tt := range []struct {
		name, path string
		d          func(d *plan.Dump, s string)
	}{
		{"newline in output", "/tmp/x\")\nshell id\npython (\"", func(d *plan.Dump, s string) { d.Output = s }},
		{"relative output", "out.json", func(d *plan.Dump, s string) { d.Output = s }},
		{"control in walker dir", "/tmp/w\x1b[2J", func(d *plan.Dump, s string) { d.Walker.Dir = s }},
		{"invalid UTF-8 in root", "/proc/1/root/\xff", func(d *plan.Dump, s string) { d.Walker.Root = s }},
		{"invalid UTF-8 in version", "3.11\xff", func(d *plan.Dump, s string) { d.Walker.Version = s }},
		{"native plan's sysroot", "/srv/a\nb", func(d *plan.Dump, s string) { d.Native = &plan.Plan{Sysroot: s} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := goldenDump()
			tt.d(&d, tt.path)
			s, err := Dump(d)
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != tt.path {
				t.Fatalf("Dump = %q, %v; want a PathError naming %q", s.Early+s.Late, err, tt.path)
			}
		})
	}
}

// Every Python literal of the walker block is pyquote's: a path holding
// quotes, backslashes, a backtick and non-ASCII reaches Python as it is.
func TestDumpQuotes(t *testing.T) {
	d := goldenDump()
	d.Output = "/tmp/q\"'\\`ü/out"
	s, err := Dump(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := `pyattach_gdb.dump("/tmp/q\"'\\\x60\xfc/out", native=False,`; !strings.Contains(s.Late, want) {
		t.Errorf("late part has no %s:\n%s", want, s.Late)
	}
}

// TestDumpKernel: a core's system calls reach the walker's dump as its
// kernel argument, by thread id, as kernel_view would give them.
func TestDumpKernel(t *testing.T) {
	d := goldenDump()
	d.Syscalls = map[int]plan.Syscall{
		9: {In: true, Nr: 98},
		5: {},
		7: {In: true, Nr: 202, Arg: 0x7f00, ArgKnown: true},
	}
	s, err := Dump(d)
	if err != nil {
		t.Fatal(err)
	}
	want := ", kernel={5: (None, None), 7: (202, 0x7f00), 9: (98, None)})"
	if !strings.Contains(s.Late, want) {
		t.Errorf("late script lacks %q:\n%s", want, s.Late)
	}
	if s, _ := Dump(goldenDump()); strings.Contains(s.Late, "kernel=") {
		t.Errorf("a live process's script has a kernel argument:\n%s", s.Late)
	}
}

// TestDumpEvalLoop: the eval loop's ranges reach the walker's dump with
// --native only.
func TestDumpEvalLoop(t *testing.T) {
	d := goldenDump()
	d.EvalLoop = [][2]uint64{{0x447000, 0x448000}, {0x5b0000, 0x5b9000}}
	s, err := Dump(d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.Late, "eval_loop") {
		t.Errorf("eval_loop without --native:\n%s", s.Late)
	}
	d.Native = &plan.Plan{PID: 4242}
	if s, err = Dump(d); err != nil {
		t.Fatal(err)
	}
	if want := ", eval_loop=((0x447000, 0x448000), (0x5b0000, 0x5b9000), ))"; !strings.Contains(s.Late, want) {
		t.Errorf("late script lacks %q:\n%s", want, s.Late)
	}
}
