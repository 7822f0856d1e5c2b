// Package bundle packs a core and the files needed to debug it into a
// crash bundle (its file format: cmd/internal/bundle/archive), and opens
// bundles into pyattach's cache.
//
// Packing reads the core's mappings (NT_FILE) and the build-ids its
// memory holds, takes each mapped ELF file from this machine or from the
// process's root, refuses a file whose build-id differs from the core's
// (reported, never packed), finds debug files as `pyattach debuginfo`
// does, and adds the CPython gdb extension, pyattach's walker and the
// Python source files of every thread's frames.
package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/bundle/archive"
	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/pywalk"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
)

// maxSource bounds one Python source file.
const maxSource = 32 << 20

// Options are what Pack works with.
type Options struct {
	// Core is the core file to pack.
	Core string
	// Root is the host directory standing for the "/" of the core's own
	// paths (NT_FILE): a container's /proc/PID/root; "" for this
	// machine's own, and for a chroot's core that gdb wrote, whose paths
	// are this machine's (/srv/chroot/usr/bin/python3).
	Root string
	// SourceRoot is where the paths the process itself names (its
	// Python frames' files) are read: its root; "": this machine's.
	SourceRoot string
	// PID is the process the core was taken from by pyattach (0: the
	// user gave a core file); Stopped is how long it was stopped.
	PID     int
	Stopped time.Duration
	// CreatedBy names the packing pyattach.
	CreatedBy string
	// MaxSize caps the entries' total size.
	MaxSize int64
	// Resolve resolves the core's executable under Root.
	Resolve func(ctx context.Context, exe, root string) (*target.Result, error)
	// Collect finds the debug files of res's modules.
	Collect func(ctx context.Context, res *target.Result) (*debugsearch.Info, error)
	// Sources returns the source files of every thread's Python frames
	// (paths as the process saw them), read by the walker from the core.
	Sources func(ctx context.Context, core, root string) ([]string, error)
	// NativeSources, when set (--native-sources), returns the C source
	// files of every thread's native frames, each as its DWARF names it
	// and the file on this machine it maps to (through --source), given
	// the core's modules and their debug files.
	NativeSources func(ctx context.Context, core, root string, res *target.Result, di *debugsearch.Info) ([]NativeSource, error)
	// Warn receives what is left out (a build-id mismatch...).
	Warn func(string)
}

// NativeSource is a native frame's source file: Path as the DWARF names
// it (absolute: the unit's directory joined), Local the file here it
// maps to, or "" and Reason why none.
type NativeSource struct {
	Path, Local, Reason string
}

// Item is one file to pack: its entry and where to read it.
type Item struct {
	e    archive.Entry
	open func() (io.ReadCloser, error)
}

