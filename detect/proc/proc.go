package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNoProcess means the process does not exist, or exited while it
	// was being read (ENOENT or ESRCH from one of its files).
	ErrNoProcess = errors.New("no such process")
	// ErrPermission means the caller may not read a file of the process
	// (EACCES or EPERM): most often the process belongs to another user,
	// whose PID/exe, PID/root and PID/maps only that user or root may read.
	ErrPermission = errors.New("permission denied")
)

// IsPermission reports whether err wraps ErrPermission.
func IsPermission(err error) bool { return errors.Is(err, ErrPermission) }

// Proc is a proc file system. Paths inside FS look like "1234/maps".
type Proc struct {
	FS fs.FS
	// Root is where FS is mounted, such as "/proc". It is used only to
	// name files in error messages: "read /proc/1234/exe: ...".
	Root string
	// host is set by New: FS is the directory Root, whose files are
	// opened with saferead.OpenRegular.
	host bool
}

// New returns the proc file system mounted at root, usually "/proc".
func New(root string) *Proc {
	return &Proc{FS: os.DirFS(root), Root: root, host: true}
}

// Process is what the proc file system says about one process.
type Process struct {
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	UID  int `json:"uid"` // real user id, from the Uid line of PID/status
	// TracerPID is the process tracing this one (the TracerPid line of
	// PID/status: a debugger or strace attached), or 0.
	TracerPID int    `json:"tracer_pid"`
	State     string `json:"state"` // one letter from PID/stat: "R", "S", "D", "Z", "T", ...
	Comm      string `json:"comm"`  // the command name of PID/stat, at most 15 bytes
	// Cmdline holds the NUL-separated arguments of PID/cmdline; it is
	// empty for kernel threads and zombies.
	Cmdline []string `json:"cmdline"`
	// Exe is the target of the PID/exe link with any " (deleted)" suffix
	// stripped: the executable as the process sees it. It is empty for a
	// kernel thread or a zombie.
	Exe string `json:"exe"`
	// ExeDeleted is true when the executable was unlinked or replaced
	// since the process started; OpenExe still reads it.
	ExeDeleted bool `json:"exe_deleted"`
	// Root is the target of the PID/root link: "/" unless the process
	// runs in a chroot or in a mount namespace with another root.
	Root string `json:"root"`
	// MountNS and SelfMountNS are the targets of PID/ns/mnt and
	// self/ns/mnt, such as "mnt:[4026531841]", or empty when they cannot
	// be read.
	MountNS     string `json:"mount_ns"`
	SelfMountNS string `json:"self_mount_ns"`
	// Container is true when the process may see other files at the
	// same paths as the reader: its mount namespace differs from the
	// reader's, or its root is not "/". Open its files with OpenInRoot.
	// It is false when neither could be read.
	Container bool `json:"container"`
}

// Process reads what the proc file system says about process pid.
//
// A process that does not exist or exits while it is read gives an error
// wrapping ErrNoProcess. When a file of the process may not be read (the
// exe and root links of another user's process, unless the caller is
// root), the error wraps ErrPermission and the returned Process is not
// nil: it holds what could be read (PID, PPID, UID, State, Comm,
// Cmdline), and the fields that could not be read are empty.
func (p *Proc) Process(pid int) (*Process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	pr := &Process{PID: pid}

	b, err := p.readFile(pid, "stat")
	if err != nil {
		return nil, err
	}
	st, err := parseStat(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.display(pid, "stat"), err)
	}
	if st.pid != pid {
		return nil, fmt.Errorf("read %s: pid %d in the file", p.display(pid, "stat"), st.pid)
	}
	pr.PPID, pr.State, pr.Comm = st.ppid, st.state, st.comm

	b, err = p.readFile(pid, "status")
	if err != nil {
		return nil, err
	}
	status, err := ParseStatus(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.display(pid, "status"), err)
	}
	pr.UID, pr.TracerPID = status.UID, status.TracerPID

	b, err = p.readFile(pid, "cmdline")
	if err != nil {
		return nil, err
	}
	pr.Cmdline = parseCmdline(b)

	// The links of another user's process are refused; remember the
	// first refusal, read what is left, and return both.
	var denied error
	link := func(name string) (string, error) {
		s, err := p.readLink(pid, name)
		switch {
		case err == nil:
			return s, nil
		case errors.Is(err, ErrNoProcess):
			return "", err
		case errors.Is(err, ErrPermission):
			if denied == nil {
				denied = err
			}
			return "", nil
		case errors.Is(err, fs.ErrNotExist):
			// The process is alive (readLink checked) but has no
			// such link: a kernel thread or a zombie.
			return "", nil
		}
		return "", err
	}
	exe, err := link("exe")
	if err != nil {
		return nil, err
	}
	pr.Exe, pr.ExeDeleted = strings.CutSuffix(exe, deletedSuffix)
	if pr.Root, err = link("root"); err != nil {
		return nil, err
	}

	// The namespace links are a hint only: left empty when unreadable.
	if ns, err := p.readLink(pid, "ns/mnt"); err == nil {
		pr.MountNS = ns
	} else if errors.Is(err, ErrNoProcess) {
		return nil, err
	}
	if ns, err := fs.ReadLink(p.FS, "self/ns/mnt"); err == nil {
		pr.SelfMountNS = ns
	}
	pr.Container = pr.MountNS != "" && pr.SelfMountNS != "" && pr.MountNS != pr.SelfMountNS ||
		pr.Root != "" && pr.Root != "/"

	if denied != nil {
		return pr, denied
	}
	return pr, nil
}

