package symbols

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNotInstalled means the distribution a debug zip was built for is
	// not installed in the site-packages directories given. The error is
	// a *NotInstalledError.
	ErrNotInstalled = errors.New("distribution not installed")
	// ErrUnsafeEntry means a zip entry could write outside its directory
	// (an absolute path, "..", a backslash, NUL or a control character, a
	// symlink or device entry), is repeated, or is too large. Nothing from
	// such a zip is installed.
	ErrUnsafeEntry = errors.New("unsafe zip entry")
	// ErrNotDebugZip means a file is not a zip archive, is not named
	// <wheel-stem>-debug-symbols.zip, or holds no *.debug entry.
	ErrNotDebugZip = errors.New("not a debug-symbols zip")
	// ErrMismatch means no debug file in a zip matched its installed
	// .so; Report.Mismatches says why for each.
	ErrMismatch = errors.New("debug files do not match the installed files")
	// ErrNoSuchInstall means Remove found no install of that name.
	ErrNoSuchInstall = errors.New("no such install in the debug store")
)

// Bounds on what Install reads from a zip.
const (
	// MaxEntrySize bounds one debug file (uncompressed).
	MaxEntrySize = 2 << 30
	// MaxTotalSize bounds the sum of the debug files of one zip.
	MaxTotalSize = 16 << 30
	// MaxEntries bounds the number of entries in one zip.
	MaxEntries = 100000
	// maxManifestSize bounds manifest.json.
	maxManifestSize = 64 << 20
)

// ManifestName is the manifest's file name inside the store.
const ManifestName = "manifest.json"

// How a debug file was proved to belong to its installed .so.
const (
	// VerifiedCRCBuildID: the .so's .gnu_debuglink CRC-32 equals the
	// CRC-32 of the whole debug file, and both carry the same build-id.
	VerifiedCRCBuildID = "crc32+build-id"
	// VerifiedBuildID: equal build-ids; the .so has no .gnu_debuglink.
	VerifiedBuildID = "build-id"
)

// Reasons for a Mismatch.
const (
	MismatchCRC         = "crc32"          // debuglink CRC differs
	MismatchBuildID     = "build-id"       // build-ids differ, or the debug file has none
	MismatchNotInRecord = "not-in-record"  // RECORD does not list the .so
	MismatchMissing     = "missing"        // RECORD lists it, the file is absent
	MismatchNotELF      = "not-elf"        // the installed file is not readable ELF
	MismatchNoBuildID   = "no-build-id"    // the installed .so has no build-id to file it under
	MismatchNoDebugInfo = "not-debug-file" // the zip entry is not an ELF file
)

// Store is pyattach's private debug directory. Debug files live in gdb's
// build-id layout, <Dir>/.build-id/xx/rest.debug, which gdb and lldb
// both search once Dir is one of their debug-file directories; the
// manifest <Dir>/manifest.json records every install.
type Store struct {
	// Dir is the store's root, such as $XDG_DATA_HOME/pyattach/debug.
	Dir string
}

// File is one debug file installed from a zip.
type File struct {
	// Entry is the zip entry, <path inside the wheel>/<name>.so.debug.
	Entry string `json:"entry"`
	// SO is the installed .so it belongs to.
	SO string `json:"so"`
	// BuildID is the build-id (hex) shared by SO and the debug file.
	BuildID string `json:"build_id"`
	// Debug is the debug file's path in the store (absolute).
	Debug string `json:"debug"`
	// Verified says how the debug file was proved to match SO:
	// VerifiedCRCBuildID or VerifiedBuildID.
	Verified string `json:"verified"`
	// CRC is the CRC-32 (IEEE) of the whole debug file.
	CRC uint32 `json:"crc"`
	// Size is the debug file's size in bytes.
	Size int64 `json:"size"`
}

// Install is one installed debug zip, as the manifest records it.
type Install struct {
	// Name and Version are the distribution's, as its .dist-info is named.
	Name    string `json:"name"`
	Version string `json:"version"`
	// SitePackages is where the distribution is installed.
	SitePackages string `json:"site_packages"`
	// Zip is the zip's path when it was installed, ZipSHA256 its hash.
	Zip       string `json:"zip"`
	ZipSHA256 string `json:"zip_sha256"`
	// Files are the debug files installed, sorted by entry.
	Files []File `json:"files"`
}

