package debugfile

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Via says where debug information was found.
type Via string

// The places debug information is found, in search order.
const (
	ViaEmbedded        Via = "embedded"
	ViaBuildID         Via = "build-id"
	ViaDebugLink       Via = "debuglink"
	ViaDebuginfodCache Via = "debuginfod-cache"
	ViaDebuginfod      Via = "debuginfod"
	ViaNone            Via = "none"
	// ViaDSYM and ViaDebugMap are a Mach-O module's: a .dSYM bundle's
	// DWARF file, the object files of its debug map (detect/dsym).
	ViaDSYM     Via = "dsym"
	ViaDebugMap Via = "debug-map"
)

// Kind says what the debug information holds, which decides what the
// debugger can show.
type Kind string

// Kinds of debug information, from most to least useful.
const (
	// KindDWARF is full DWARF: files, lines, types and locals.
	KindDWARF Kind = "dwarf"
	// KindLineTables is DWARF without types or locals (-g1, or a lone
	// .debug_line): files and lines, but py-bt cannot read frames.
	KindLineTables Kind = "line-tables"
	// KindSymtab is a full symbol table only: function names, no lines.
	KindSymtab Kind = "symtab"
	// KindMiniDebugInfo is a .gnu_debugdata section: an LZMA-compressed
	// symbol table of the functions .dynsym lacks (Fedora).
	KindMiniDebugInfo Kind = "minidebuginfo"
	// KindNone means only the dynamic symbols are there.
	KindNone Kind = "none"
)

// Module is an ELF file to find debug information for.
type Module struct {
	// Path is the module's path as its process sees it.
	Path string
	// Root is the host path of the process's root directory when it runs
	// in a container or chroot ("" otherwise). Files are read under it,
	// and debug directories are searched under it before the host's.
	Root string
	// Also lists other paths of the same file whose directories gdb's
	// debuglink search should try: the real path of a symlink, the
	// original of a venv copy.
	Also []string
	// Info is the module's ELF facts; Locate reads them when nil.
	Info *elfinfo.Info
}

// Found is the answer for one module.
type Found struct {
	Via  Via    `json:"via"`
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Alt is the dwz supplementary file named by .gnu_debugaltlink, when
	// the debug information has one; AltMissing is true when it names
	// one that was not found (types and names then go missing).
	Alt        string `json:"alt,omitempty"`
	AltMissing bool   `json:"alt_missing,omitempty"`
	// Producer is the compiler line of the debug information, if any.
	Producer *elfinfo.Producer `json:"producer,omitempty"`
	// Rejected lists files that were found but did not match.
	Rejected []Rejection `json:"rejected,omitempty"`
	// Err says why a server download failed, when one was tried.
	Err string `json:"error,omitempty"`
}

// Rejection is a candidate file that exists but is not the module's.
type Rejection struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Fetcher is the debuginfod side of the search.
type Fetcher interface {
	// Cached returns the cached debug file for a build-id.
	Cached(buildID string) (string, bool)
	// Fetch downloads debug files for the build-ids, in parallel; the
	// result maps each build-id to its file or an error.
	Fetch(ctx context.Context, buildIDs []string) map[string]FetchResult
}

// FetchResult is the outcome of one download.
type FetchResult struct {
	Path string
	Err  error
}

// Locator holds the search configuration.
type Locator struct {
	// DebugDirs are gdb's debug-file-directory entries, in order.
	DebugDirs []string
	// Debuginfod is consulted for the cache, and for servers unless
	// Offline. Nil disables both.
	Debuginfod Fetcher
	Offline    bool

	// twinIdx indexes the debug directories for modules without a
	// build-id (locateTwin), built once when first needed.
	twinMu  sync.Mutex
	twinIdx *twinIndex
}

// DefaultDebugDirs is gdb's default debug-file-directory on Debian,
// Ubuntu and Fedora.
var DefaultDebugDirs = []string{"/usr/lib/debug"}

