package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// The tests in this file read the real /proc, of child processes they
// start.

const (
	python = testenv.DebianPath
	// In its helper mode "read-process", run as another user, the test
	// binary reads the process named by helperPIDEnv.
	helperPIDEnv = "PYATTACH_PROC_TEST_PID"
)

func TestMain(m *testing.M) {
	testenv.HelperMain(m, "read-process", helperReadProcess)
}

// helperResult is what the helper mode prints, as JSON.
type helperResult struct {
	UID        int
	Process    *Process
	ProcessErr string
	ProcessPerm,
	MapsPerm,
	OpenExePerm,
	ChildrenOK bool
}

func helperReadProcess() int {
	pid, err := strconv.Atoi(os.Getenv(helperPIDEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p := New("/proc")
	var r helperResult
	r.UID = os.Getuid()
	r.Process, err = p.Process(pid)
	r.ProcessErr = fmt.Sprint(err)
	r.ProcessPerm = IsPermission(err)
	_, err = p.Maps(pid)
	r.MapsPerm = IsPermission(err)
	_, err = p.OpenExe(pid)
	r.OpenExePerm = IsPermission(err)
	_, err = p.Children(pid)
	r.ChildrenOK = err == nil
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// start starts a child process and kills it when the test ends.
func start(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	var err error
	for range 20 {
		cmd = exec.Command(name, args...)
		// Its own process group, so that killing it kills its children.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err = cmd.Start(); !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		// A just-written executable may still be open for writing in a
		// child forked by another test; wait for it to exec.
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

// waitFor polls cond until it holds, or fails the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitExec waits until process pid runs exe and has mapped libc.
func waitExec(t *testing.T, p *Proc, pid int, exe string) *Process {
	t.Helper()
	var pr *Process
	waitFor(t, fmt.Sprintf("process %d to exec %s", pid, exe), func() bool {
		var err error
		pr, err = p.Process(pid)
		if err != nil || pr.Exe != exe {
			return false
		}
		maps, err := p.Maps(pid)
		return err == nil && slices.ContainsFunc(maps, isLibc)
	})
	return pr
}

func isLibc(m Mapping) bool { return strings.HasSuffix(m.Path, "/libc.so.6") }

func TestLivePython(t *testing.T) {
	testenv.Need(t, python)
	cmd := start(t, python, "-c", "import time; time.sleep(30)")
	pid := cmd.Process.Pid
	p := New("/proc")
	pr := waitExec(t, p, pid, python)

	want := &Process{PID: pid, PPID: os.Getpid(), UID: os.Getuid(), State: pr.State, Comm: "python3.11",
		Cmdline: []string{python, "-c", "import time; time.sleep(30)"}, Exe: python, Root: "/",
		MountNS: pr.SelfMountNS, SelfMountNS: pr.SelfMountNS}
	if pr.SelfMountNS == "" || !strings.HasPrefix(pr.SelfMountNS, "mnt:[") {
		t.Errorf("SelfMountNS = %q", pr.SelfMountNS)
	}
	if !reflect.DeepEqual(pr, want) {
		t.Errorf("Process(%d):\n got %+v\nwant %+v", pid, pr, want)
	}

	maps, err := p.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(maps, func(m Mapping) bool { return m.Path == python && strings.Contains(m.Perms, "x") }) {
		t.Errorf("no executable mapping of %s", python)
	}
	mods := Modules(maps)
	if len(mods) == 0 || mods[0].Path != python {
		t.Fatalf("Modules: %+v, want %s first", mods, python)
	}
	elves := 0
	for _, m := range mods {
		f, err := p.OpenInRoot(pid, m.Path)
		if err != nil {
			t.Errorf("OpenInRoot(%s): %v", m.Path, err)
			continue
		}
		id, err := elfinfo.ReadBuildID(f.(io.ReaderAt))
		f.Close()
		if errors.Is(err, elfinfo.ErrNotELF) {
			continue // locale archive, gconv cache, ...
		}
		if err != nil {
			t.Errorf("ReadBuildID(%s): %v", m.Path, err)
			continue
		}
		wantID, err := elfinfo.ReadBuildIDFile(m.Path)
		if err != nil {
			t.Fatal(err)
		}
		if id != wantID {
			t.Errorf("%s: build-id %s through /proc, %s from the file", m.Path, id, wantID)
		}
		elves++
	}
	if !slices.ContainsFunc(mods, func(m Module) bool { return strings.HasSuffix(m.Path, "/libc.so.6") }) || elves < 3 {
		t.Errorf("modules %+v: want the exe, libc and the loader (%d ELF files)", mods, elves)
	}

	f, err := p.OpenExe(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, err := elfinfo.ReadBuildID(f.(io.ReaderAt))
	wantID, _ := elfinfo.ReadBuildIDFile(python)
	if err != nil || id != wantID {
		t.Errorf("OpenExe build-id %s, %v; want %s", id, err, wantID)
	}
}

func TestLiveDeletedExe(t *testing.T) {
	orig := testenv.Need(t, "sleep")
	orig, err := filepath.EvalSymlinks(orig)
	if err != nil {
		t.Fatal(err)
	}
	wantID, err := elfinfo.ReadBuildIDFile(orig)
	if err != nil {
		testenv.Missing(t, "%s has no build-id: %v", orig, err)
	}
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "my sleep")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := start(t, exe, "30")
	pid := cmd.Process.Pid
	p := New("/proc")
	waitExec(t, p, pid, exe)
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}

	pr, err := p.Process(pid)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Exe != exe || !pr.ExeDeleted || pr.Container {
		t.Errorf("Process = %+v, want Exe %q deleted", pr, exe)
	}

	f, err := p.OpenExe(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if id := readBuildID(t, f); id != wantID {
		t.Errorf("OpenExe build-id %s, want %s", id, wantID)
	}

	maps, err := p.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(maps, func(m Mapping) bool { return m.Path == exe })
	if i < 0 || !maps[i].Deleted {
		t.Fatalf("no deleted mapping of %q in %+v", exe, maps)
	}
	mods := Modules(maps)
	if len(mods) == 0 || mods[0].Path != exe || !mods[0].Deleted || mods[0].Start != maps[i].Start {
		t.Errorf("Modules[0] = %+v", mods[0])
	}
	t.Run("OpenMapFile", func(t *testing.T) {
		mf, err := p.OpenMapFile(pid, maps[i])
		if IsPermission(err) && os.Getuid() != 0 {
			testenv.NeedRoot(t, fmt.Sprintf("OpenMapFile of a deleted executable (%v)", err))
		}
		if err != nil {
			t.Fatal(err)
		}
		defer mf.Close()
		if id := readBuildID(t, mf); id != wantID {
			t.Errorf("OpenMapFile build-id %s, want %s", id, wantID)
		}
	})
	// The deleted path itself is gone, and that is not ErrNoProcess.
	if _, err := p.OpenInRoot(pid, exe); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNoProcess) {
		t.Errorf("OpenInRoot(deleted) error = %v", err)
	}
}

func TestLiveNoProcess(t *testing.T) {
	p := New("/proc")
	// PID_MAX_LIMIT is 1<<22: no process can have a larger pid.
	pid := 1<<22 + 1
	if _, err := os.Stat(fmt.Sprint("/proc/", pid)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("/proc/%d: %v", pid, err)
	}
	_, err := p.Process(pid)
	if !errors.Is(err, ErrNoProcess) {
		t.Fatalf("Process(%d) error = %v, want ErrNoProcess", pid, err)
	}
	if want := fmt.Sprintf("read /proc/%d/stat: no such process", pid); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if _, err := p.Maps(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Maps: %v", err)
	}
	if _, err := p.OpenExe(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("OpenExe: %v", err)
	}
	if _, err := p.OpenInRoot(pid, "/etc/passwd"); !errors.Is(err, ErrNoProcess) {
		t.Errorf("OpenInRoot: %v", err)
	}
	if _, err := p.Children(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Children: %v", err)
	}

	// A process that has exited and been reaped.
	cmd := exec.Command(testenv.Need(t, "true"))
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Process(cmd.Process.Pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Process(reaped %d): %v", cmd.Process.Pid, err)
	}
}

func TestLiveChildren(t *testing.T) {
	bash := testenv.Need(t, "bash")
	testenv.Need(t, python)
	// "; true" keeps bash from exec'ing python in its place.
	cmd := start(t, bash, "-c", python+" -c 'import time; time.sleep(30)'; true")
	pid := cmd.Process.Pid
	p := New("/proc")
	var py int
	waitFor(t, "the python child of bash", func() bool {
		kids, err := p.Children(pid)
		if err != nil {
			return false
		}
		for _, k := range kids {
			if pr, err := p.Process(k); err == nil && pr.Exe == python && pr.PPID == pid {
				py = k
				return true
			}
		}
		return false
	})
	self, err := p.Children(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	i, j := slices.Index(self, pid), slices.Index(self, py)
	if i < 0 || j < 0 || j < i {
		t.Errorf("Children(self) = %v: want bash %d before python %d", self, pid, py)
	}
	kids, err := p.Children(py)
	if err != nil || len(kids) != 0 {
		t.Errorf("Children(python) = %v, %v", kids, err)
	}
}

func TestLivePermission(t *testing.T) {
	testenv.NeedRoot(t, "to read a process as nobody")
	sleep, err := filepath.EvalSymlinks(testenv.Need(t, "sleep"))
	if err != nil {
		t.Fatal(err)
	}
	_, asNobody := testenv.Nobody(t)
	cmd := start(t, sleep, "30")
	pid := cmd.Process.Pid
	waitExec(t, New("/proc"), pid, sleep)
	out := asNobody(testenv.HelperEnv+"=read-process", helperPIDEnv+"="+strconv.Itoa(pid))
	var r helperResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	checkHelper(t, r, pid)
}

func checkHelper(t *testing.T, r helperResult, pid int) {
	t.Helper()
	if r.UID != 65534 {
		t.Fatalf("helper ran as uid %d", r.UID)
	}
	if !r.ProcessPerm {
		t.Errorf("Process as nobody: %s, want ErrPermission", r.ProcessErr)
	}
	if want := fmt.Sprintf("read /proc/%d/exe: permission denied", pid); r.ProcessErr != want {
		t.Errorf("Process as nobody: %q, want %q", r.ProcessErr, want)
	}
	if pr := r.Process; pr == nil || pr.Comm != "sleep" || pr.UID != 0 || pr.PPID != os.Getpid() || pr.Exe != "" {
		t.Errorf("partial process as nobody = %+v", pr)
	}
	if !r.MapsPerm || !r.OpenExePerm {
		t.Errorf("Maps or OpenExe as nobody: not ErrPermission: %+v", r)
	}
	if !r.ChildrenOK {
		t.Errorf("Children as nobody failed")
	}
}
