package symbols

import (
	"archive/zip"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pyattach/pyattach/detect/dsym"
	"github.com/pyattach/pyattach/detect/machoinfo"
)

// A macosx debug-symbols zip (dd-trace-py's macOS wheels) holds, for each
// native extension, the .dSYM bundle dsymutil made of it:
// <path inside the wheel>/<name>.so.dSYM/Contents/Info.plist and
// .../Contents/Resources/DWARF/<name>.so. Install puts each bundle in
// the store keyed by UUID, <Dir>/dsym/<UUID>/<name>.so.dSYM
// (dsym.StorePath), one per architecture of the .so (a universal
// bundle's other architectures are links to the first, inside the
// store), after checking that the DWARF file's slice of every
// architecture carries the installed .so's UUID.

// How a bundle was proved to belong to its .so, and why it was not.
const (
	// VerifiedUUID: every architecture of the .so has a slice with its
	// LC_UUID in the bundle's DWARF file.
	VerifiedUUID = "uuid"
	// MismatchUUID: an architecture's UUIDs differ, or the DWARF file
	// lacks the architecture.
	MismatchUUID = "uuid"
	// MismatchNotMachO: the installed .so is not a readable Mach-O file.
	MismatchNotMachO = "not-macho"
	// MismatchNoDWARFFile: the bundle has no
	// Contents/Resources/DWARF/<name>.so, or it is not Mach-O.
	MismatchNoDWARFFile = "no-dwarf-file"
)

// bundleOf splits a zip entry name at its first component ending in
// .dSYM: the bundle's path in the zip and the entry's path inside it.
func bundleOf(name string) (bundle, inner string, ok bool) {
	parts := strings.Split(strings.TrimSuffix(name, "/"), "/")
	for i, p := range parts {
		if strings.HasSuffix(p, ".dSYM") && p != ".dSYM" {
			return strings.Join(parts[:i+1], "/"), strings.Join(parts[i+1:], "/"), true
		}
	}
	return "", "", false
}

// hasBundles reports whether a zip holds .dSYM bundles (a macosx zip).
func hasBundles(files []*zip.File) bool {
	for _, f := range files {
		if _, _, ok := bundleOf(f.Name); ok {
			return true
		}
	}
	return false
}

// bundleEntry is a bundle to install, once extracted and checked.
type bundleEntry struct {
	rel   string // in the zip: <path>/<name>.so.dSYM
	so    string
	tmp   string // the temporary directory holding the extracted bundle
	dir   string // tmp/<name>.so.dSYM
	uuids []string
	size  int64
}

// installBundles is Install for a zip of .dSYM bundles. The zip's
// entries pass the same checks as a Linux zip's (checkEntries: no
// absolute path, "..", backslash, control character, link or device
// entry, repeated name, or size past the bounds); a bundle is extracted
// into a new temporary directory of the store, which no one else can
// have put a link in, checked, then renamed into place.
func (s *Store) installBundles(dir, zipPath string, zf io.ReaderAt, size int64, zr *zip.Reader, dist *Dist, rep *Report) (*Report, error) {
	inBundle := func(n string) bool { _, inner, ok := bundleOf(n); return ok && inner != "" }
	entries, err := checkEntries(zipPath, zr.File, rep, inBundle, "*.dSYM bundle")
	if err != nil {
		return nil, err
	}
	groups := map[string][]*zip.File{}
	for _, f := range entries {
		b, _, _ := bundleOf(f.Name)
		groups[b] = append(groups[b], f)
	}
	var rels []string
	for b := range groups {
		rels = append(rels, b)
	}
	sort.Strings(rels)
	dsymDir := filepath.Join(dir, "dsym")
	return s.install(dir, zipPath, zf, size, dsymDir, dist, rep, len(rels), func(i int) (staged, *Mismatch, error) {
		return s.prepareBundle(dsymDir, rels[i], groups[rels[i]], dist)
	})
}

// discard removes the temporary directory, if any.
func (b *bundleEntry) discard() {
	if b != nil && b.tmp != "" {
		os.RemoveAll(b.tmp)
	}
}

// place moves the bundle to the store's place for its first UUID and
// links the places of its other architectures' UUIDs to it.
func (b *bundleEntry) place(dir string, inst *Install, rep *Report) ([]placed, error) {
	var done []placed
	first := ""
	for _, id := range b.uuids {
		dest := dsym.StorePath(dir, id, b.so)
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return done, fmt.Errorf("debug store: %w", err)
		}
		var m replaced
		var err error
		if first == "" {
			m, err = moveDir(b.dir, dest)
			first = dest
		} else {
			// Another architecture of the same universal bundle.
			link, _ := filepath.Rel(filepath.Dir(dest), first)
			m, err = placeLink(link, dest)
		}
		if err != nil {
			return done, err
		}
		done = append(done, m)
		rep.Added = append(rep.Added, dest)
		inst.Files = append(inst.Files, File{Entry: b.rel, SO: b.so, BuildID: id, Debug: dest, Verified: VerifiedUUID, Size: b.size})
	}
	return done, nil
}