// Plan decides what a bundle of opts.Core holds: the manifest, with
// every entry's size and sha256, and the files to stream.
func Plan(ctx context.Context, opts Options) (*archive.Manifest, []Item, error) {
	cf, err := saferead.Open(opts.Core)
	if err != nil {
		return nil, nil, err
	}
	info, err := core.Read(cf)
	cf.Close()
	if err != nil {
		return nil, nil, &core.OpenError{Path: opts.Core, Err: err}
	}
	if info.Exe == "" {
		return nil, nil, &core.OpenError{Path: opts.Core}
	}
	m := &archive.Manifest{CreatedBy: opts.CreatedBy, Missing: []archive.Missing{}}
	m.Target = archive.Target{PID: info.PID, Exe: info.Exe, Root: opts.Root}
	if opts.PID == 0 {
		m.Target.Core = opts.Core
	} else {
		ms := opts.Stopped.Milliseconds()
		m.Target.StoppedMillis = &ms
	}
	p := &packer{opts: opts, m: m, names: map[string]bool{}}
	if err := p.add(archive.Entry{Name: "core", Kind: archive.KindCore, Origin: opts.Core}, hostOpener(opts.Core)); err != nil {
		return nil, nil, err
	}
	// Who the process ran as: sources and modules are packed only when
	// that user could read them (a debuggee names its source files).
	p.owner = info.Owner
	if opts.PID == 0 && p.owner != nil {
		// core.OpenIn keeps the owner only of a core nobody else wrote.
		if kept, err := core.OpenIn(opts.Core, opts.Root); err != nil || kept.Owner == nil {
			p.owner = nil
		}
	}

	// The mapped ELF files, checked against the core's build-ids.
	var mods []target.Module
	for _, f := range info.Files {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		mod, ok := p.module(f)
		if ok {
			mods = append(mods, mod)
		}
	}
	res, err := opts.Resolve(ctx, info.Exe, opts.Root)
	if err != nil {
		p.warn(fmt.Sprintf("the core's executable %s: %v; the bundle has no Python extension and no sources", info.Exe, err))
		res = nil
	}
	if res != nil {
		m.Target.Python, m.Target.ABIFlags = res.Python.Version, res.Python.ABIFlags
	}
	// Debug files, found as `pyattach debuginfo` finds them.
	cres := &target.Result{TargetKind: target.KindCore, PID: info.PID, Exe: info.Exe, Modules: mods, Container: opts.Root != "", Root: opts.Root}
	if res != nil {
		cres.Interpreter, cres.Python, cres.Libpython = res.Interpreter, res.Python, res.Libpython
	}
	di, err := opts.Collect(ctx, cres)
	if err != nil {
		return nil, nil, err
	}
	for _, dm := range di.Modules {
		p.debug(dm)
	}
	// The CPython gdb extension for the interpreter.
	if res != nil {
		// As the process saw its executable, under its root (a chroot's
		// core names this machine's path of it).
		eres := res
		if opts.SourceRoot != "" && opts.SourceRoot != opts.Root {
			if dir, err := os.Readlink(opts.SourceRoot); err == nil && rootfs.Under(info.Exe, dir) {
				if r2, err := opts.Resolve(ctx, rootfs.Strip(dir, info.Exe), opts.SourceRoot); err == nil {
					eres = r2
				}
			}
		}
		ext := ""
		if di2, err := opts.Collect(ctx, eres); err == nil {
			ext = di2.Extensions.GDB
		}
		if ext != "" {
			p.add(archive.Entry{Name: "ext/gdb/" + path.Base(ext), Kind: archive.KindGDBExtension, Path: ext, Origin: ext}, hostOpener(ext))
		} else {
			p.missing(archive.KindGDBExtension, res.Interpreter, "", "no CPython gdb extension found for Python "+res.Python.Version)
		}
	}
	// pyattach's walker, as packed.
	files := pywalk.Files()
	var wn []string
	for n := range files {
		wn = append(wn, n)
	}
	sort.Strings(wn)
	for _, n := range wn {
		b := files[n]
		p.add(archive.Entry{Name: "walker/" + n, Kind: archive.KindWalker, Origin: "pyattach " + opts.CreatedBy}, func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(string(b))), nil
		})
	}
	// Python sources of every thread's frames.
	if res != nil && opts.Sources != nil {
		srcs, err := opts.Sources(ctx, opts.Core, opts.Root)
		if err != nil {
			p.warn(fmt.Sprintf("the Python frames could not be read (%v): no Python sources packed", err))
			p.missing(archive.KindPythonSource, "", "", "the Python frames could not be read: "+err.Error())
		}
		for _, s := range srcs {
			p.source(s)
		}
	}
	if opts.NativeSources != nil {
		ns, err := opts.NativeSources(ctx, opts.Core, opts.Root, cres, di)
		if err != nil {
			p.warn(fmt.Sprintf("the native frames could not be read (%v): no C sources packed", err))
			p.missing(archive.KindNativeSource, "", "", "the native frames could not be read: "+err.Error())
		}
		for _, s := range ns {
			p.nativeSource(s)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return m, p.items, nil
}

// Pack writes the bundle Plan decided onto w.
func Pack(ctx context.Context, w io.Writer, m *archive.Manifest, items []Item, max int64) error {
	bw, err := archive.NewWriter(w, m, max)
	if err != nil {
		return err
	}
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return err
		}
		rc, err := it.open()
		if err != nil {
			return fmt.Errorf("%s: %w", it.e.Origin, err)
		}
		err = bw.Add(safefs.CtxReader(ctx, rc))
		rc.Close()
		if err != nil {
			return err
		}
	}
	return bw.Close()
}

type packer struct {
	opts  Options
	m     *archive.Manifest
	items []Item
	names map[string]bool
	owner *core.Owner
}