// stat holds the fields of PID/stat that Process uses.
type stat struct {
	pid   int
	comm  string
	state string
	ppid  int
}

// parseStat parses "pid (comm) state ppid ...". The comm may hold spaces
// and parentheses, so it ends at the last ')'.
func parseStat(b []byte) (stat, error) {
	var st stat
	comm, rest, err := StatFields(b)
	if err != nil {
		return st, err
	}
	s := string(b)
	open := strings.IndexByte(s, '(')
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return st, fmt.Errorf("bad pid %s", quote(s[:open]))
	}
	st.pid = pid
	st.comm = comm
	if len(rest) < 2 {
		return st, errors.New("no state and ppid fields")
	}
	st.state = rest[0]
	if st.ppid, err = strconv.Atoi(rest[1]); err != nil {
		return st, fmt.Errorf("bad ppid %s", quote(rest[1]))
	}
	return st, nil
}

// Status holds the lines of PID/status that pyattach reads.
type Status struct {
	UID       int // real user id: the first number of the Uid line
	GID       int // real group id: the first number of the Gid line (0 when absent)
	TracerPID int // the TracerPid line: the tracing process, or 0
	// Seccomp is the Seccomp line: 0 none, 1 strict, 2 a filter (as
	// container runtimes install); 0 when the kernel has no such line.
	Seccomp int
}

// ParseStatus parses the contents of a PID/status file. The Uid line is
// required; TracerPid and Seccomp are 0 when absent.
func ParseStatus(b []byte) (Status, error) {
	var st Status
	uidSeen := false
	for line := range strings.Lines(string(b)) {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		switch key {
		case "Uid", "Gid", "TracerPid", "Seccomp":
		default:
			continue
		}
		if len(f) == 0 {
			return st, fmt.Errorf("empty %s line", key)
		}
		n, err := strconv.Atoi(f[0])
		if err != nil || n < 0 {
			return st, fmt.Errorf("bad %s %s", key, quote(f[0]))
		}
		switch key {
		case "Uid":
			st.UID, uidSeen = n, true
		case "Gid":
			st.GID = n
		case "TracerPid":
			st.TracerPID = n
		case "Seccomp":
			st.Seccomp = n
		}
	}
	if !uidSeen {
		return st, errors.New("no Uid line")
	}
	return st, nil
}

// Status reads and parses PID/status of process pid.
func (p *Proc) Status(pid int) (Status, error) {
	b, err := p.readFile(pid, "status")
	if err != nil {
		return Status{}, err
	}
	st, err := ParseStatus(b)
	if err != nil {
		return st, fmt.Errorf("read %s: %w", p.display(pid, "status"), err)
	}
	return st, nil
}

// SelfStatus reads and parses self/status: the reading process's own.
func (p *Proc) SelfStatus() (Status, error) {
	b, err := fs.ReadFile(p.FS, "self/status")
	if err != nil {
		return Status{}, fmt.Errorf("read %s: %w", p.path("self/status"), err)
	}
	st, err := ParseStatus(b)
	if err != nil {
		return st, fmt.Errorf("read %s: %w", p.path("self/status"), err)
	}
	return st, nil
}