// Mismatch is a zip entry that was not installed.
type Mismatch struct {
	Entry string `json:"entry"`
	// SO is the installed file the entry was checked against ("" when
	// RECORD does not list one).
	SO string `json:"so,omitempty"`
	// Reason is one of the Mismatch* constants.
	Reason string `json:"reason"`
	// Want is what the installed .so expects (its debuglink CRC as
	// 8 hex digits, its build-id), Got what the entry holds.
	Want string `json:"want,omitempty"`
	Got  string `json:"got,omitempty"`
}

func (m Mismatch) String() string {
	switch m.Reason {
	case MismatchCRC:
		return fmt.Sprintf("%s: CRC-32 %s, but %s's .gnu_debuglink wants %s", m.Entry, m.Got, m.SO, m.Want)
	case MismatchBuildID:
		return fmt.Sprintf("%s: build-id %s, but %s has build-id %s", m.Entry, m.Got, m.SO, m.Want)
	case MismatchNotInRecord:
		return fmt.Sprintf("%s: %s is not listed in the distribution's RECORD", m.Entry, m.Want)
	case MismatchMissing:
		return fmt.Sprintf("%s: %s is listed in RECORD but is not installed", m.Entry, m.SO)
	case MismatchNotELF:
		return fmt.Sprintf("%s: %s is not a readable ELF file: %s", m.Entry, m.SO, m.Got)
	case MismatchNoBuildID:
		return fmt.Sprintf("%s: %s has no build-id to file the debug file under", m.Entry, m.SO)
	case MismatchUUID:
		return fmt.Sprintf("%s: UUID %s, but %s has UUID %s", m.Entry, m.Got, m.SO, m.Want)
	case MismatchNotMachO:
		return fmt.Sprintf("%s: %s is not a readable Mach-O file: %s", m.Entry, m.SO, m.Got)
	case MismatchNoDWARFFile:
		if m.Want != "" {
			return fmt.Sprintf("%s: the bundle has no %s", m.Entry, m.Want)
		}
		return fmt.Sprintf("%s: the bundle's DWARF file is not readable: %s", m.Entry, m.Got)
	case MismatchNoDebugInfo:
		return fmt.Sprintf("%s: not an ELF debug file: %s", m.Entry, m.Got)
	}
	return fmt.Sprintf("%s: %s (want %s, got %s)", m.Entry, m.Reason, m.Want, m.Got)
}

// Report says what Install did.
type Report struct {
	// Install is the manifest's record of this zip after the call.
	Install Install `json:"install"`
	// Added lists the store files this call wrote; on a repeated
	// install of the same zip it is empty.
	Added []string `json:"added"`
	// Mismatches lists the entries not installed, and why.
	Mismatches []Mismatch `json:"mismatches"`
	// Ignored lists the entries that are not *.debug files.
	Ignored []string `json:"ignored,omitempty"`
}

// debugEntry is a zip entry to install, with what it was checked against.
type debugEntry struct {
	f     *zip.File
	so    string
	info  *elfinfo.Info
	tmp   string
	crc   uint32
	sum   [sha256.Size]byte
	size  int64
	build string
}

