package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"github.com/pyattach/pyattach/detect/buildid"
)

// Format is the manifest's format number this package writes and reads.
const Format = 1

// ManifestName is the first entry of every bundle.
const ManifestName = "manifest.json"

// tag is the payload of the leading skippable frame.
const tag = "pyattach-bundle 1\n"

// skippable is the magic of a zstd skippable frame (0x184D2A50, little
// endian): decompressors skip it, pyattach reads it as its magic.
var skippable = []byte{0x50, 0x2a, 0x4d, 0x18}

// HeadSize is how many leading bytes IsBundle needs.
const HeadSize = 8 + len(tag)

// IsBundle reports whether head, the first bytes of a file, starts a
// bundle.
func IsBundle(head []byte) bool {
	if len(head) < HeadSize || !bytes.Equal(head[:4], skippable) {
		return false
	}
	return binary.LittleEndian.Uint32(head[4:8]) == uint32(len(tag)) && string(head[8:HeadSize]) == tag
}

// Limits on what a reader accepts.
const (
	// DefaultMaxSize is the default cap on the sum of the entries'
	// sizes, uncompressed (--max-size).
	DefaultMaxSize = 16 << 30
	// maxManifest bounds manifest.json.
	maxManifest = 64 << 20
	// maxEntries bounds the manifest's entries.
	maxEntries = 1 << 20
	// maxName bounds an entry's name, and maxElem each of its elements.
	maxName, maxElem = 4096, 255
	// maxWindow bounds the zstd window a reader allocates.
	maxWindow = 64 << 20
)

// Entry kinds.
const (
	KindCore         = "core"
	KindModule       = "module"        // a mapped ELF file
	KindDebug        = "debug"         // a module's separate debug file
	KindAltDebug     = "alt-debug"     // a dwz supplementary file
	KindPythonSource = "python-source" // a Python frame's source file
	KindNativeSource = "native-source" // a C source file (--native-sources), src/<its DWARF path, cleaned>
	KindGDBExtension = "gdb-extension" // CPython's libpython.py for the interpreter
	KindWalker       = "walker"        // a file of pyattach's walker
)

// Manifest says what a bundle holds and what could not be packed. Its
// JSON fields are documented in cmd/pyattach/help/json.md.
type Manifest struct {
	Format    int    `json:"format"`
	CreatedBy string `json:"created_by"`
	Target    Target `json:"target"`
	// Entries are the bundle's files, in the order they follow the
	// manifest.
	Entries []Entry `json:"entries"`
	// Missing are the files that were wanted but not packed.
	Missing []Missing `json:"missing"`
}

// Target is the process the core was taken from.
type Target struct {
	PID int `json:"pid,omitempty"`
	// Core is the core file that was packed, as named when packing; ""
	// when pyattach took the core of PID itself.
	Core string `json:"core,omitempty"`
	Exe  string `json:"exe"`
	// Root is where the process's files were read on the packing
	// machine ("" or "/": the host's own).
	Root          string `json:"root,omitempty"`
	Python        string `json:"python,omitempty"`
	ABIFlags      string `json:"abi_flags,omitempty"`
	StoppedMillis *int64 `json:"stopped_ms,omitempty"`
}