// maxIndexed bounds the rest.N.debug variants tried per build-id.
const maxIndexed = 8

// HostPath returns where p, a path as a process whose root directory
// is root sees it, is read on this machine: p itself without a root,
// else p under root with its symbolic links followed as that process
// would (rootfs.HostPath: an absolute link target starts again at root,
// never at this machine's /). A path whose links loop inside the root
// comes back joined lexically, for messages.
func HostPath(root, p string) string {
	if root == "" {
		return p
	}
	if h, err := rootfs.HostPath(root, p); err == nil {
		return h
	}
	return rootfs.Join(root, p)
}

// SearchedDir is a debug directory searched for a process in another
// root: as the process sees it, and where it was read from.
type SearchedDir struct {
	Dir      string `json:"dir"`
	ReadFrom string `json:"read_from"`
}

// RootDirs lists the debug directories searched under a process's root
// (before the host's own), as Locate searches them for its modules.
func (l *Locator) RootDirs(root string) []SearchedDir {
	if root == "" {
		return nil
	}
	dirs := l.DebugDirs
	if dirs == nil {
		dirs = DefaultDebugDirs
	}
	out := []SearchedDir{}
	for _, d := range dirs {
		out = append(out, SearchedDir{Dir: d, ReadFrom: HostPath(root, d)})
	}
	return out
}

// host returns where a path of the module's process is on this machine:
// under its root, with links resolved inside that root (rootfs.HostPath),
// so that an absolute link in a container never leads to the host's file.
func (m *Module) host(p string) (string, error) {
	if m.Root == "" {
		return p, nil
	}
	return rootfs.HostPath(m.Root, p)
}

// hosts appends to out the host paths of ps (see host), leaving out any
// that cannot be resolved (a link loop).
func (m *Module) hosts(out []string, ps ...string) []string {
	for _, p := range ps {
		if h, err := m.host(p); err == nil {
			out = append(out, h)
		}
	}
	return out
}

// Locate runs the local part of the search (steps 1 to 4).
func (l *Locator) Locate(m Module) (Found, error) {
	if m.Info == nil {
		exe, err := m.host(m.Path)
		if err != nil {
			return Found{Via: ViaNone, Kind: KindNone}, err
		}
		info, err := elfinfo.Open(exe, elfinfo.Options{Producer: true})
		if err != nil {
			return Found{Via: ViaNone, Kind: KindNone}, err
		}
		m.Info = info
	}
	info := m.Info
	var f Found
	if info.DWARF {
		f = Found{Via: ViaEmbedded, Path: m.Path, Kind: kindOf(info), Producer: info.Producer}
		if exe, err := m.host(m.Path); err == nil {
			l.locateAlt(&f, m, exe, info)
		}
		return f, nil
	}
	if id := buildid.ID(info.BuildID); id.Valid() {
		for _, dir := range l.dirsFor(m) {
			for i := 0; i <= maxIndexed; i++ {
				p := id.DebugPath(dir)
				if i > 0 {
					p = id.Path(dir, fmt.Sprintf(".%d.debug", i))
				}
				if _, err := os.Stat(p); err != nil {
					break
				}
				if ok, why, fc := matches(p, check{buildID: string(id), facts: true}); ok {
					return l.foundWith(ViaBuildID, p, m, f.Rejected, fc), nil
				} else {
					f.Rejected = append(f.Rejected, Rejection{Path: p, Reason: why})
				}
			}
		}
	}
	if dl := info.DebugLink; dl != nil {
		for _, p := range l.debuglinkCandidates(m, dl.Name) {
			if _, err := os.Stat(p); err != nil {
				continue
			}
			ok, why, fc := matches(p, check{buildID: info.BuildID, crc: &dl.CRC, facts: true})
			if ok {
				return l.foundWith(ViaDebugLink, p, m, f.Rejected, fc), nil
			}
			f.Rejected = append(f.Rejected, Rejection{Path: p, Reason: why})
		}
	}
	if info.BuildID == "" {
		if p, fc, ok := l.locateTwin(m, &f); ok {
			return l.foundWith(ViaContent, p, m, f.Rejected, fc), nil
		}
	}
	if l.Debuginfod != nil && buildid.Valid(info.BuildID) {
		if p, ok := l.Debuginfod.Cached(info.BuildID); ok {
			return l.found(ViaDebuginfodCache, p, m, f.Rejected), nil
		}
	}
	f.Via, f.Kind = ViaNone, kindOf(info)
	return f, nil
}