// Install installs the debug files of the zip at zipPath for dist (from
// FindDistribution). Every entry <path>/<name>.so.debug must belong to
// <dist.SitePackages>/<path>/<name>.so, listed in dist's RECORD: the
// .so's .gnu_debuglink CRC-32 must equal that of the whole entry, and the
// build-ids must be equal. Entries that fail are reported in
// Report.Mismatches and not installed; when none passes, the error wraps
// ErrMismatch.
//
// A zip with an unsafe entry (ErrUnsafeEntry), one that cannot be read
// (ErrNotDebugZip) or an I/O error installs nothing: debug files are
// extracted to temporary files in Dir, checked, then renamed into place;
// on failure the temporary files are removed and replaced files
// restored. The site-packages directory is only read. Installing the
// same zip again changes nothing.
func (s *Store) Install(zipPath string, dist *Dist) (rep *Report, err error) {
	if dist == nil {
		return nil, errors.New("install debug zip: no distribution")
	}
	dir, err := s.dir()
	if err != nil {
		return nil, err
	}
	// Opened once, as a regular file (a FIFO would block, a device
	// would be read): the entries and the checksum come from the same
	// file.
	zf, st, err := saferead.OpenRegular(zipPath)
	if errors.Is(err, saferead.ErrNotRegular) {
		return nil, err // names the file and what it is
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotDebugZip, zipPath, err)
	}
	defer zf.Close()
	zr, err := zip.NewReader(zf, st.Size())
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotDebugZip, zipPath, err)
	}

	rep = &Report{}
	if hasBundles(zr.File) {
		// A macosx zip: .dSYM bundles (dsym.go).
		return s.installBundles(dir, zipPath, zf, st.Size(), zr, dist, rep)
	}
	entries, err := checkEntries(zipPath, zr.File, rep, isDebugEntry, "*.debug")
	if err != nil {
		return nil, err
	}
	return s.install(dir, zipPath, zf, st.Size(), buildid.Tree(dir), dist, rep, len(entries), func(i int) (staged, *Mismatch, error) {
		return s.prepare(dir, entries[i], dist)
	})
}

// staged is a candidate of an install (a .debug file, a .dSYM bundle)
// extracted into a temporary place of the store and checked. discard
// removes what is still temporary; place renames it into the store under
// dir, adds its Files to inst and what it added to rep, and returns what
// it placed (also when it fails part way), to be undone or finished.
type staged interface {
	discard()
	place(dir string, inst *Install, rep *Report) ([]placed, error)
}

// placed is a file or bundle renamed into place: undo restores what was
// there before, finish drops the saved copy.
type placed interface {
	undo()
	finish()
}

// install is the one transaction of Install, for either kind of zip:
// with the store under dir locked (sub, where the files go, made
// first), each of the n candidates is staged by stage; those that do not
// belong are reported as Mismatches; when all could be read, those that
// belong are placed and the manifest written, and every placement is
// undone if a later step fails.
func (s *Store) install(dir, zipPath string, zf io.ReaderAt, size int64, sub string, dist *Dist, rep *Report, n int, stage func(i int) (staged, *Mismatch, error)) (*Report, error) {
	absZip, err := filepath.Abs(zipPath)
	if err != nil {
		return nil, err
	}
	zipSum, err := readerSHA256(io.NewSectionReader(zf, 0, size))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", zipPath, err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return nil, fmt.Errorf("create debug store: %w", err)
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	// Extract and check everything before anything is renamed into place.
	var good []staged
	defer func() {
		for _, e := range good {
			e.discard()
		}
	}()
	for i := 0; i < n; i++ {
		e, mm, err := stage(i)
		if err != nil || mm != nil {
			e.discard()
		}
		if err != nil {
			return nil, err
		}
		if mm != nil {
			rep.Mismatches = append(rep.Mismatches, *mm)
			continue
		}
		good = append(good, e)
	}
	if len(good) == 0 {
		return rep, fmt.Errorf("%s: %w: %s", zipPath, ErrMismatch, mismatchSummary(rep.Mismatches))
	}

	sp, err := filepath.Abs(dist.SitePackages)
	if err != nil {
		return nil, err
	}
	inst := Install{Name: dist.Name, Version: dist.Version, SitePackages: sp, Zip: absZip, ZipSHA256: zipSum}
	var done []placed
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			done[i].undo()
		}
	}
	for _, e := range good {
		p, err := e.place(dir, &inst, rep)
		done = append(done, p...)
		if err != nil {
			rollback()
			return nil, err
		}
	}
	sort.SliceStable(inst.Files, func(i, j int) bool { return inst.Files[i].Entry < inst.Files[j].Entry })

	m, err := readManifest(dir)
	if err != nil {
		rollback()
		return nil, err
	}
	if m.put(inst) {
		if err := writeManifest(dir, m); err != nil {
			rollback()
			return nil, err
		}
	}
	for _, d := range done {
		d.finish()
	}
	rep.Install = inst
	return rep, nil
}

// discard removes the temporary file, if any.
func (e *debugEntry) discard() {
	if e != nil && e.tmp != "" {
		os.Remove(e.tmp)
	}
}

