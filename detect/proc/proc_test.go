package proc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/detect/testenv"
)

// fakeProc describes one process of a fake proc tree.
type fakeProc struct {
	pid, ppid, uid int
	comm           string
	state          string // "S" when empty
	cmdline        []string
	exe            string // target of PID/exe; no link when empty
	root           string // target of PID/root; no link when empty
	mntns          string // target of PID/ns/mnt; no link when empty
	maps           string
}

// selfMountNS is the mount namespace of the reader in fake trees.
const selfMountNS = "mnt:[4026531841]"

// writeTree writes a fake proc tree with real files and symbolic links
// into a new temporary directory and returns its path.
func writeTree(t *testing.T, procs ...fakeProc) string {
	t.Helper()
	dir := t.TempDir()
	mkdir := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(filepath.Join(dir, "self", "ns"))
	link(selfMountNS, filepath.Join(dir, "self", "ns", "mnt"))
	mkdir(filepath.Join(dir, "sys", "kernel"))
	write(filepath.Join(dir, "uptime"), "1.0 1.0\n")
	for _, p := range procs {
		pd := filepath.Join(dir, fmt.Sprint(p.pid))
		mkdir(filepath.Join(pd, "ns"))
		state := p.state
		if state == "" {
			state = "S"
		}
		write(filepath.Join(pd, "stat"), fmt.Sprintf("%d (%s) %s %d %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 100 10000 100\n",
			p.pid, p.comm, state, p.ppid, p.pid, p.pid))
		write(filepath.Join(pd, "status"), fmt.Sprintf("Name:\t%s\nUmask:\t0022\nState:\t%s (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\nUid:\t%d\t%d\t%d\t%d\nGid:\t0\t0\t0\t0\n",
			p.comm, state, p.pid, p.pid, p.ppid, p.uid, p.uid, p.uid, p.uid))
		cmd := ""
		for _, a := range p.cmdline {
			cmd += a + "\x00"
		}
		write(filepath.Join(pd, "cmdline"), cmd)
		write(filepath.Join(pd, "maps"), p.maps)
		if p.exe != "" {
			link(p.exe, filepath.Join(pd, "exe"))
		}
		if p.root != "" {
			link(p.root, filepath.Join(pd, "root"))
		}
		if p.mntns != "" {
			link(p.mntns, filepath.Join(pd, "ns", "mnt"))
		}
	}
	return dir
}

// realELF returns an ELF file with a build-id on this machine.
func realELF(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3.11", "/usr/bin/sleep", "/bin/sh"} {
		if _, err := elfinfo.ReadBuildIDFile(p); err == nil {
			return p
		}
	}
	testenv.Missing(t, "no ELF file with a build-id among /usr/bin/python3.11, /usr/bin/sleep, /bin/sh")
	return ""
}

func readBuildID(t *testing.T, f fs.File) string {
	t.Helper()
	ra, ok := f.(io.ReaderAt)
	if !ok {
		t.Fatalf("%T is not an io.ReaderAt", f)
	}
	id, err := elfinfo.ReadBuildID(ra)
	if err != nil {
		t.Fatalf("ReadBuildID: %v", err)
	}
	return id
}