// found builds the answer for a separate debug file.
func (l *Locator) found(via Via, p string, m Module, rejected []Rejection) Found {
	info, err := elfinfo.Open(p, elfinfo.Options{Producer: true})
	return l.foundWith(via, p, m, rejected, facts{info, err})
}

// facts are what found needs of a debug file: its elfinfo facts with the
// producer, or the error reading them.
type facts struct {
	info *elfinfo.Info
	err  error
}

// foundWith is found for a file whose facts were read while matching it,
// from the same parse.
func (l *Locator) foundWith(via Via, p string, m Module, rejected []Rejection, fc facts) Found {
	f := Found{Via: via, Path: p, Kind: KindNone, Rejected: rejected}
	info, err := fc.info, fc.err
	if err != nil {
		f.Err = err.Error()
		return f
	}
	f.Kind = kindOf(info)
	f.Producer = info.Producer
	l.locateAlt(&f, m, p, info)
	return f
}

// dirsFor returns the debug directories to search for a module: under
// its root first (a container has its own debug packages), then the
// host's.
func (l *Locator) dirsFor(m Module) []string {
	dirs := l.DebugDirs
	if dirs == nil {
		dirs = DefaultDebugDirs
	}
	var out []string
	if m.Root != "" {
		out = m.hosts(out, dirs...)
	}
	return append(out, dirs...)
}

// debuglinkCandidates lists gdb's debuglink locations for every directory
// the module is known under.
func (l *Locator) debuglinkCandidates(m Module, name string) []string {
	var objdirs []string
	seen := map[string]bool{}
	add := func(p string) {
		d := path.Dir(p)
		if !seen[d] {
			seen[d] = true
			objdirs = append(objdirs, d)
		}
	}
	add(m.Path)
	if m.Root != "" {
		// host resolved the links inside the root already.
		if real, err := m.host(m.Path); err == nil {
			add(rootfs.Strip(m.Root, real))
		}
	} else if real, err := filepath.EvalSymlinks(m.Path); err == nil {
		add(real)
	}
	for _, a := range m.Also {
		add(a)
	}
	var out []string
	for _, d := range objdirs {
		out = m.hosts(out, path.Join(d, name), path.Join(d, ".debug", name))
	}
	for _, dir := range l.dirsFor(m) {
		for _, d := range objdirs {
			out = append(out, filepath.Join(dir, d, name))
		}
	}
	return out
}

// locateAlt finds the dwz file named by a debug file's .gnu_debugaltlink:
// as named (relative names are relative to the debug file), then by its
// build-id in the debug directories.
func (l *Locator) locateAlt(f *Found, m Module, debugFile string, info *elfinfo.Info) {
	al := info.DebugAltLink
	if al == nil {
		return
	}
	var cands []string
	if filepath.IsAbs(al.Name) {
		cands = append(m.hosts(cands, al.Name), al.Name)
	} else {
		cands = append(cands, filepath.Join(filepath.Dir(debugFile), al.Name))
	}
	if id := buildid.ID(al.BuildID); id.Valid() {
		for _, dir := range l.dirsFor(m) {
			cands = append(cands, id.DebugPath(dir))
		}
	}
	for _, p := range cands {
		if ok, _, _ := matches(p, check{buildID: al.BuildID}); ok {
			f.Alt = p
			return
		}
	}
	f.AltMissing = true
}