// place commits the debug file to gdb's place for its build-id.
func (e *debugEntry) place(dir string, inst *Install, rep *Report) ([]placed, error) {
	dest := buildid.ID(e.build).DebugPath(dir)
	verified := VerifiedBuildID
	if e.info.DebugLink != nil {
		verified = VerifiedCRCBuildID
	}
	inst.Files = append(inst.Files, File{Entry: e.f.Name, SO: e.so, BuildID: e.build, Debug: dest,
		Verified: verified, CRC: e.crc, Size: e.size})
	c, err := commit(e.tmp, dest, e.size, e.sum)
	if err != nil {
		return nil, err
	}
	e.tmp = ""
	if !c.added {
		return nil, nil
	}
	rep.Added = append(rep.Added, dest)
	return []placed{c}, nil
}

func (s *Store) dir() (string, error) {
	if s.Dir == "" {
		return "", errors.New("debug store: no directory")
	}
	return filepath.Abs(s.Dir)
}

// isDebugEntry is a Linux zip's entry to install: <path>/<name>.debug.
func isDebugEntry(name string) bool {
	return strings.HasSuffix(name, ".debug") && path.Base(name) != ".debug"
}

// checkEntries refuses a zip with any unsafe entry and returns the
// entries want keeps (what names them in an error); other regular files
// go to rep.Ignored.
func checkEntries(zipPath string, files []*zip.File, rep *Report, want func(string) bool, what string) ([]*zip.File, error) {
	if len(files) > MaxEntries {
		return nil, fmt.Errorf("%s: %w: %d entries (at most %d)", zipPath, ErrUnsafeEntry, len(files), MaxEntries)
	}
	seen := map[string]bool{}
	var out []*zip.File
	var total uint64
	for _, f := range files {
		if err := checkEntryName(f.Name); err != nil {
			return nil, fmt.Errorf("%s: %w %q: %s", zipPath, ErrUnsafeEntry, f.Name, err)
		}
		mode := f.Mode()
		name := strings.TrimSuffix(f.Name, "/")
		switch {
		case mode&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("%s: %w %q: a symbolic link", zipPath, ErrUnsafeEntry, f.Name)
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			continue
		case !mode.IsRegular():
			return nil, fmt.Errorf("%s: %w %q: not a regular file (%s)", zipPath, ErrUnsafeEntry, f.Name, mode.Type())
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: %w %q: appears twice", zipPath, ErrUnsafeEntry, f.Name)
		}
		seen[name] = true
		if !want(name) {
			rep.Ignored = append(rep.Ignored, f.Name)
			continue
		}
		if f.UncompressedSize64 > MaxEntrySize {
			return nil, fmt.Errorf("%s: %w %q: %d bytes uncompressed (at most %d)", zipPath, ErrUnsafeEntry, f.Name, f.UncompressedSize64, int64(MaxEntrySize))
		}
		total += f.UncompressedSize64
		if total > MaxTotalSize {
			return nil, fmt.Errorf("%s: %w: the debug files add up to more than %d bytes", zipPath, ErrUnsafeEntry, int64(MaxTotalSize))
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s has no %s entries", ErrNotDebugZip, zipPath, what)
	}
	return out, nil
}

// checkEntryName says what makes a zip entry name unsafe to extract
// below a directory, or returns nil.
func checkEntryName(name string) error {
	switch {
	case name == "":
		return errors.New("an empty name")
	case strings.ContainsRune(name, 0):
		return errors.New("a NUL byte in the name")
	case strings.ContainsRune(name, '\\'):
		return errors.New("a backslash in the name")
	case strings.HasPrefix(name, "/"):
		return errors.New("an absolute path")
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("a control character %q in the name", c)
		}
	}
	clean := strings.TrimSuffix(name, "/")
	if !filepath.IsLocal(clean) {
		return errors.New("the path leaves its directory")
	}
	if path.Clean(clean) != clean {
		return errors.New("the path is not clean (\".\", \"..\" or \"//\" in it)")
	}
	return nil
}