func TestProcessFake(t *testing.T) {
	elf := realELF(t)
	box := t.TempDir()
	root := writeTree(t,
		fakeProc{pid: 1234, ppid: 1, uid: 1000, comm: "py (thon)) x", cmdline: []string{"python3", "-c", "", "a b"},
			exe: elf, root: "/", mntns: selfMountNS, maps: "1000-2000 r--p 00000000 08:01 42 /x\n"},
		fakeProc{pid: 1235, ppid: 1234, uid: 0, comm: "gone", state: "Z", exe: "/opt/app/python3 (deleted)", root: "/", mntns: "mnt:[4026531840]"},
		fakeProc{pid: 1236, ppid: 1234, comm: "boxed", exe: "/usr/bin/python3", root: box},
		fakeProc{pid: 2, comm: "kthreadd", root: "/", mntns: selfMountNS},
	)
	p := New(root)

	got, err := p.Process(1234)
	if err != nil {
		t.Fatal(err)
	}
	want := &Process{PID: 1234, PPID: 1, UID: 1000, State: "S", Comm: "py (thon)) x", Cmdline: []string{"python3", "-c", "", "a b"},
		Exe: elf, Root: "/", MountNS: selfMountNS, SelfMountNS: selfMountNS}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Process(1234):\n got %+v\nwant %+v", got, want)
	}

	f, err := p.OpenExe(1234)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantID, err := elfinfo.ReadBuildIDFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	if id := readBuildID(t, f); id != wantID {
		t.Errorf("OpenExe build-id %s, want %s", id, wantID)
	}

	// Deleted exe, other mount namespace.
	got, err = p.Process(1235)
	if err != nil {
		t.Fatal(err)
	}
	if got.Exe != "/opt/app/python3" || !got.ExeDeleted || got.State != "Z" || got.Cmdline != nil ||
		got.MountNS != "mnt:[4026531840]" || !got.Container {
		t.Errorf("Process(1235) = %+v", got)
	}

	// Another root, no ns link: Container from Root alone.
	got, err = p.Process(1236)
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != box || got.MountNS != "" || !got.Container {
		t.Errorf("Process(1236) = %+v", got)
	}

	// A kernel thread: no exe link, no cmdline.
	got, err = p.Process(2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Exe != "" || got.ExeDeleted || got.Container || got.Comm != "kthreadd" || got.PPID != 0 {
		t.Errorf("Process(2) = %+v", got)
	}

	maps, err := p.Maps(1234)
	if err != nil || len(maps) != 1 || maps[0].Path != "/x" {
		t.Errorf("Maps(1234) = %v, %v", maps, err)
	}
}

func TestProcessMissing(t *testing.T) {
	root := writeTree(t, fakeProc{pid: 10, comm: "a", root: "/"})
	p := New(root)
	for _, pid := range []int{999, 0, -1} {
		_, err := p.Process(pid)
		if !errors.Is(err, ErrNoProcess) {
			t.Errorf("Process(%d) error = %v, want ErrNoProcess", pid, err)
		}
	}
	_, err := p.Process(999)
	if want := "read " + root + "/999/stat: no such process"; err == nil || err.Error() != want {
		t.Errorf("Process(999) error %q, want %q", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
	if _, err := p.Maps(999); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Maps(999) error = %v", err)
	}
	if _, err := p.OpenExe(999); !errors.Is(err, ErrNoProcess) {
		t.Errorf("OpenExe(999) error = %v", err)
	}
	if _, err := p.Children(999); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Children(999) error = %v", err)
	}
	// A missing file of a live process is not ErrNoProcess.
	_, err = p.OpenInRoot(10, "/no/such/file")
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNoProcess) {
		t.Errorf("OpenInRoot(10, missing) error = %v", err)
	}
	if want := "open " + root + "/10/root/no/such/file: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("OpenInRoot error %q, want %q", err, want)
	}
}

func TestMapsMalformed(t *testing.T) {
	root := writeTree(t, fakeProc{pid: 7, comm: "a", maps: "1000-2000 r--p 00000000 08:01 42 /x\nnonsense\n"})
	_, err := New(root).Maps(7)
	if !errors.Is(err, ErrMalformedMaps) {
		t.Fatalf("error = %v, want ErrMalformedMaps", err)
	}
	if want := "read " + root + "/7/maps: malformed maps line 2"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want prefix %q", err, want)
	}
}

