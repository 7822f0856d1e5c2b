package prefault

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestParseMaps reads this process's own maps as run does and finds the
// mapping of its executable's code by device and inode.
func TestParseMaps(t *testing.T) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		t.Fatal(err)
	}
	maps := parseMaps(b)
	if want := strings.Count(string(b), "\n"); len(maps) != want {
		t.Fatalf("parseMaps read %d mappings of %d lines", len(maps), want)
	}
	found := false
	for _, m := range maps {
		if m.dev == st.Dev && m.inode == st.Ino && !m.write {
			found = true
		}
	}
	if !found {
		t.Errorf("no mapping of the executable (dev %#x inode %d) among %d", st.Dev, st.Ino, len(maps))
	}
}

// TestCodeMapped: when the executable is in the page cache, init maps
// in every page of its code, so that the code's mapping is resident
// (Rss) to its whole size. The test binary reads its own file whole (it
// is then cached) and runs again to check that in a fresh process.
func TestCodeMapped(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadFile(exe); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^TestCodeMapped$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestCodeMapped") {
			t.Fatalf("the check in a fresh process: %v\n%s", err, out)
		}
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	var start, end uintptr
	var size, rss int
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		fs := strings.Fields(l)
		if len(fs) >= 5 && strings.Contains(fs[0], "-") {
			in = len(fs) >= 6 && fs[5] == exe && strings.HasPrefix(fs[1], "r-x")
			if in {
				a, b, _ := strings.Cut(fs[0], "-")
				s, _ := strconv.ParseUint(a, 16, 64)
				e, _ := strconv.ParseUint(b, 16, 64)
				start, end = uintptr(s), uintptr(e)
			}
			continue
		}
		if !in || len(fs) < 2 {
			continue
		}
		n, _ := strconv.Atoi(fs[1])
		switch fs[0] {
		case "Size:":
			size = n
		case "Rss:":
			rss = n
		}
	}
	if start == 0 || size == 0 {
		t.Fatalf("no code mapping of %s in smaps", exe)
	}
	if !cached(start, end) {
		t.Fatalf("%s is not wholly in the page cache though it was just read", exe)
	}
	if rss != size {
		t.Errorf("the executable's code is %d KiB, %d KiB of it mapped in; want all", size, rss)
	}
}

// childEnv tells the test binary it runs TestCodeMapped's check.
const childEnv = "PYATTACH_PREFAULT_TEST_CHILD"

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte("00400000-00a4d000 r-xp 00000000 fe:01 1234 /usr/bin/x\n7ffd-7ffe rw-p 00000000 00:00 0 [stack]\n"))
	f.Add([]byte("c000000000-c000400000 rw-p 00000000 00:00 0 \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range parseMaps(b) {
			if m.end <= m.start {
				t.Fatalf("mapping %#x-%#x", m.start, m.end)
			}
		}
	})
}