// prepare extracts f into a temporary file in dir and checks it against
// its installed .so. It returns a Mismatch when the entry does not
// belong, an error when something could not be read or written.
func (s *Store) prepare(dir string, f *zip.File, dist *Dist) (*debugEntry, *Mismatch, error) {
	rel := strings.TrimSuffix(f.Name, ".debug")
	sp, err := filepath.Abs(dist.SitePackages)
	if err != nil {
		return nil, nil, err
	}
	so := filepath.Join(sp, filepath.FromSlash(rel))
	if _, ok := dist.Lookup(rel); !ok {
		return nil, &Mismatch{Entry: f.Name, Reason: MismatchNotInRecord, Want: rel}, nil
	}
	fi, err := os.Stat(so)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchMissing}, nil
		}
		return nil, nil, fmt.Errorf("check %s: %w", f.Name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchNotELF, Got: "not a regular file"}, nil
	}
	info, err := elfinfo.Open(so, elfinfo.Options{})
	if errors.Is(err, saferead.ErrNotRegular) { // replaced since the Stat
		return nil, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchNotELF, Got: "not a regular file"}, nil
	}
	if err != nil {
		if errors.Is(err, elfinfo.ErrNotELF) || errors.Is(err, elfinfo.ErrCorrupt) {
			return nil, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchNotELF, Got: err.Error()}, nil
		}
		return nil, nil, fmt.Errorf("check %s against %s: %w", f.Name, so, err)
	}
	e := &debugEntry{f: f, so: so, info: info}
	if err := extract(dir, f, e); err != nil {
		return e, nil, err
	}
	got, err := elfinfo.ReadBuildIDFile(e.tmp)
	switch {
	case errors.Is(err, elfinfo.ErrNotELF) || errors.Is(err, elfinfo.ErrCorrupt):
		return e, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchNoDebugInfo, Got: err.Error()}, nil
	case errors.Is(err, elfinfo.ErrNoBuildID):
		got = ""
	case err != nil:
		return e, nil, fmt.Errorf("read %s: %w", f.Name, err)
	}
	if l := info.DebugLink; l != nil && l.CRC != e.crc {
		return e, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchCRC,
			Want: fmt.Sprintf("%08x", l.CRC), Got: fmt.Sprintf("%08x", e.crc)}, nil
	}
	if info.BuildID == "" {
		return e, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchNoBuildID}, nil
	}
	if !buildid.Valid(info.BuildID) {
		return e, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchNoBuildID, Want: info.BuildID}, nil
	}
	if got != info.BuildID {
		if got == "" {
			got = "none"
		}
		return e, &Mismatch{Entry: f.Name, SO: so, Reason: MismatchBuildID, Want: info.BuildID, Got: got}, nil
	}
	e.build = info.BuildID
	return e, nil, nil
}

// extract copies f into a new temporary file in dir, computing its CRC-32
// and SHA-256 on the way, and stops at the entry's declared size.
func extract(dir string, f *zip.File, e *debugEntry) (err error) {
	tmp, err := safefs.CreateTemp(dir)
	if err != nil {
		return fmt.Errorf("debug store: %w", err)
	}
	e.tmp = tmp.Name() // checked by name, then renamed by commit
	defer func() {
		if cerr := tmp.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("debug store: %w", cerr)
		}
	}()
	crc := crc32.NewIEEE()
	sum := sha256.New()
	n, err := copyEntry(f, tmp, crc, sum)
	if err != nil {
		return err
	}
	e.size = n
	e.crc = crc.Sum32()
	copy(e.sum[:], sum.Sum(nil))
	return nil
}

// copyEntry copies the zip entry f to out (and to also, which sum it on
// the way), stopping at the entry's declared size, and flushes out. An
// entry that cannot be read, or holds other than its declared size,
// gives an error wrapping ErrNotDebugZip.
func copyEntry(f *zip.File, out interface {
	io.Writer
	Sync() error
}, also ...io.Writer) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, fmt.Errorf("%w: open entry %q: %w", ErrNotDebugZip, f.Name, err)
	}
	defer rc.Close()
	limit := int64(f.UncompressedSize64)
	n, err := io.Copy(io.MultiWriter(append([]io.Writer{out}, also...)...), io.LimitReader(rc, limit+1))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return n, fmt.Errorf("debug store: %w", err)
		}
		return n, fmt.Errorf("%w: entry %q is corrupt or truncated: %w", ErrNotDebugZip, f.Name, err)
	}
	if n != limit {
		return n, fmt.Errorf("%w: entry %q holds %d bytes, its header says %d", ErrNotDebugZip, f.Name, n, limit)
	}
	if err := out.Sync(); err != nil {
		return n, fmt.Errorf("debug store: %w", err)
	}
	return n, nil
}

