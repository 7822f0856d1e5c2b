package pywalk

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/lldbgen"
)

// TestGeneratedScriptsLoadWalker: the scripts gdbgen and lldbgen write
// for a Plan with a Walker load it in real gdb and lldb from directories
// with names each debugger would otherwise mangle or evaluate, and py-bt
// then prints the process's frames.
func TestGeneratedScriptsLoadWalker(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	ins := interpreters(t)
	in := ins[len(ins)-1]
	cmd := start(t, in.exe, nil)
	pid := cmd.Process.Pid
	for _, name := range []string{"plain", "with space", `quote"and'apostrophe`, "back`tick`", "dollar$HOME", "tilde ~root", "ünïcode"} {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, name)
			os.MkdirAll(dir, 0o700)
			for f, b := range Files() {
				os.WriteFile(filepath.Join(dir, f), b, 0o644)
			}
			p := plan.Plan{PID: pid, Walker: &plan.Walker{Dir: dir, Version: in.version, ABIFlags: in.flags}}

			sc, err := gdbgen.Generate(p)
			if err != nil {
				t.Fatalf("gdbgen: %v", err)
			}
			early := filepath.Join(base, "early.gdb")
			late := filepath.Join(base, "late.gdb")
			os.WriteFile(early, []byte(sc.Early), 0o644)
			os.WriteFile(late, []byte(sc.Late), 0o644)
			out := run(t, nil, "gdb", "-nx", "-batch", "-iex", "set auto-load off", "-ix", early, "-p", strconv.Itoa(pid), "-x", late, "-ex", "thread apply all py-bt")
			checkApp(t, "gdb", stacks(out, gdbThreadRe))
			if t.Failed() {
				t.Logf("early:\n%s\nlate:\n%s\ngdb:\n%s", sc.Early, sc.Late, out)
			}

			ls, err := lldbgen.Generate(p)
			if err != nil {
				t.Fatalf("lldbgen: %v", err)
			}
			before := filepath.Join(base, "before.lldb")
			os.WriteFile(before, []byte(ls.Before), 0o644)
			out = run(t, testenv.LLDBEnv(), "lldb", "-b", "-S", before, "-p", strconv.Itoa(pid), "-o", "py-bt all")
			checkApp(t, "lldb", stacks(out, lldbThreadRe))
			if t.Failed() {
				t.Logf("before:\n%s\nlldb:\n%s", ls.Before, out)
			}
		})
	}
}