func (p *packer) warn(s string) {
	if p.opts.Warn != nil {
		p.opts.Warn(s)
	}
}

func (p *packer) missing(kind, path, id, reason string) {
	p.m.Missing = append(p.m.Missing, archive.Missing{Kind: kind, Path: path, BuildID: id, Reason: reason})
}

// add hashes the file and adds its entry; a name already packed is
// skipped.
func (p *packer) add(e archive.Entry, open func() (io.ReadCloser, error)) error {
	if p.names[e.Name] {
		return nil
	}
	if err := archive.CheckName(e.Name); err != nil {
		return fmt.Errorf("%s cannot be packed: %v", e.Origin, err)
	}
	rc, err := open()
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(h, rc)
	rc.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", e.Origin, err)
	}
	e.Size, e.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	p.names[e.Name] = true
	p.m.Entries = append(p.m.Entries, e)
	p.items = append(p.items, Item{e, open})
	return nil
}

func hostOpener(name string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return saferead.Open(name) }
}

// inRoot opens name, a path as the process saw it, under the root.
func (p *packer) inRoot(root, name string) (string, os.FileInfo, error) {
	host, err := rootfs.HostPath(root, name)
	if err != nil {
		return "", nil, err
	}
	f, err := saferead.Open(host)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	return host, st, err
}

// readable reports whether the process's user could read a file of st
// (its mode bits; root reads all); with no known user, what anyone may.
func (p *packer) readable(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	mode := uint32(st.Mode().Perm())
	switch {
	case p.owner == nil:
		return mode&0o004 != 0
	case p.owner.UID == 0:
		return true
	case sys.Uid == p.owner.UID:
		return mode&0o400 != 0
	case sys.Gid == p.owner.GID:
		return mode&0o040 != 0
	}
	return mode&0o004 != 0
}

// module packs one mapped file when it is ELF and its build-id is the
// core's; it returns the module for the debug-file search.
func (p *packer) module(f core.File) (target.Module, bool) {
	mod := target.Module{Path: f.Path, BuildID: f.BuildID, Deleted: f.Deleted}
	if f.Deleted {
		p.missing(archive.KindModule, f.Path, f.BuildID, "deleted while the process had it mapped")
		return mod, f.BuildID != ""
	}
	host, st, err := p.inRoot(p.opts.Root, f.Path)
	if err != nil {
		if f.BuildID != "" {
			p.missing(archive.KindModule, f.Path, f.BuildID, err.Error())
		}
		return mod, f.BuildID != ""
	}
	fh, err := saferead.Open(host)
	if err != nil {
		return mod, false
	}
	id, idErr := elfinfo.ReadBuildID(fh)
	var magic [4]byte
	_, merr := fh.ReadAt(magic[:], 0)
	fh.Close()
	if merr != nil || string(magic[:]) != "\x7fELF" {
		return mod, false // locale archives, caches: not modules
	}
	if idErr != nil {
		id = ""
	}
	if f.BuildID != "" && id != f.BuildID {
		reason := fmt.Sprintf("build-id mismatch: the file has %s, the core %s (the file changed since the core was written)", orNone(id), f.BuildID)
		p.warn(fmt.Sprintf("%s not packed: %s", f.Path, reason))
		p.missing(archive.KindModule, f.Path, f.BuildID, reason)
		return mod, true
	}
	if !p.readable(st) {
		p.missing(archive.KindModule, f.Path, f.BuildID, "the process's user may not read it")
		return mod, false
	}
	if mod.BuildID == "" {
		mod.BuildID = id
	}
	if err := p.add(archive.Entry{Name: "root" + f.Path, Kind: archive.KindModule, Path: f.Path, BuildID: mod.BuildID, Origin: host}, hostOpener(host)); err != nil {
		p.missing(archive.KindModule, f.Path, f.BuildID, err.Error())
	}
	return mod, true
}

func orNone(id string) string {
	if id == "" {
		return "none"
	}
	return id
}