// replaced is a debug file, bundle or link renamed into place; undo puts
// back what was there before, finish drops the saved copy.
type replaced struct {
	dest, backup string
}

func (r replaced) undo() {
	os.RemoveAll(r.dest)
	if r.backup != "" {
		os.Rename(r.backup, r.dest)
	}
}

func (r replaced) finish() {
	if r.backup != "" {
		os.RemoveAll(r.backup)
	}
}

// committed is one debug file renamed into place (added: it was not
// there already).
type committed struct {
	replaced
	added bool
}

// commit renames tmp to dest. When dest already holds the same bytes,
// tmp is removed and nothing changes; when it holds others they are kept
// aside until finish.
func commit(tmp, dest string, size int64, sum [sha256.Size]byte) (committed, error) {
	c := committed{replaced: replaced{dest: dest}}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return c, fmt.Errorf("debug store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return c, fmt.Errorf("debug store: %w", err)
	}
	if fi, err := os.Lstat(dest); err == nil {
		if fi.Mode().IsRegular() && fi.Size() == size {
			if got, err := fileSHA256(dest); err == nil && got == hex.EncodeToString(sum[:]) {
				os.Remove(tmp)
				return c, nil
			}
		}
		if err := os.Rename(dest, tmp+".old"); err != nil {
			return c, fmt.Errorf("debug store: %w", err)
		}
		c.backup = tmp + ".old"
	}
	// tmp was flushed by extract; Rename flushes the directory.
	if err := safefs.Rename(tmp, dest); err != nil {
		if c.backup != "" {
			os.Rename(c.backup, dest)
		}
		return c, fmt.Errorf("debug store: %w", err)
	}
	c.added = true
	return c, nil
}

func fileSHA256(name string) (string, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return readerSHA256(f)
}

