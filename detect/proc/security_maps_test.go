package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// A file whose name holds a newline, mapped by a real process: ParseMaps
// of the kernel's /proc/PID/maps (which writes the newline as \012) gives
// the exact name, so the file can be opened by it.
func TestSecurityMapsNewlineLive(t *testing.T) {
	testenv.Need(t, python)
	name := filepath.Join(t.TempDir(), "lib\nx\\y\t \n.so")
	if err := os.WriteFile(name, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", `import mmap, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
print("ready", flush=True)
time.sleep(600)
`, name)
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("python: %q", line)
	}
	maps := readMapsFile(t, filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "maps"))
	var st syscall.Stat_t
	if err := syscall.Stat(name, &st); err != nil {
		t.Fatal(err)
	}
	for _, m := range maps {
		if m.Inode == st.Ino {
			if m.Path != name {
				t.Errorf("mapping of inode %d: path %q, want %q", st.Ino, m.Path, name)
			}
			return
		}
	}
	t.Errorf("no mapping of %q among:\n%+v", name, maps)
}