// Entry is one file of a bundle.
type Entry struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Path is the file's path as the process saw it (modules, sources),
	// or, for a debug file, its module's.
	Path    string `json:"path,omitempty"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	BuildID string `json:"build_id,omitempty"`
	// Origin is where the file was read on the packing machine.
	Origin string `json:"origin"`
}

// Missing is a file that was wanted but is not in the bundle.
type Missing struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	BuildID string `json:"build_id,omitempty"`
	Reason  string `json:"reason"`
}

// Total is the sum of the entries' sizes.
func (m *Manifest) Total() int64 {
	var n int64
	for _, e := range m.Entries {
		n += e.Size
	}
	return n
}

// ErrNotBundle: the file does not start with a bundle's magic.
var ErrNotBundle = errors.New("not a pyattach bundle")

// ErrHostile: the bundle breaks a rule of the format and is refused.
var ErrHostile = errors.New("refused")

// ErrTooLarge: the bundle is over the size cap.
var ErrTooLarge = errors.New("over the size cap")

// FormatError is a bundle refused: Entry names the entry (or
// "manifest.json"), Msg says what is wrong with it.
type FormatError struct {
	Entry string
	Msg   string
	cap   bool
}

func (e *FormatError) Error() string {
	if e.Entry == "" {
		return "bundle refused: " + e.Msg
	}
	return fmt.Sprintf("bundle refused: entry %q: %s", e.Entry, e.Msg)
}

func (e *FormatError) Is(target error) bool {
	return target == ErrHostile || e.cap && target == ErrTooLarge
}

func refuse(entry, format string, args ...any) error {
	return &FormatError{Entry: entry, Msg: fmt.Sprintf(format, args...)}
}

// CheckName reports whether name may be an entry's name: a clean,
// relative, valid UTF-8 path without control characters, under one of
// the format's top-level names.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case len(name) > maxName:
		return fmt.Errorf("name longer than %d bytes", maxName)
	case !utf8.ValidString(name):
		return errors.New("name is not valid UTF-8")
	case strings.HasPrefix(name, "/"):
		return errors.New("absolute name")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return fmt.Errorf("control character %q in name", r)
		}
	}
	for _, el := range strings.Split(name, "/") {
		switch {
		case el == "..":
			return errors.New("name climbs out with ..")
		case el == "" || el == ".":
			return errors.New("name is not clean (empty or . element)")
		case len(el) > maxElem:
			return fmt.Errorf("name element longer than %d bytes", maxElem)
		}
	}
	if path.Clean(name) != name {
		return errors.New("name is not clean")
	}
	top, rest, _ := strings.Cut(name, "/")
	switch top {
	case "core":
		if rest != "" {
			return errors.New("core must be a file")
		}
	case "root":
		if rest == "" {
			return errors.New("root must be a directory")
		}
	case "debug":
		// Debug files by build-id only: debug/.build-id/xx/<hex>.debug.
		el := strings.Split(rest, "/")
		if len(el) != 3 || buildid.ID(el[1]+strings.TrimSuffix(el[2], ".debug")).Path("debug", ".debug") != name {
			return errors.New("a debug file must be named debug/.build-id/xx/<hex>.debug")
		}
	case "ext":
		if el := strings.Split(rest, "/"); len(el) != 2 || el[0] != "gdb" {
			return errors.New("an extension must be named ext/gdb/<name>")
		}
	case "src":
		if rest == "" {
			return errors.New("src must be a directory")
		}
	case "walker":
		if strings.Contains(rest, "/") {
			return errors.New("a walker file must be named walker/<name>")
		}
	default:
		return fmt.Errorf("unknown top-level name %q", top)
	}
	return nil
}

// check validates a manifest against the format and the cap: every name
// valid and unique, no name below another one's file, sizes and hashes
// well-formed, one core.
func (m *Manifest) check(max int64) error {
	if m.Format != Format {
		return refuse(ManifestName, "format %d, this pyattach reads %d", m.Format, Format)
	}
	if len(m.Entries) > maxEntries {
		return refuse(ManifestName, "%d entries, more than %d", len(m.Entries), maxEntries)
	}
	names := make(map[string]bool, len(m.Entries))
	var total int64
	cores := 0
	for _, e := range m.Entries {
		if err := CheckName(e.Name); err != nil {
			return refuse(e.Name, "%v", err)
		}
		if names[e.Name] {
			return refuse(e.Name, "duplicate name")
		}
		names[e.Name] = true
		if e.Size < 0 {
			return refuse(e.Name, "negative size")
		}
		if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != sha256.Size || strings.ToLower(e.SHA256) != e.SHA256 {
			return refuse(e.Name, "sha256 is not 64 lowercase hex digits")
		}
		if e.Kind == KindCore || e.Name == "core" {
			if e.Kind != KindCore || e.Name != "core" {
				return refuse(e.Name, "only the entry named core is the core")
			}
			cores++
		}
		total += e.Size
		if total > max || total < 0 {
			return &FormatError{Entry: e.Name, Msg: fmt.Sprintf("the entries add up to more than the cap of %d bytes", max), cap: true}
		}
	}
	if cores != 1 {
		return refuse(ManifestName, "%d core entries, want one", cores)
	}
	for n := range names {
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			if names[d] {
				return refuse(n, "lies below the file %q", d)
			}
		}
	}
	return nil
}

// Writer writes a bundle: the manifest first, then each entry in the
// manifest's order.
type Writer struct {
	zw   *zstd.Encoder
	tw   *tar.Writer
	m    *Manifest
	next int
}

// NewWriter starts a bundle on w with manifest m, whose entries (names,
// sizes, sha256) must all be known: Add then streams each one's content
// in that order. max caps the entries' total size.
func NewWriter(w io.Writer, m *Manifest, max int64) (*Writer, error) {
	m.Format = Format
	if m.Missing == nil {
		m.Missing = []Missing{}
	}
	if err := m.check(max); err != nil {
		return nil, err
	}
	head := append(append([]byte(nil), skippable...), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(head[4:], uint32(len(tag)))
	if _, err := w.Write(append(head, tag...)); err != nil {
		return nil, err
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(8<<20))
	if err != nil {
		return nil, err
	}
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	mj = append(mj, '\n')
	bw := &Writer{zw: zw, tw: tar.NewWriter(zw), m: m}
	if err := bw.header(ManifestName, int64(len(mj))); err != nil {
		return nil, err
	}
	if _, err := bw.tw.Write(mj); err != nil {
		return nil, err
	}
	return bw, nil
}

func (w *Writer) header(name string, size int64) error {
	return w.tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644,
		Format: tar.FormatPAX,
	})
}

// Add writes the next entry's content, read from r: exactly its size,
// with its sha256, else an error (the file changed since it was hashed).
func (w *Writer) Add(r io.Reader) error {
	if w.next >= len(w.m.Entries) {
		return errors.New("bundle: more entries than the manifest lists")
	}
	e := w.m.Entries[w.next]
	w.next++
	if err := w.header(e.Name, e.Size); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(w.tw, io.TeeReader(io.LimitReader(r, e.Size), h))
	if err != nil {
		return fmt.Errorf("%s: %w", e.Origin, err)
	}
	if n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
		return fmt.Errorf("%s changed while it was packed", e.Origin)
	}
	return nil
}

// Close ends the archive and the stream, after checking every entry was
// added.
func (w *Writer) Close() error {
	if w.next != len(w.m.Entries) {
		return fmt.Errorf("bundle: %d of %d entries added", w.next, len(w.m.Entries))
	}
	if err := w.tw.Close(); err != nil {
		return err
	}
	return w.zw.Close()
}

// reader opens the stream: the magic, the zstd decoder, the tar reader
// and the manifest.
type reader struct {
	zr *zstd.Decoder
	tr *tar.Reader
	m  *Manifest
}

func open(r io.Reader, max int64) (*reader, error) {
	head := make([]byte, HeadSize)
	if _, err := io.ReadFull(r, head); err != nil || !IsBundle(head) {
		return nil, ErrNotBundle
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(uint64(max)+maxManifest+1<<20))
	if err != nil {
		return nil, err
	}
	rd := &reader{zr: zr, tr: tar.NewReader(zr)}
	hdr, err := rd.tr.Next()
	if err != nil {
		zr.Close()
		return nil, refuse("", "no manifest: %v", err)
	}
	if hdr.Name != ManifestName || hdr.Typeflag != tar.TypeReg {
		zr.Close()
		return nil, refuse(hdr.Name, "the first entry must be the regular file %s", ManifestName)
	}
	if hdr.Size < 0 || hdr.Size > maxManifest {
		zr.Close()
		return nil, refuse(ManifestName, "size %d, more than %d", hdr.Size, maxManifest)
	}
	mj, err := io.ReadAll(io.LimitReader(rd.tr, hdr.Size+1))
	if err != nil || int64(len(mj)) != hdr.Size {
		zr.Close()
		return nil, refuse(ManifestName, "its data does not match its header's size %d", hdr.Size)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(mj))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		zr.Close()
		return nil, refuse(ManifestName, "not a manifest: %v", err)
	}
	if err := m.check(max); err != nil {
		zr.Close()
		return nil, err
	}
	rd.m = &m
	return rd, nil
}

// ReadManifest reads the manifest only (the first entry), checked.
func ReadManifest(r io.Reader, max int64) (*Manifest, error) {
	rd, err := open(r, max)
	if err != nil {
		return nil, err
	}
	rd.zr.Close()
	return rd.m, nil
}

// walk reads every entry after the manifest, in the manifest's order,
// checking its header against the manifest, and hands its content to
// fn, which must read it whole; the sha256 is checked after fn returns.
func walk(r io.Reader, max int64, fn func(e Entry, data io.Reader) error) (*Manifest, error) {
	rd, err := open(r, max)
	if err != nil {
		return nil, err
	}
	defer rd.zr.Close()
	for _, e := range rd.m.Entries {
		hdr, err := rd.tr.Next()
		if err != nil {
			return nil, refuse(e.Name, "missing from the archive (%v)", err)
		}
		if hdr.Name != e.Name {
			if CheckName(hdr.Name) != nil {
				return nil, refuse(hdr.Name, "%v", CheckName(hdr.Name))
			}
			return nil, refuse(hdr.Name, "not the manifest's next entry (%q)", e.Name)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, refuse(hdr.Name, "a %s, not a regular file", typeName(hdr.Typeflag))
		}
		if hdr.Linkname != "" {
			return nil, refuse(hdr.Name, "names a link target")
		}
		if hdr.Size != e.Size {
			return nil, refuse(hdr.Name, "its header says %d bytes, the manifest %d", hdr.Size, e.Size)
		}
		h := sha256.New()
		cr := &countReader{r: io.TeeReader(rd.tr, h)}
		if err := fn(e, cr); err != nil {
			return nil, err
		}
		if _, err := io.Copy(io.Discard, cr); err != nil {
			return nil, refuse(hdr.Name, "its data is shorter than its size %d (%v)", e.Size, err)
		}
		if cr.n != e.Size {
			return nil, refuse(hdr.Name, "%d bytes of data, its size says %d", cr.n, e.Size)
		}
		if hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
			return nil, refuse(hdr.Name, "its content does not match the manifest's sha256")
		}
	}
	hdr, err := rd.tr.Next()
	switch {
	case err == io.EOF:
	case err != nil:
		return nil, refuse("", "after the last entry: %v", err)
	default:
		return nil, refuse(hdr.Name, "not in the manifest")
	}
	return rd.m, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("data cut short: %w", err)
	}
	return n, err
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeDir:
		return "directory"
	case tar.TypeRegA:
		return "old-style regular file"
	}
	return fmt.Sprintf("entry of type %q", t)
}

// Verify reads the whole bundle and checks it, writing nothing.
func Verify(r io.Reader, max int64) (*Manifest, error) {
	return walk(r, max, func(Entry, io.Reader) error { return nil })
}

// writeManifest writes m as the indented JSON a bundle holds.
func writeManifest(w io.Writer, m *Manifest) error {
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(mj, '\n'))
	return err
}