func readerSHA256(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func mismatchSummary(mm []Mismatch) string {
	var parts []string
	for _, m := range mm {
		parts = append(parts, m.String())
	}
	return strings.Join(parts, "; ")
}

// lock takes an exclusive lock on <dir>/.lock, so that two pyattach
// processes do not write the manifest at once.
func lock(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("debug store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("debug store: lock %s: %w", f.Name(), err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// manifest is manifest.json. Debug paths are kept relative to the store,
// so that the store can move; the API sees them absolute.
type manifest struct {
	Version  int       `json:"version"`
	Installs []Install `json:"installs"`
}

const manifestVersion = 1

func sameInstall(a, b Install) bool {
	return NormalizeName(a.Name) == NormalizeName(b.Name) && sameVersion(a.Version, b.Version) &&
		a.SitePackages == b.SitePackages
}

// put records inst, replacing the install of the same distribution in
// the same site-packages. It reports whether the manifest changed.
func (m *manifest) put(inst Install) bool {
	for i, old := range m.Installs {
		if sameInstall(old, inst) {
			a, _ := json.Marshal(old)
			b, _ := json.Marshal(inst)
			if bytes.Equal(a, b) {
				return false
			}
			m.Installs[i] = inst
			return true
		}
	}
	m.Installs = append(m.Installs, inst)
	sort.SliceStable(m.Installs, func(i, j int) bool {
		a, b := m.Installs[i], m.Installs[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.SitePackages < b.SitePackages
	})
	return true
}

func readManifest(dir string) (*manifest, error) {
	name := filepath.Join(dir, ManifestName)
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &manifest{Version: manifestVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("debug store: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("debug store: %w", err)
	}
	if len(b) > maxManifestSize {
		return nil, fmt.Errorf("debug store: %s is larger than %d bytes", name, maxManifestSize)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("debug store: %s: %w", name, err)
	}
	if m.Version != manifestVersion {
		return nil, fmt.Errorf("debug store: %s: version %d, this pyattach reads version %d", name, m.Version, manifestVersion)
	}
	for i := range m.Installs {
		for j := range m.Installs[i].Files {
			f := &m.Installs[i].Files[j]
			if !filepath.IsLocal(f.Debug) {
				return nil, fmt.Errorf("debug store: %s: debug path %q is outside the store", name, f.Debug)
			}
			f.Debug = filepath.Join(dir, f.Debug)
		}
	}
	return &m, nil
}

// writeManifest writes m to manifest.json atomically.
func writeManifest(dir string, m *manifest) error {
	out := manifest{Version: manifestVersion}
	for _, inst := range m.Installs {
		files := make([]File, len(inst.Files))
		for j, f := range inst.Files {
			rel, err := filepath.Rel(dir, f.Debug)
			if err != nil || !filepath.IsLocal(rel) {
				return fmt.Errorf("debug store: %s is outside %s", f.Debug, dir)
			}
			f.Debug = rel
			files[j] = f
		}
		inst.Files = files
		out.Installs = append(out.Installs, inst)
	}
	if out.Installs == nil {
		out.Installs = []Install{}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := safefs.WriteFile(filepath.Join(dir, ManifestName), b, 0o644); err != nil {
		return fmt.Errorf("debug store: write manifest: %w", err)
	}
	return nil
}

// List returns the installs the manifest records, sorted by name and
// version. An empty or missing store lists nothing.
func (s *Store) List() ([]Install, error) {
	dir, err := s.dir()
	if err != nil {
		return nil, err
	}
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	return m.Installs, nil
}

// Remove removes the installs of a distribution: name is its name
// (compared after PEP 503 normalisation) or name==version. The debug
// files of those installs are deleted unless another install refers to
// the same one. It returns the paths deleted; when nothing matches the
// error wraps ErrNoSuchInstall and lists what is installed.
func (s *Store) Remove(name string) ([]string, error) {
	dir, err := s.dir()
	if err != nil {
		return nil, err
	}
	want, version, hasVersion := strings.Cut(name, "==")
	want = NormalizeName(strings.TrimSpace(want))
	version = strings.TrimSpace(version)
	if want == "" {
		return nil, fmt.Errorf("remove: no distribution name in %q", name)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove %s: %w (the store %s is empty)", name, ErrNoSuchInstall, dir)
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	var keep, drop []Install
	for _, inst := range m.Installs {
		if NormalizeName(inst.Name) == want && (!hasVersion || sameVersion(inst.Version, version)) {
			drop = append(drop, inst)
		} else {
			keep = append(keep, inst)
		}
	}
	if len(drop) == 0 {
		var have []string
		for _, inst := range m.Installs {
			have = append(have, inst.Name+"=="+inst.Version)
		}
		if len(have) == 0 {
			return nil, fmt.Errorf("remove %s: %w (the store %s is empty)", name, ErrNoSuchInstall, dir)
		}
		return nil, fmt.Errorf("remove %s: %w (installed: %s)", name, ErrNoSuchInstall, strings.Join(have, ", "))
	}
	used := map[string]bool{}
	for _, inst := range keep {
		for _, f := range inst.Files {
			used[f.Debug] = true
		}
	}
	m.Installs = keep
	if err := writeManifest(dir, m); err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	buildIDDir := buildid.Tree(dir)
	for _, inst := range drop {
		for _, f := range inst.Files {
			if used[f.Debug] {
				continue
			}
			used[f.Debug] = true // once
			if strings.HasPrefix(f.Debug, filepath.Join(dir, "dsym")+string(filepath.Separator)) && f.Verified == VerifiedUUID {
				// A .dSYM bundle (or a link to one), then its UUID
				// directory when empty.
				if err := os.RemoveAll(f.Debug); err != nil {
					errs = append(errs, err)
					continue
				}
				removed = append(removed, f.Debug)
				os.Remove(filepath.Dir(f.Debug))
				continue
			}
			if !strings.HasPrefix(f.Debug, buildIDDir+string(filepath.Separator)) {
				continue
			}
			if err := os.Remove(f.Debug); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
			removed = append(removed, f.Debug)
			os.Remove(filepath.Dir(f.Debug)) // only when empty
		}
	}
	sort.Strings(removed)
	if len(errs) > 0 {
		return removed, fmt.Errorf("remove %s: %w", name, errors.Join(errs...))
	}
	return removed, nil
}
