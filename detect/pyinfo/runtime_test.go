package pyinfo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/testenv"
)

// runtimeProgram prints where the loader put its _PyRuntime, then waits.
const runtimeProgram = `#include <stdio.h>
char _PyRuntime[4096] = {1};
int main(void) {
	printf("%p\n", (void *)_PyRuntime);
	fflush(stdout);
	getchar();
	return 0;
}
`

// The address ReadRuntime and Address compute from the file and the
// process's maps is the one the program itself prints: PIE and fixed
// executables, with and without .symtab.
func TestRuntimeAddressLive(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"pie", []string{"-O0", "-fPIE", "-pie", "-rdynamic"}},
		{"nopie", []string{"-O0", "-fno-PIE", "-no-pie", "-rdynamic"}},
		{"pie-stripped", []string{"-O0", "-fPIE", "-pie", "-rdynamic", "-s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			exe := testenv.CC(t, dir, c.name, runtimeProgram, c.args...)
			cmd := exec.Command(exe)
			stdin, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stdin.Close(); cmd.Wait() }()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			var want uint64
			fmt.Sscanf(strings.TrimSpace(line), "0x%x", &want)

			f, err := os.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rt, err := ReadRuntime(f)
			if err != nil {
				t.Fatal(err)
			}
			maps, err := proc.New("/proc").Maps(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			real, _ := filepath.EvalSymlinks(exe)
			var got uint64
			var ok bool
			for _, m := range maps {
				if m.Path == real {
					got, ok = rt.Address(m.Start, m.Offset)
					break
				}
			}
			if !ok || got != want {
				t.Errorf("Address = %#x, %v; the program's &_PyRuntime is %#x", got, ok, want)
			}
		})
	}
}

func TestRuntimeMissing(t *testing.T) {
	exe := testenv.CC(t, t.TempDir(), "plain", "int main(void) { return 0; }\n")
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ReadRuntime(f); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("ReadRuntime of a program without _PyRuntime: %v, want ErrNoRuntime", err)
	}
}

// Address places the symbol by the segment that holds the mapping's
// file offset, whichever mapping of the file is given.
func TestRuntimeAddressSegments(t *testing.T) {
	rt := &Runtime{Value: 0x5a0010, Loads: []Load{
		{Off: 0, Vaddr: 0x400000, Filesz: 0x1000},
		{Off: 0x1000, Vaddr: 0x401000, Filesz: 0x100000},
		{Off: 0x19f000, Vaddr: 0x5a0000, Filesz: 0x2000},
	}}
	for _, c := range []struct{ start, off, want uint64 }{
		{0x400000, 0, 0x5a0010},             // fixed executable, first mapping
		{0x401000, 0x1000, 0x5a0010},        // its text mapping
		{0x7f0000000000, 0, 0x7f00001a0010}, // the same layout loaded with a bias
		{0x5a0000, 0x19f000, 0x5a0010},      // its data mapping
	} {
		if got, ok := rt.Address(c.start, c.off); !ok || got != c.want {
			t.Errorf("Address(%#x, %#x) = %#x, %v; want %#x", c.start, c.off, got, ok, c.want)
		}
	}
	if _, ok := rt.Address(0x400000, 0x900000); ok {
		t.Errorf("Address of an offset no segment holds reported ok")
	}
}
