package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestLLDBServerScript: for a process whose executable path this machine
// lacks, lldb gets a script that starts lldb-server in a private mount
// namespace where an ELF identification pyattach wrote (the class and
// byte order of the process's file, not its bytes; not executable) is
// shown at that path, by an overlay of the nearest directory this
// machine has. A path this machine has needs no script (nothing is ever
// covered); a path that cannot be written into the overlay's options,
// one with "..", and one whose only existing directory is "/" are
// refused. Without root, the missing path is an error with a hint.
func TestLLDBServerScript(t *testing.T) {
	home := t.TempDir()
	root := t.TempDir()
	exe := "/usr/bin/pyattach-test-no-such-python/bin/python3"
	testenv.CopyFile(t, "/bin/true", filepath.Join(root, exe), 0)
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LLDB_DEBUGSERVER_PATH=/opt/llvm/bin/lldb-server", "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}
	p := plan.Plan{PID: 4242, LLDBRoot: root, LLDBExe: exe}

	if os.Geteuid() != 0 {
		_, err := lldbServerFor(p, "/usr/bin/lldb", env)
		if err == nil || hintFor(err) == "" || !strings.Contains(err.Error(), exe) {
			t.Fatalf("without root: %v (hint %q), want an error naming %s with a hint", err, hintFor(err), exe)
		}
		return
	}
	server, err := lldbServerFor(p, "/usr/bin/lldb", env)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(server)
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("script %s: %v %v", server, st, err)
	}
	b, err := os.ReadFile(server)
	if err != nil {
		t.Fatal(err)
	}
	stubs, _ := filepath.Glob(filepath.Join(home, "cache", "pyattach", "lldb-server", "*", exe))
	if len(stubs) != 1 {
		t.Fatalf("files shown to lldb-server: %v, want one", stubs)
	}
	tree := strings.TrimSuffix(stubs[0], exe)
	want := shquote.Join([]string{"/usr/bin/mount", tree + "/usr/bin", "/usr/bin", "/opt/llvm/bin/lldb-server"}) + ` "$@"`
	if !strings.Contains(string(b), want) || !strings.Contains(string(b), `lowerdir=$2:$3`) {
		t.Errorf("script lacks %q:\n%s", want, b)
	}
	stub := stubs[0]
	got, err := os.ReadFile(stub)
	st, err2 := os.Stat(stub)
	if err != nil || err2 != nil || len(got) != 64 || string(got[:7]) != "\x7fELF\x02\x01\x01" || strings.Trim(string(got[7:]), "\x00") != "" || st.Mode().Perm()&0o111 != 0 {
		t.Errorf("the file shown to lldb-server, %s: %q %v %v, want 64 bytes of ELF64 LSB identification, not executable", stub, got, err, err2)
	}
	if s, err := lldbServerFor(plan.Plan{PID: 4242, LLDBRoot: root, LLDBExe: "/bin/true"}, "/usr/bin/lldb", env); s != "" || err != nil {
		t.Errorf("for a path this machine has: %q %v, want none", s, err)
	}
	for _, bad := range []string{"/usr/bin/py:thon", "/usr/bin/py,thon", `/usr/bin/py\thon`, "/usr/bin/../python3", "/pyattach-test-no-such-dir/python3", "python3"} {
		p := plan.Plan{PID: 4242, LLDBRoot: root, LLDBExe: bad}
		testenv.CopyFile(t, "/bin/true", filepath.Join(root, bad), 0)
		if s, err := lldbServerFor(p, "/usr/bin/lldb", env); err == nil {
			t.Errorf("%q: accepted (%s)", bad, s)
		}
	}
}