// debug packs a module's separate debug file (and its dwz file) under
// debug/.build-id, where gdb and lldb look by build-id.
func (p *packer) debug(dm debugsearch.Module) {
	switch {
	case dm.Debug.Via == debugfile.ViaEmbedded:
		return // the module's own DWARF is packed with it
	case dm.Debug.Path == "" || dm.Debug.Via == debugfile.ViaNone:
		reason := "no debug file found"
		if dm.Debug.Err != "" {
			reason += ": " + dm.Debug.Err
		}
		p.missing(archive.KindDebug, dm.Path, dm.BuildID, reason)
		return
	}
	id := buildid.ID(dm.BuildID)
	name := id.Path("debug", ".debug")
	if name == "" {
		p.missing(archive.KindDebug, dm.Path, dm.BuildID, "the module has no build-id to file its debug file under")
		return
	}
	if err := p.add(archive.Entry{Name: name, Kind: archive.KindDebug, Path: dm.Path, BuildID: dm.BuildID, Origin: dm.Debug.Path}, hostOpener(dm.Debug.Path)); err != nil {
		p.missing(archive.KindDebug, dm.Path, dm.BuildID, err.Error())
		return
	}
	if dm.Debug.Alt != "" {
		aid, err := elfinfo.ReadBuildIDFile(dm.Debug.Alt)
		aname := buildid.ID(aid).Path("debug", ".debug")
		if err != nil || aname == "" {
			p.missing(archive.KindAltDebug, dm.Debug.Alt, "", "the dwz file has no build-id")
			return
		}
		if err := p.add(archive.Entry{Name: aname, Kind: archive.KindAltDebug, Path: dm.Path, BuildID: aid, Origin: dm.Debug.Alt}, hostOpener(dm.Debug.Alt)); err != nil {
			p.missing(archive.KindAltDebug, dm.Debug.Alt, aid, err.Error())
		}
	} else if dm.Debug.AltMissing {
		p.missing(archive.KindAltDebug, dm.Path, dm.BuildID, "its dwz file was not found")
	}
}

// source packs a Python frame's file, read as the process saw it.
func (p *packer) source(name string) {
	if !strings.HasPrefix(name, "/") || path.Clean(name) != name {
		return // <frozen ...>, <string>: no file
	}
	if p.names["root"+name] {
		return
	}
	host, st, err := p.inRoot(p.opts.SourceRoot, name)
	switch {
	case err != nil:
		p.missing(archive.KindPythonSource, name, "", err.Error())
		return
	case !p.readable(st):
		p.missing(archive.KindPythonSource, name, "", "the process's user may not read it")
		return
	case st.Size() > maxSource:
		p.missing(archive.KindPythonSource, name, "", fmt.Sprintf("larger than %d bytes", maxSource))
		return
	}
	if err := p.add(archive.Entry{Name: "root" + name, Kind: archive.KindPythonSource, Path: name, Origin: host}, hostOpener(host)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = errors.New("no such file")
		}
		p.missing(archive.KindPythonSource, name, "", err.Error())
	}
}

// NativeSourceName is the entry name of a native frame's source file
// whose DWARF path is name: src/ and the path cleaned; "" when it has
// none (relative, or climbing above /).
func NativeSourceName(name string) string {
	if !path.IsAbs(name) {
		return ""
	}
	n := "src" + path.Clean(name)
	if archive.CheckName(n) != nil {
		return ""
	}
	return n
}

// nativeSource packs a native frame's source file from where --source
// maps it.
func (p *packer) nativeSource(s NativeSource) {
	name := NativeSourceName(s.Path)
	switch {
	case s.Local == "":
		p.missing(archive.KindNativeSource, s.Path, "", s.Reason)
		return
	case name == "":
		p.missing(archive.KindNativeSource, s.Path, "", "not an absolute path")
		return
	case p.names[name]:
		return
	}
	st, err := os.Stat(s.Local)
	switch {
	case err != nil:
		p.missing(archive.KindNativeSource, s.Path, "", "no such file: "+s.Local)
		return
	case !st.Mode().IsRegular():
		p.missing(archive.KindNativeSource, s.Path, "", "not a regular file: "+s.Local)
		return
	case st.Size() > maxSource:
		p.missing(archive.KindNativeSource, s.Path, "", fmt.Sprintf("larger than %d bytes", maxSource))
		return
	}
	if err := p.add(archive.Entry{Name: name, Kind: archive.KindNativeSource, Path: s.Path, Origin: s.Local}, hostOpener(s.Local)); err != nil {
		p.missing(archive.KindNativeSource, s.Path, "", err.Error())
	}
}
