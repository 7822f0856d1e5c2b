package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/pyattach/pyattach/detect/testenv"
)

// pidsOf is the PIDs of ds, in their order.
func pidsOf(ds []Descendant) []int {
	var out []int
	for _, d := range ds {
		out = append(out, d.PID)
	}
	return out
}

// familyTree is a fake /proc: init (1) with bash (100) and other (400);
// bash runs python 250 and 120; 250 runs python 130, a grandchild with
// a lower PID than its parent; 120 runs sh (90).
func familyTree(t *testing.T) string {
	t.Helper()
	return writeTree(t,
		fakeProc{pid: 1, ppid: 0, comm: "init"},
		fakeProc{pid: 100, ppid: 1, comm: "bash"},
		fakeProc{pid: 250, ppid: 100, comm: "python3.11"},
		fakeProc{pid: 120, ppid: 100, comm: "python3.11"},
		fakeProc{pid: 130, ppid: 250, comm: "python3.11"}, // grandchild, lower pid than its parent
		fakeProc{pid: 90, ppid: 120, comm: "sh"},
		fakeProc{pid: 400, ppid: 1, comm: "other"},
	)
}

// TestTreeScan: without children files, the parents come from every
// PID/stat; the order is depth first, children by PID.
func TestTreeScan(t *testing.T) {
	root := familyTree(t)
	p := New(root)
	got, err := p.Tree(100)
	if err != nil {
		t.Fatal(err)
	}
	want := []Descendant{
		{PID: 120, PPID: 100, Depth: 1, Start: 100},
		{PID: 90, PPID: 120, Depth: 2, Start: 100},
		{PID: 250, PPID: 100, Depth: 1, Start: 100},
		{PID: 130, PPID: 250, Depth: 2, Start: 100},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tree(100) = %+v, want %+v", got, want)
	}
	if got, err := p.Tree(130); err != nil || len(got) != 0 {
		t.Errorf("Tree(130) = %v, %v; want none", got, err)
	}
	if _, err := p.Tree(777); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Tree(777): %v, want ErrNoProcess", err)
	}
}

// statFile is a PID/stat line with the fields Tree reads.
func statFile(pid, ppid int, state string, start uint64) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(fmt.Sprintf("%d (x y) %s %d 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, state, ppid, start))}
}

// TestTreeChildrenFiles: every thread's children file counts (a child
// forked by a thread other than the main one); a child named there whose
// directory is gone is kept with Start 0, and its own children are not
// looked for; a thread that exits meanwhile is skipped.
func TestTreeChildrenFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"10/stat":             statFile(10, 1, "S", 5),
		"10/task/10/children": {Data: []byte("30 20 ")},
		"10/task/11/children": {Data: []byte("50 ")},
		"10/task/12/stat":     statFile(12, 1, "S", 5), // exited: no children file
		"20/stat":             statFile(20, 10, "S", 7),
		"20/task/20/children": {Data: []byte("")},
		"30/stat":             statFile(30, 10, "Z", 8),
		"30/task/30/children": {Data: []byte("")},
		"50/stat":             statFile(50, 10, "S", 9),
		"50/task/50/children": {Data: []byte("60 ")},
		"60/stat":             statFile(60, 50, "S", 11),
		"60/task/60/children": {Data: []byte("10 ")}, // a cycle is not followed
	}
	// Process 40 is named by thread 11 but has exited.
	fsys["10/task/11/children"] = &fstest.MapFile{Data: []byte("50 40 ")}
	got, err := (&Proc{FS: fsys}).Tree(10)
	if err != nil {
		t.Fatal(err)
	}
	want := []Descendant{
		{PID: 20, PPID: 10, Depth: 1, Start: 7},
		{PID: 30, PPID: 10, Depth: 1, Start: 8},
		{PID: 40, PPID: 10, Depth: 1},
		{PID: 50, PPID: 10, Depth: 1, Start: 9},
		{PID: 60, PPID: 50, Depth: 2, Start: 11},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tree(10) = %+v\nwant %+v", got, want)
	}
	if got, err := (&Proc{FS: fsys}).Tree(20); err != nil || len(got) != 0 {
		t.Errorf("Tree(20) = %v, %v; want none", got, err)
	}

	// Children that may not be read: the process is kept, without them.
	denied := errFS{FS: fsys, errs: map[string]error{"50/task/50/children": &fs.PathError{Op: "open", Path: "50/task/50/children", Err: syscall.EACCES}}}
	got, err = (&Proc{FS: denied}).Tree(10)
	if err != nil || len(got) != 4 || got[3].PID != 50 {
		t.Errorf("Tree(10) with 50's children denied = %+v, %v", got, err)
	}

	// A malformed children file is an error naming it.
	fsys["50/task/50/children"] = &fstest.MapFile{Data: []byte("60 x1 ")}
	if _, err := (&Proc{FS: fsys, Root: "/proc"}).Tree(10); err == nil || !strings.Contains(err.Error(), "/proc/50/task/50/children") {
		t.Errorf("Tree with a malformed children file: %v", err)
	}
}