// prepareBundle checks the bundle rel (its entries files) against its
// installed .so, extracting it into a new temporary directory under
// dsymDir.
func (s *Store) prepareBundle(dsymDir, rel string, files []*zip.File, dist *Dist) (*bundleEntry, *Mismatch, error) {
	soRel := strings.TrimSuffix(rel, ".dSYM")
	sp, err := filepath.Abs(dist.SitePackages)
	if err != nil {
		return nil, nil, err
	}
	so := filepath.Join(sp, filepath.FromSlash(soRel))
	if _, ok := dist.Lookup(soRel); !ok {
		return nil, &Mismatch{Entry: rel, Reason: MismatchNotInRecord, Want: soRel}, nil
	}
	if _, err := os.Stat(so); errors.Is(err, fs.ErrNotExist) {
		return nil, &Mismatch{Entry: rel, SO: so, Reason: MismatchMissing}, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("check %s: %w", rel, err)
	}
	info, err := machoinfo.Open(so)
	if err != nil {
		return nil, &Mismatch{Entry: rel, SO: so, Reason: MismatchNotMachO, Got: err.Error()}, nil
	}
	dwInner := "Contents/Resources/DWARF/" + path.Base(soRel)
	hasDWARF := false
	for _, f := range files {
		if _, inner, _ := bundleOf(f.Name); inner == dwInner {
			hasDWARF = true
		}
	}
	if !hasDWARF {
		return nil, &Mismatch{Entry: rel, SO: so, Reason: MismatchNoDWARFFile, Want: dwInner}, nil
	}
	tmp, err := os.MkdirTemp(dsymDir, ".tmp-")
	if err != nil {
		return nil, nil, fmt.Errorf("debug store: %w", err)
	}
	b := &bundleEntry{rel: rel, so: so, tmp: tmp, dir: filepath.Join(tmp, path.Base(rel))}
	for _, f := range files {
		_, inner, _ := bundleOf(f.Name)
		n, err := extractTo(f, filepath.Join(b.dir, filepath.FromSlash(inner)))
		if err != nil {
			return b, nil, err
		}
		b.size += n
	}
	dw, err := machoinfo.Open(dsym.DWARFPath(b.dir, so))
	if err != nil {
		return b, &Mismatch{Entry: rel, SO: so, Reason: MismatchNoDWARFFile, Got: err.Error()}, nil
	}
	for _, a := range info.Arches {
		if a.UUID == "" {
			return b, &Mismatch{Entry: rel, SO: so, Reason: MismatchNoBuildID}, nil
		}
		d := dw.Arch(a.CPU)
		if d == nil || d.UUID != a.UUID {
			got := "no " + a.CPU + " slice"
			if d != nil {
				got = d.UUID
			}
			return b, &Mismatch{Entry: rel, SO: so, Reason: MismatchUUID, Want: a.UUID + " (" + a.CPU + ")", Got: got}, nil
		}
		b.uuids = append(b.uuids, a.UUID)
	}
	return b, nil, nil
}

// extractTo writes the zip entry f to the new file dest (its directories
// made), stopping at the entry's declared size, and flushes it.
func extractTo(f *zip.File, dest string) (n int64, err error) {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return 0, fmt.Errorf("debug store: %w", err)
	}
	out, err := os.OpenFile(dest, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("debug store: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("debug store: %w", cerr)
		}
	}()
	return copyEntry(f, out)
}

// aside moves an existing dest out of the way, to a fresh name beside it.
func aside(dest string) (string, error) {
	if _, err := os.Lstat(dest); err != nil {
		return "", nil
	}
	var r [6]byte
	rand.Read(r[:])
	backup := dest + ".old-" + hex.EncodeToString(r[:])
	if err := os.Rename(dest, backup); err != nil {
		return "", fmt.Errorf("debug store: %w", err)
	}
	return backup, nil
}

// moveDir renames the extracted bundle src to dest, keeping what dest
// held aside until finish.
func moveDir(src, dest string) (replaced, error) {
	return replace(dest, func() error { return os.Rename(src, dest) })
}

// placeLink makes dest a symbolic link to target (relative, inside the
// store), keeping what dest held aside until finish.
func placeLink(target, dest string) (replaced, error) {
	return replace(dest, func() error { return os.Symlink(target, dest) })
}

// replace puts something at dest with put, keeping what dest held aside
// until finish, and back in place when put fails.
func replace(dest string, put func() error) (replaced, error) {
	backup, err := aside(dest)
	if err != nil {
		return replaced{}, err
	}
	if err := put(); err != nil {
		if backup != "" {
			os.Rename(backup, dest)
		}
		return replaced{}, fmt.Errorf("debug store: %w", err)
	}
	return replaced{dest: dest, backup: backup}, nil
}
