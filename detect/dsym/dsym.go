package dsym

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/rootfs"
)

// ErrOutside means a .dSYM bundle's DWARF file is, or is reached through,
// a symbolic link out of the bundle's directory.
var ErrOutside = errors.New("symbolic link out of the .dSYM bundle")

// Via says where an architecture's DWARF was found.
type Via string

// The places, in search order.
const (
	ViaEmbedded Via = "embedded"  // __DWARF in the module itself
	ViaBeside   Via = "beside"    // X.dSYM next to the module
	ViaDebugDir Via = "debug-dir" // X.dSYM in a configured directory
	ViaStore    Via = "store"     // pyattach's store, by UUID
	ViaDebugMap Via = "debug-map" // the object files N_OSO names
	ViaNone     Via = "none"
)

// Rejection is a candidate that exists but is not the module's.
type Rejection struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Found is the answer for one architecture of a module.
type Found struct {
	CPU  string `json:"cpu"`
	UUID string `json:"uuid"`
	Via  Via    `json:"via"`
	// Bundle is the .dSYM directory and DWARF the DWARF file inside it
	// (ViaBeside, ViaDebugDir, ViaStore).
	Bundle string `json:"dsym,omitempty"`
	DWARF  string `json:"dsym_dwarf,omitempty"`
	// Objects are the debug map's object files that exist (ViaDebugMap).
	Objects []string `json:"objects,omitempty"`
	// Rejected lists bundles that were found but did not match.
	Rejected []Rejection `json:"rejected,omitempty"`
}

// Locator holds the search configuration.
type Locator struct {
	// DebugDirs are searched for X.dSYM after the module's directory.
	DebugDirs []string
	// Store is pyattach's store ("" for none).
	Store string
}

// BundleName is the .dSYM bundle's name for a module file name.
func BundleName(module string) string { return filepath.Base(module) + ".dSYM" }

// DWARFPath is the DWARF file inside bundle for a module file name.
func DWARFPath(bundle, module string) string {
	return filepath.Join(bundle, "Contents", "Resources", "DWARF", filepath.Base(module))
}

// StorePath is the bundle for a module with uuid in the store at dir:
// <dir>/dsym/<UUID>/<name>.dSYM. uuid must be machoinfo.ValidUUID (the
// caller checks; an invalid one gives "").
func StorePath(dir, uuid, module string) string {
	if !machoinfo.ValidUUID(uuid) {
		return ""
	}
	return filepath.Join(dir, "dsym", uuid, BundleName(module))
}

// Locate finds, for each architecture of the module at path (its facts
// info), its DWARF.
func (l *Locator) Locate(path string, info *machoinfo.Info) []Found {
	var out []Found
	for _, a := range info.Arches {
		out = append(out, l.locateArch(path, a))
	}
	return out
}

func (l *Locator) locateArch(path string, a machoinfo.Arch) Found {
	f := Found{CPU: a.CPU, UUID: a.UUID, Via: ViaNone}
	if a.DWARF {
		f.Via = ViaEmbedded
		return f
	}
	type cand struct {
		bundle string
		via    Via
	}
	var cands []cand
	cands = append(cands, cand{filepath.Join(filepath.Dir(path), BundleName(path)), ViaBeside})
	for _, d := range l.DebugDirs {
		cands = append(cands, cand{filepath.Join(d, BundleName(path)), ViaDebugDir})
	}
	if l.Store != "" && a.UUID != "" {
		if p := StorePath(l.Store, a.UUID, path); p != "" {
			cands = append(cands, cand{p, ViaStore})
		}
	}
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c.bundle] {
			continue
		}
		seen[c.bundle] = true
		if _, err := os.Lstat(c.bundle); err != nil {
			continue
		}
		dw, err := Check(c.bundle, path, a.CPU, a.UUID)
		if err != nil {
			f.Rejected = append(f.Rejected, Rejection{Path: c.bundle, Reason: err.Error()})
			continue
		}
		f.Via, f.Bundle, f.DWARF = c.via, c.bundle, dw
		return f
	}
	for _, o := range a.DebugMap {
		if st, err := os.Stat(o); err == nil && st.Mode().IsRegular() {
			f.Objects = append(f.Objects, o)
		}
	}
	if len(f.Objects) > 0 {
		f.Via = ViaDebugMap
	}
	return f
}

// MismatchError is a bundle whose DWARF file has another UUID for the
// architecture, or lacks the architecture.
type MismatchError struct {
	CPU, Want, Got string
}

func (e *MismatchError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("no %s slice with a UUID (want %s)", e.CPU, e.Want)
	}
	return fmt.Sprintf("UUID %s (%s), want %s", e.Got, e.CPU, e.Want)
}

// Check proves that bundle is module's .dSYM for architecture cpu: its
// DWARF file lies inside the bundle (no symbolic link out of it,
// ErrOutside), is a Mach-O file, and its cpu slice carries uuid
// (*MismatchError otherwise). It returns the DWARF file's path.
func Check(bundle, module, cpu, uuid string) (string, error) {
	dw := DWARFPath(bundle, module)
	if err := Inside(bundle, dw); err != nil {
		return "", err
	}
	info, err := machoinfo.Open(dw)
	if err != nil {
		return "", err
	}
	a := info.Arch(cpu)
	if a == nil || a.UUID == "" {
		return "", &MismatchError{CPU: cpu, Want: uuid}
	}
	if uuid == "" || a.UUID != uuid {
		return "", &MismatchError{CPU: cpu, Want: uuid, Got: a.UUID}
	}
	return dw, nil
}

// Inside fails with ErrOutside unless p, with its symbolic links
// followed, lies inside dir (itself resolved: a bundle reached through a
// link is judged where it really is).
func Inside(dir, p string) error {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	realP, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	if !rootfs.Under(realP, realDir) || realP == realDir {
		rel := strings.TrimPrefix(p, dir+string(filepath.Separator))
		return fmt.Errorf("%w: %s leads to %s, outside %s", ErrOutside, rel, realP, realDir)
	}
	return nil
}