func parseCmdline(b []byte) []string {
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// Maps reads and parses PID/maps.
func (p *Proc) Maps(pid int) ([]Mapping, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	name := p.name(pid, "maps")
	f, err := p.FS.Open(name)
	if err != nil {
		return nil, p.wrap(pid, "open", name, err)
	}
	defer f.Close()
	maps, err := ParseMaps(f)
	if err != nil {
		var me *MapsError
		if !errors.As(err, &me) {
			// A read error: unwrap ParseMaps' own "read maps" context
			// and classify the cause.
			if u := errors.Unwrap(err); u != nil {
				err = u
			}
			return nil, p.wrap(pid, "read", name, err)
		}
		return nil, fmt.Errorf("read %s: %w", p.display(pid, "maps"), err)
	}
	if len(maps) == 0 && !p.alive(pid) {
		// A process that exits after the open reads as empty.
		return nil, p.wrap(pid, "read", name, fs.ErrNotExist)
	}
	return maps, nil
}

// OpenExe opens the executable of process pid through PID/exe, which
// works also when the file was deleted or replaced. The file implements
// io.ReaderAt.
func (p *Proc) OpenExe(pid int) (fs.File, error) {
	return p.openReaderAt(pid, p.name(pid, "exe"))
}

// OpenInRoot opens the file at name as process pid sees it, under
// PID/root: in a container or chroot that is not the file at the same
// path on the host. The name is cleaned as an absolute path, so ".."
// cannot climb above the process's root, and when FS implements
// fs.ReadLinkFS symbolic links are followed inside that root too (an
// absolute link target starts again at the process's root, not the
// reader's). The file implements io.ReaderAt.
func (p *Proc) OpenInRoot(pid int, name string) (fs.File, error) {
	base := p.name(pid, "root")
	// A process whose root is / sees the host's file system: its links
	// resolve as the host's, so the kernel can follow them in one open
	// instead of one Lstat per path component.
	if rl, ok := p.FS.(fs.ReadLinkFS); ok {
		if r, err := rl.ReadLink(base); err == nil && r == "/" {
			return p.openReaderAt(pid, path.Join(base, path.Clean("/"+name)))
		}
	}
	rel, err := p.resolveInRoot(base, name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p.display(pid, "root"+path.Clean("/"+name)), err)
	}
	return p.openReaderAt(pid, path.Join(base, rel))
}

// OpenMapFile opens the file behind mapping m of process pid through
// PID/map_files/START-END, which works also when the file was deleted
// (m.Deleted). Reading map_files needs root (CAP_SYS_ADMIN or
// CAP_CHECKPOINT_RESTORE); without it the error wraps ErrPermission. The
// file implements io.ReaderAt.
func (p *Proc) OpenMapFile(pid int, m Mapping) (fs.File, error) {
	return p.openReaderAt(pid, p.name(pid, fmt.Sprintf("map_files/%x-%x", m.Start, m.End)))
}

func (p *Proc) openReaderAt(pid int, name string) (fs.File, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	f, err := p.openRegular(name)
	if err != nil {
		return nil, p.wrap(pid, "open", name, err)
	}
	if _, ok := f.(io.ReaderAt); !ok {
		f.Close()
		return nil, fmt.Errorf("open %s: file does not implement io.ReaderAt", p.path(name))
	}
	return f, nil
}

