package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adrg/xdg"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/gdbgen/plan"
)

// TestLLDBServerScript: for a process whose executable path this machine
// lacks, lldb gets a script that starts lldb-server in a private mount
// namespace with a copy of the process's executable (kept by build-id)
// laid over the nearest directory this machine has; a path that cannot
// be written into the overlay's options, one with "..", and one whose
// only existing directory is "/" are refused. Without root, the missing
// path is an error with a hint.
func TestLLDBServerScript(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	xdg.Reload()
	t.Cleanup(xdg.Reload)
	root := t.TempDir()
	exe := "/usr/bin/pyattach-test-no-such-python/bin/python3"
	copyFile(t, "/bin/true", filepath.Join(root, exe))
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LLDB_DEBUGSERVER_PATH=/opt/llvm/bin/lldb-server"}
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
	id, err := elfinfo.ReadBuildIDFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(home, "cache", "pyattach", "lldb-server", id)
	want := shellJoin([]string{"/usr/bin/mount", tree + "/usr/bin", "/usr/bin", "/opt/llvm/bin/lldb-server"}) + ` "$@"`
	if !strings.Contains(string(b), want) || !strings.Contains(string(b), `lowerdir=$2:$3`) {
		t.Errorf("script lacks %q:\n%s", want, b)
	}
	got, err1 := os.ReadFile(filepath.Join(tree, exe))
	orig, err2 := os.ReadFile("/bin/true")
	if err1 != nil || err2 != nil || !bytes.Equal(got, orig) {
		t.Errorf("copy of the executable in %s: %v %v, equal %v", tree, err1, err2, bytes.Equal(got, orig))
	}
	for _, bad := range []string{"/usr/bin/py:thon", "/usr/bin/py,thon", `/usr/bin/py\thon`, "/usr/bin/../python3", "/pyattach-test-no-such-dir/python3", "python3"} {
		p := plan.Plan{PID: 4242, LLDBRoot: root, LLDBExe: bad}
		copyFile(t, "/bin/true", filepath.Join(root, bad))
		if s, err := lldbServerFor(p, "/usr/bin/lldb", env); err == nil {
			t.Errorf("%q: accepted (%s)", bad, s)
		}
	}
}