func TestPIDs(t *testing.T) {
	root := writeTree(t, fakeProc{pid: 300, comm: "a"}, fakeProc{pid: 20, comm: "b"}, fakeProc{pid: 1, comm: "init"})
	for _, name := range []string{"0123", "+5", "42a"} {
		if err := os.Mkdir(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pids, err := New(root).PIDs()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 20, 300}; !reflect.DeepEqual(pids, want) {
		t.Errorf("PIDs = %v, want %v", pids, want)
	}
}

func TestChildrenFake(t *testing.T) {
	root := familyTree(t)
	p := New(root)
	tests := []struct {
		pid  int
		want []int
	}{
		{100, []int{120, 250, 90, 130}},
		{250, []int{130}},
		{130, nil},
		{1, []int{100, 400, 120, 250, 90, 130}},
	}
	for _, tt := range tests {
		got, err := p.Children(tt.pid)
		if err != nil {
			t.Fatalf("Children(%d): %v", tt.pid, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Children(%d) = %v, want %v", tt.pid, got, tt.want)
		}
	}
}

func TestChildrenCycleAndVanished(t *testing.T) {
	fsys := fstest.MapFS{
		"1/stat": {Data: []byte("1 (a) S 2 0\n")},
		"2/stat": {Data: []byte("2 (b) S 1 0\n")},
		"3/stat": {Data: []byte("3 (c) S 2 0\n")},
		"4/stat": {Data: []byte("4 (d) S 1 0\n")},
	}
	// Process 4 exits after the directory was listed.
	gone := &fs.PathError{Op: "open", Path: "4", Err: syscall.ENOENT}
	e := errFS{FS: fsys, errs: map[string]error{"4": gone, "4/stat": gone}}
	got, err := (&Proc{FS: e}).Children(1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("Children(1) = %v, want %v", got, want)
	}
	// An ESRCH from a vanishing process is skipped too.
	e = errFS{FS: fsys, errs: map[string]error{"4": gone, "4/stat": gone, "3/stat": &fs.PathError{Op: "read", Path: "3/stat", Err: syscall.ESRCH}}}
	got, err = (&Proc{FS: e}).Children(1)
	if err != nil || !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("Children(1) with ESRCH = %v, %v", got, err)
	}
	// A malformed stat is an error.
	delete(fsys, "4/stat")
	fsys["5/stat"] = &fstest.MapFile{Data: []byte("5 no comm\n")}
	if _, err := (&Proc{FS: fsys, Root: "/proc"}).Children(1); err == nil || !strings.Contains(err.Error(), "/proc/5/stat") {
		t.Errorf("Children with malformed stat: %v", err)
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		in   string
		want stat
		err  bool
	}{
		{"1 (init) S 0 1 1", stat{1, "init", "S", 0}, false},
		{"42 (a) b) (c) R 7 42 42 0", stat{42, "a) b) (c", "R", 7}, false},
		{"42 () Z 7", stat{42, "", "Z", 7}, false},
		{"42 (x\n) S 7", stat{42, "x\n", "S", 7}, false},
		{"42 (x)", stat{}, true},
		{"42 x S 7", stat{}, true},
		{"x (a) S 7", stat{}, true},
		{"42 (a) S y", stat{}, true},
		{"42 )a( S 7", stat{}, true},
		{"", stat{}, true},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.in))
		if (err != nil) != tt.err || !tt.err && got != tt.want {
			t.Errorf("parseStat(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

func TestParseStatus(t *testing.T) {
	got, err := ParseStatus([]byte("Name:\tx\nUid:\t1000\t1001\t1000\t1000\nTracerPid:\t4321\nSeccomp:\t2\n"))
	if want := (Status{UID: 1000, TracerPID: 4321, Seccomp: 2}); err != nil || got != want {
		t.Errorf("ParseStatus = %+v, %v, want %+v", got, err, want)
	}
	if got, err := ParseStatus([]byte("Uid:\t0\t0\t0\t0\n")); err != nil || got != (Status{}) {
		t.Errorf("no TracerPid or Seccomp line: %+v, %v", got, err)
	}
	for _, s := range []string{"Name:\tx\n", "Uid:\n", "Uid:\tx\n", "Uid:\t1\nTracerPid:\t-3\n", "Uid:\t1\nSeccomp:\n"} {
		if _, err := ParseStatus([]byte(s)); err == nil {
			t.Errorf("ParseStatus(%q): no error", s)
		}
	}
}

// errFS returns errs[name] for the named files, else defers to FS.
type errFS struct {
	fs.FS
	errs map[string]error
}

func (e errFS) Open(name string) (fs.File, error) {
	if err := e.errs[name]; err != nil {
		return nil, err
	}
	return e.FS.Open(name)
}

func (e errFS) ReadLink(name string) (string, error) {
	if err := e.errs[name]; err != nil {
		return "", err
	}
	return fs.ReadLink(e.FS, name)
}

func (e errFS) Lstat(name string) (fs.FileInfo, error) {
	if err := e.errs[name]; err != nil {
		return nil, err
	}
	return fs.Lstat(e.FS, name)
}

func mapProc() fstest.MapFS {
	return fstest.MapFS{
		"1234/stat":    {Data: []byte("1234 (python3) S 1 1234 1234 0\n")},
		"1234/status":  {Data: []byte("Name:\tpython3\nUid:\t0\t0\t0\t0\n")},
		"1234/cmdline": {Data: []byte("python3\x00app.py\x00")},
		"1234/exe":     {Data: []byte("/usr/bin/python3.11"), Mode: fs.ModeSymlink},
		"1234/root":    {Data: []byte("/"), Mode: fs.ModeSymlink},
		"1234/ns/mnt":  {Data: []byte("mnt:[4026531840]"), Mode: fs.ModeSymlink},
		"1234/maps":    {Data: []byte("1000-2000 r--p 00000000 08:01 42 /x\n")},
		"self/ns/mnt":  {Data: []byte("mnt:[4026531840]"), Mode: fs.ModeSymlink},
	}
}

func TestErrnoMapping(t *testing.T) {
	perr := func(name string, err error) error { return &fs.PathError{Op: "readlink", Path: name, Err: err} }
	tests := []struct {
		name    string // file that fails
		err     error
		kind    error  // want errors.Is(err, kind)
		partial bool   // a Process is returned with the error
		msg     string // want error message
	}{
		{"1234/exe", perr("1234/exe", syscall.EACCES), ErrPermission, true, "read /proc/1234/exe: permission denied"},
		{"1234/root", perr("1234/root", syscall.EPERM), ErrPermission, true, "read /proc/1234/root: permission denied"},
		{"1234/exe", perr("1234/exe", fs.ErrPermission), ErrPermission, true, "read /proc/1234/exe: permission denied"},
		{"1234/cmdline", perr("1234/cmdline", syscall.ESRCH), ErrNoProcess, false, "read /proc/1234/cmdline: no such process"},
		{"1234/status", perr("1234/status", syscall.ESRCH), ErrNoProcess, false, "read /proc/1234/status: no such process"},
		{"1234/exe", perr("1234/exe", syscall.ESRCH), ErrNoProcess, false, "read /proc/1234/exe: no such process"},
		{"1234/ns/mnt", perr("1234/ns/mnt", syscall.ESRCH), ErrNoProcess, false, "read /proc/1234/ns/mnt: no such process"},
		{"1234/stat", perr("1234/stat", syscall.EIO), syscall.EIO, false, "read /proc/1234/stat: input/output error"},
	}
	for _, tt := range tests {
		p := &Proc{FS: errFS{FS: mapProc(), errs: map[string]error{tt.name: tt.err}}, Root: "/proc"}
		pr, err := p.Process(1234)
		if !errors.Is(err, tt.kind) {
			t.Errorf("%s %v: error %v, want %v", tt.name, tt.err, err, tt.kind)
			continue
		}
		if err.Error() != tt.msg {
			t.Errorf("%s %v: message %q, want %q", tt.name, tt.err, err, tt.msg)
		}
		if IsPermission(err) != (tt.kind == ErrPermission) {
			t.Errorf("%s: IsPermission = %v", tt.name, IsPermission(err))
		}
		if (pr != nil) != tt.partial {
			t.Errorf("%s %v: process %+v, want partial=%v", tt.name, tt.err, pr, tt.partial)
		}
		if pr != nil && (pr.Comm != "python3" || pr.PPID != 1 || len(pr.Cmdline) != 2) {
			t.Errorf("%s: partial process %+v", tt.name, pr)
		}
	}

	// Refused exe: the rest is still read.
	p := &Proc{FS: errFS{FS: mapProc(), errs: map[string]error{"1234/exe": perr("1234/exe", syscall.EACCES)}}, Root: "/proc"}
	pr, _ := p.Process(1234)
	if pr.Exe != "" || pr.Root != "/" || pr.MountNS != "mnt:[4026531840]" {
		t.Errorf("partial process %+v", pr)
	}

	// Unreadable ns/mnt: left empty, Container from Root.
	p = &Proc{FS: errFS{FS: mapProc(), errs: map[string]error{"1234/ns/mnt": perr("1234/ns/mnt", syscall.EACCES)}}}
	pr, err := p.Process(1234)
	if err != nil || pr.MountNS != "" || pr.Container {
		t.Errorf("ns/mnt refused: %+v, %v", pr, err)
	}

	// Maps and the openers map errors the same way.
	for _, tt := range []struct {
		name string
		err  error
		kind error
		f    func(p *Proc) error
	}{
		{"1234/maps", syscall.EACCES, ErrPermission, func(p *Proc) error { _, err := p.Maps(1234); return err }},
		{"1234/maps", syscall.ESRCH, ErrNoProcess, func(p *Proc) error { _, err := p.Maps(1234); return err }},
		{"1234/exe", syscall.EACCES, ErrPermission, func(p *Proc) error { _, err := p.OpenExe(1234); return err }},
		{"1234/map_files/1000-2000", syscall.EPERM, ErrPermission, func(p *Proc) error {
			_, err := p.OpenMapFile(1234, Mapping{Start: 0x1000, End: 0x2000})
			return err
		}},
	} {
		p := &Proc{FS: errFS{FS: mapProc(), errs: map[string]error{tt.name: perr(tt.name, tt.err)}}, Root: "/proc"}
		err := tt.f(p)
		if !errors.Is(err, tt.kind) {
			t.Errorf("%s %v: error %v, want %v", tt.name, tt.err, err, tt.kind)
		}
		if !strings.Contains(fmt.Sprint(err), "/proc/"+tt.name+": ") {
			t.Errorf("%s: message %q does not name the file", tt.name, err)
		}
	}
}

// noReaderAtFS opens files that do not implement io.ReaderAt.
type noReaderAtFS struct{ fs.FS }

type plainFile struct{ fs.File }

func (n noReaderAtFS) Open(name string) (fs.File, error) {
	f, err := n.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return plainFile{f}, nil
}

func TestOpenNeedsReaderAt(t *testing.T) {
	fsys := mapProc()
	fsys["1234/exe"] = &fstest.MapFile{Data: []byte("\x7fELF")}
	f, err := (&Proc{FS: fsys}).OpenExe(1234)
	if err != nil {
		t.Fatalf("OpenExe on MapFS: %v", err)
	}
	f.Close()
	_, err = (&Proc{FS: noReaderAtFS{fsys}, Root: "/proc"}).OpenExe(1234)
	if err == nil || err.Error() != "open /proc/1234/exe: file does not implement io.ReaderAt" {
		t.Errorf("OpenExe without ReadAt: %v", err)
	}
}

func TestOpenInRoot(t *testing.T) {
	elf := realELF(t)
	wantID, err := elfinfo.ReadBuildIDFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	// A container root: usr/lib/libinbox.so is the ELF; lib -> usr/lib
	// (relative); usr/lib/abs.so -> /usr/lib/libinbox.so (absolute, so
	// only found inside the box); loop -> loop.
	box := t.TempDir()
	mustDo := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustDo(os.MkdirAll(filepath.Join(box, "usr/lib"), 0o755))
	mustDo(os.WriteFile(filepath.Join(box, "usr/lib/libinbox.so"), data, 0o644))
	mustDo(os.Symlink("usr/lib", filepath.Join(box, "lib")))
	mustDo(os.Symlink("/usr/lib/libinbox.so", filepath.Join(box, "usr/lib/abs.so")))
	mustDo(os.Symlink("../../../../../usr/lib/libinbox.so", filepath.Join(box, "usr/lib/up.so")))
	mustDo(os.Symlink("loop", filepath.Join(box, "loop")))
	root := writeTree(t,
		fakeProc{pid: 50, comm: "boxed", root: box},
		fakeProc{pid: 60, comm: "host", root: "/"},
	)
	p := New(root)

	for _, name := range []string{
		"/usr/lib/libinbox.so",
		"usr/lib/libinbox.so",
		"/lib/libinbox.so",
		"/../../../usr/lib/libinbox.so",
		"/lib/abs.so",
		"/usr/lib/up.so",
		"/usr/./lib/../lib/libinbox.so",
	} {
		f, err := p.OpenInRoot(50, name)
		if err != nil {
			t.Errorf("OpenInRoot(50, %q): %v", name, err)
			continue
		}
		if id := readBuildID(t, f); id != wantID {
			t.Errorf("OpenInRoot(50, %q) build-id %s, want %s", name, id, wantID)
		}
		f.Close()
	}
	if _, err := p.OpenInRoot(50, "/loop"); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Errorf("OpenInRoot(loop): %v", err)
	}
	// The host's files are not visible from the box, ...
	if _, err := p.OpenInRoot(50, elf); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenInRoot(50, %q) error = %v, want not exist", elf, err)
	}
	// ... but are from a process whose root is "/".
	f, err := p.OpenInRoot(60, elf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if id := readBuildID(t, f); id != wantID {
		t.Errorf("OpenInRoot(60) build-id %s, want %s", id, wantID)
	}

	// Without fs.ReadLinkFS the name is still cleaned.
	fsys := fstest.MapFS{"9/root/etc/os-release": {Data: []byte("ID=debian\n")}}
	f2, err := (&Proc{FS: struct{ fs.FS }{fsys}}).OpenInRoot(9, "/../etc/./os-release")
	if err != nil {
		t.Fatalf("OpenInRoot via a plain FS: %v", err)
	}
	defer f2.Close()
	if b, err := io.ReadAll(f2); err != nil || string(b) != "ID=debian\n" {
		t.Errorf("read %q, %v", b, err)
	}
}

// A file under a process's root, its executable or a mapped file that is
// not a regular file is refused without blocking (a FIFO with no writer)
// and without being read (a device), whatever name the process gave it.
func TestOpenNotRegular(t *testing.T) {
	box := t.TempDir()
	if err := os.MkdirAll(filepath.Join(box, "usr/lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(box, "usr/lib/libpython3.11.so.1.0"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(box, "usr/lib/zero.so")); err != nil {
		t.Fatal(err)
	}
	root := writeTree(t,
		fakeProc{pid: 50, comm: "boxed", root: box},
		fakeProc{pid: 60, comm: "host", root: "/"},
	)
	p := New(root)
	for _, c := range []struct {
		pid        int
		name, want string
	}{
		{50, "/usr/lib/libpython3.11.so.1.0", root + "/50/root/usr/lib/libpython3.11.so.1.0 is a FIFO, not a regular file"},
		{50, "/lib/../usr/lib/libpython3.11.so.1.0", root + "/50/root/usr/lib/libpython3.11.so.1.0 is a FIFO, not a regular file"},
		{60, "/dev/zero", root + "/60/root/dev/zero is a character device, not a regular file"},
		{60, "/dev", root + "/60/root/dev is a directory, not a regular file"},
	} {
		f, err := p.OpenInRoot(c.pid, c.name)
		if !errors.Is(err, saferead.ErrNotRegular) || err.Error() != c.want {
			t.Errorf("OpenInRoot(%d, %s) = %v, %v; want %q", c.pid, c.name, f, err, c.want)
		}
	}
	// /usr/lib/zero.so is a link inside the box to its own /dev/zero,
	// which it does not have.
	if _, err := p.OpenInRoot(50, "/usr/lib/zero.so"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenInRoot(50, zero.so): %v, want not exist", err)
	}

	// A fake tree (fstest.MapFS) keeps the same rule.
	fsys := fstest.MapFS{
		"9/root/usr/lib/libpython3.11.so.1.0": {Mode: fs.ModeNamedPipe},
		"9/exe":                               {Mode: fs.ModeDevice | fs.ModeCharDevice},
	}
	fp := &Proc{FS: fsys, Root: "/proc"}
	if _, err := fp.OpenInRoot(9, "/usr/lib/libpython3.11.so.1.0"); err == nil || err.Error() != "/proc/9/root/usr/lib/libpython3.11.so.1.0 is a FIFO, not a regular file" {
		t.Errorf("MapFS OpenInRoot: %v", err)
	}
	if _, err := fp.OpenExe(9); !errors.Is(err, saferead.ErrNotRegular) {
		t.Errorf("MapFS OpenExe of a device: %v", err)
	}
}

func TestStatusAndSelfStatus(t *testing.T) {
	p := &Proc{Root: "/proc", FS: fstest.MapFS{
		"77/status":   {Data: []byte("Uid:\t1000\t1000\t1000\t1000\nTracerPid:\t78\n")},
		"self/status": {Data: []byte("Uid:\t0\t0\t0\t0\nSeccomp:\t2\n")},
	}}
	if st, err := p.Status(77); err != nil || st != (Status{UID: 1000, TracerPID: 78}) {
		t.Errorf("Status(77) = %+v, %v", st, err)
	}
	if st, err := p.SelfStatus(); err != nil || st.Seccomp != 2 {
		t.Errorf("SelfStatus = %+v, %v", st, err)
	}
	if _, err := p.Status(78); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Status of a missing process: %v", err)
	}
}