// openRegular opens name, a file the process chose (its executable, a
// mapped file, a file under its root), only if it is a regular file,
// without blocking: a container's root may hold a FIFO under any name,
// and a process may map a device. A *saferead.NotRegularError names the
// file as p.path does.
func (p *Proc) openRegular(name string) (fs.File, error) {
	if p.host {
		f, err := saferead.Open(filepath.Join(p.Root, filepath.FromSlash(name)))
		var nr *saferead.NotRegularError
		if errors.As(err, &nr) {
			nr.Path = p.path(name)
		}
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	// A fake tree (tests): the same rule, by stat.
	st, err := fs.Stat(p.FS, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &saferead.NotRegularError{Path: p.path(name), Mode: st.Mode()}
	}
	return p.FS.Open(name)
}

// resolveInRoot returns name, relative to base (a PID/root directory),
// with its symbolic links resolved inside base. A component that cannot
// be looked at is kept as it is, for Open to report.
func (p *Proc) resolveInRoot(base, name string) (string, error) {
	clean := strings.TrimPrefix(path.Clean("/"+name), "/")
	if clean == "" {
		return cleanRel(clean), nil
	}
	sub, err := fs.Sub(p.FS, base)
	if err != nil {
		return cleanRel(clean), nil
	}
	rl, ok := sub.(fs.ReadLinkFS)
	if !ok {
		return cleanRel(clean), nil
	}
	rel, err := rootfs.Resolve(rl, clean)
	if err != nil {
		return "", err
	}
	return cleanRel(rel), nil
}

func cleanRel(s string) string {
	if s == "" {
		return "."
	}
	return s
}

// PIDs returns the ids of all processes, ascending.
func (p *Proc) PIDs() ([]int, error) {
	ents, err := fs.ReadDir(p.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.path("."), err)
	}
	var pids []int
	for _, e := range ents {
		if pid, ok := parsePID(e.Name()); ok {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// parsePID takes a /proc entry's name as the kernel writes a PID: plain
// decimal digits (strconv.ParseUint refuses signs), no leading zero.
func parsePID(s string) (int, bool) {
	pid, err := strconv.ParseUint(s, 10, 31)
	return int(pid), err == nil && s[0] != '0'
}

// Children returns all descendants of process pid, breadth first: its
// children, then their children, each level sorted. It reads the parent
// of every process from PID/stat; processes that exit during the scan
// are left out. A pid that does not exist gives ErrNoProcess.
func (p *Proc) Children(pid int) ([]int, error) {
	pids, kids, err := p.parents()
	if err != nil {
		return nil, err
	}
	if _, found := slices.BinarySearch(pids, pid); !found {
		return nil, fmt.Errorf("read %s: %w", p.path(strconv.Itoa(pid)), ErrNoProcess)
	}
	var out []int
	seen := map[int]bool{pid: true}
	for level := []int{pid}; len(level) > 0; {
		var next []int
		for _, q := range level {
			for _, c := range kids[q] {
				if !seen[c] {
					seen[c] = true
					next = append(next, c)
				}
			}
		}
		slices.Sort(next)
		out = append(out, next...)
		level = next
	}
	return out, nil
}

// name is the path of a file of process pid inside FS.
func (p *Proc) name(pid int, file string) string {
	return strconv.Itoa(pid) + "/" + file
}

// path is the real-looking path of name, for messages.
func (p *Proc) path(name string) string {
	if p.Root == "" {
		return name
	}
	return path.Join(p.Root, name)
}

func (p *Proc) display(pid int, file string) string { return p.path(p.name(pid, file)) }

func (p *Proc) readFile(pid int, file string) ([]byte, error) {
	name := p.name(pid, file)
	b, err := fs.ReadFile(p.FS, name)
	if err != nil {
		return nil, p.wrap(pid, "read", name, err)
	}
	return b, nil
}

func (p *Proc) readLink(pid int, file string) (string, error) {
	name := p.name(pid, file)
	s, err := fs.ReadLink(p.FS, name)
	if err != nil {
		return "", p.wrap(pid, "read", name, err)
	}
	return s, nil
}

// alive reports whether the directory of process pid exists.
func (p *Proc) alive(pid int) bool {
	_, err := fs.Stat(p.FS, strconv.Itoa(pid))
	return err == nil
}

// wrap classifies err from op on name, a file of process pid: ESRCH, or
// ENOENT when the process's directory is gone, is ErrNoProcess; EACCES
// and EPERM are ErrPermission.
func (p *Proc) wrap(pid int, op, name string, err error) error {
	var kind error
	switch {
	case errors.Is(err, syscall.ESRCH):
		kind = ErrNoProcess
	case errors.Is(err, fs.ErrNotExist):
		if !p.alive(pid) {
			kind = ErrNoProcess
		}
	case errors.Is(err, fs.ErrPermission):
		kind = ErrPermission
	}
	return &procError{op: op, path: p.path(name), kind: kind, err: err}
}

// procError is an error from a file of a process.
type procError struct {
	op, path string
	kind     error // ErrNoProcess, ErrPermission or nil
	err      error // the error from FS
}

func (e *procError) Error() string {
	var nr *saferead.NotRegularError
	if e.kind == nil && errors.As(e.err, &nr) {
		return nr.Error() // it names the file
	}
	msg := ""
	switch {
	case e.kind != nil:
		msg = e.kind.Error()
	default:
		// The FS names its own path ("open 1234/maps: ..."); the
		// message names the real-looking one instead.
		var pe *fs.PathError
		if errors.As(e.err, &pe) {
			msg = pe.Err.Error()
		} else {
			msg = e.err.Error()
		}
	}
	return e.op + " " + e.path + ": " + msg
}

func (e *procError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.err}
	}
	return []error{e.kind, e.err}
}