// kindOf classifies the debug information of a file.
func kindOf(info *elfinfo.Info) Kind {
	switch {
	case info.DWARF && info.Producer != nil && (info.Producer.GLevel == "1" || info.Producer.GLevel == "0"):
		return KindLineTables
	case info.DWARF:
		return KindDWARF
	case info.DebugLine:
		return KindLineTables
	case info.Symtab:
		return KindSymtab
	case info.MiniDebugInfo:
		return KindMiniDebugInfo
	}
	return KindNone
}

// check is what a candidate debug file must match, as gdb checks it.
type check struct {
	// buildID is the module's build-id; "" when it has none.
	buildID string
	// crc is the .gnu_debuglink CRC-32 for a debuglink candidate, which
	// may then lack a build-id; nil for a build-id candidate, which must
	// carry buildID.
	crc *uint32
	// facts asks for the file's facts on a match.
	facts bool
}

// matches checks a candidate debug file, and on a match reads its facts
// (when asked) from the same parse. why is the reason for a rejection.
func matches(p string, c check) (ok bool, why string, fc facts) {
	f, err := saferead.Open(p)
	if err != nil {
		return false, err.Error(), facts{}
	}
	defer f.Close()
	ef, err := elfinfo.NewFile(f)
	if err != nil {
		return false, err.Error(), facts{}
	}
	id, err := elfinfo.BuildIDOf(ef)
	if err != nil && !(c.crc != nil && errors.Is(err, elfinfo.ErrNoBuildID)) {
		return false, err.Error(), facts{}
	}
	if err == nil && (c.crc == nil || c.buildID != "") && id != c.buildID {
		return false, fmt.Sprintf("build-id %s, want %s", id, c.buildID), facts{}
	}
	if c.crc != nil {
		h := crc32.NewIEEE()
		if _, err := io.Copy(h, f); err != nil {
			return false, err.Error(), facts{}
		}
		if got := h.Sum32(); got != *c.crc {
			return false, fmt.Sprintf("CRC-32 %08x, want %08x (.gnu_debuglink)", got, *c.crc), facts{}
		}
	}
	if !c.facts {
		return true, "", facts{}
	}
	info, err := elfinfo.ReadELF(ef, elfinfo.Options{Producer: true})
	return true, "", facts{info, err}
}

// Result is one module's answer from LocateAll.
type Result struct {
	Module Module
	Found  Found
	Err    error
}

// LocateAll runs Locate for every module in parallel, then asks the
// debuginfod servers, in one batch, for those still without DWARF.
func (l *Locator) LocateAll(ctx context.Context, mods []Module, parallel int) []Result {
	if parallel <= 0 {
		parallel = 4
	}
	out := make([]Result, len(mods))
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i := range mods {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			m := mods[i]
			f, err := l.Locate(m)
			if m.Info == nil && err == nil {
				// Locate read the info; keep it for the caller.
				if exe, err := m.host(m.Path); err == nil {
					m.Info, _ = elfinfo.Open(exe, elfinfo.Options{})
				}
			}
			out[i] = Result{Module: m, Found: f, Err: err}
		}(i)
	}
	wg.Wait()
	if l.Debuginfod == nil || l.Offline {
		return out
	}
	var want []string
	idx := map[string][]int{}
	for i, r := range out {
		if r.Err != nil || r.Module.Info == nil || !buildid.Valid(r.Module.Info.BuildID) {
			continue
		}
		if r.Found.Via != ViaNone {
			continue
		}
		id := r.Module.Info.BuildID
		if _, ok := idx[id]; !ok {
			want = append(want, id)
		}
		idx[id] = append(idx[id], i)
	}
	if len(want) == 0 {
		return out
	}
	got := l.Debuginfod.Fetch(ctx, want)
	for id, is := range idx {
		fr, ok := got[id]
		if !ok {
			continue
		}
		for _, i := range is {
			if fr.Err != nil {
				out[i].Found.Err = fr.Err.Error()
				continue
			}
			f := l.found(ViaDebuginfod, fr.Path, out[i].Module, out[i].Found.Rejected)
			out[i].Found = f
		}
	}
	return out
}