func TestParseStatInfo(t *testing.T) {
	st, err := ParseStatInfo([]byte("4242 (a) b (c)) Z 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (StatInfo{PPID: 17, State: "Z", Comm: "a) b (c)", Start: 123456}); st != want {
		t.Errorf("ParseStatInfo = %+v, want %+v", st, want)
	}
	for _, in := range []string{"", "1 (a) S 0", "1 (a) S x 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5", "1 (a) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -5"} {
		if _, err := ParseStatInfo([]byte(in)); err == nil {
			t.Errorf("ParseStatInfo(%q): no error", in)
		}
	}
}

func TestParseChildren(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"12 345 ", []int{12, 345}, false},
		{"7\n", []int{7}, false},
		{"012 ", nil, true},
		{"-3 ", nil, true},
		{"+3 ", nil, true},
		{"0 ", nil, true},
		{"1x ", nil, true},
		{"99999999999999999999 ", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseChildren([]byte(tt.in))
		if (err != nil) != tt.bad || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseChildren(%q) = %v, %v; want %v (error: %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// FuzzParseChildren: no panic; what is accepted is positive PIDs that
// survive being written as the kernel writes them and parsed again. The
// seeds in testdata/fuzz/FuzzParseChildren are real files and broken
// ones.
func FuzzParseChildren(f *testing.F) {
	f.Add([]byte("1234 1240 "))
	f.Fuzz(func(t *testing.T, b []byte) {
		pids, err := ParseChildren(b)
		if err != nil {
			return
		}
		var w strings.Builder
		for _, p := range pids {
			if p <= 0 {
				t.Fatalf("pid %d from %q", p, b)
			}
			fmt.Fprintf(&w, "%d ", p)
		}
		again, err := ParseChildren([]byte(w.String()))
		if err != nil || !reflect.DeepEqual(again, pids) {
			t.Fatalf("%q: %v, again %v, %v", b, pids, again, err)
		}
	})
}

// noChildrenFS hides every children file, as a kernel without
// CONFIG_PROC_CHILDREN has none.
type noChildrenFS struct{ fs.FS }

func (n noChildrenFS) Open(name string) (fs.File, error) {
	if path.Base(name) == "children" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return n.FS.Open(name)
}

// TestTreeLive: a real shell with two children and a subshell with its
// own child, read from /proc through the children files and by scanning
// every stat: both give the same tree, in tree order.
func TestTreeLive(t *testing.T) {
	sh := testenv.Need(t, "sh")
	cmd := exec.Command(sh, "-c", "sleep 1000 & sleep 1000 & (sleep 1000 & echo ready; wait) & wait")
	testenv.Start(t, cmd)
	pid := cmd.Process.Pid
	p := New("/proc")
	got, err := p.Tree(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Tree order: children by PID, the subshell's own child right after
	// it.
	var shape []string
	for i, d := range got {
		st, err := p.StatInfo(d.PID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Start != d.Start || st.PPID != d.PPID {
			t.Errorf("%+v: stat says ppid %d start %d", d, st.PPID, st.Start)
		}
		if d.Depth == 1 && i > 0 && got[i-1].Depth == 1 && got[i-1].PID > d.PID {
			t.Errorf("children not by PID: %v", pidsOf(got))
		}
		if d.Depth == 2 && (i == 0 || got[i-1].PID != d.PPID) {
			t.Errorf("grandchild %d not right after its parent: %+v", d.PID, got)
		}
		// Depths only: a child forked but not yet exec'd still has the
		// shell's comm.
		shape = append(shape, strconv.Itoa(d.Depth))
	}
	sorted := slices.Clone(shape)
	slices.Sort(sorted)
	if fmt.Sprint(sorted) != "[1 1 1 2]" {
		t.Errorf("tree of sh %d: depths %v (%+v)", pid, shape, got)
	}
	scan, err := (&Proc{FS: noChildrenFS{p.FS}, Root: "/proc"}).Tree(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(scan, got) {
		t.Errorf("scanning stat gives %+v, the children files %+v", scan, got)
	}
}
