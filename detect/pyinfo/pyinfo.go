package pyinfo

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"math"
	"path"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/pyversion"
)

// Where Facts.Version came from, most reliable first.
const (
	SourceDebugOffsets = "_Py_DebugOffsets"
	SourcePyVersion    = "Py_Version"
	SourceString       = "version-string"
	SourceFileName     = "file-name"
)

// Facts are the Python facts read from one ELF file.
type Facts struct {
	// Version is the full version ("3.11.2", "3.14.0a1") when the file
	// records it, the major.minor from the file name ("3.11") when only
	// the name tells, and "" when unknown.
	Version string `json:"version"`
	// VersionSource is one of the Source constants, or "".
	VersionSource string `json:"version_source"`
	// ABIFlags are CPython's ABI flags in configure's order: "", "d",
	// "t", "td", "m", "dm". d follows DebugBuild and t follows
	// FreeThreaded; m (pymalloc, before 3.8) comes from the names only.
	ABIFlags string `json:"abiflags"`
	// DebugBuild is true for a Py_DEBUG build.
	DebugBuild bool `json:"debug_build"`
	// FreeThreaded is true for a Py_GIL_DISABLED build (3.13t).
	FreeThreaded bool `json:"free_threaded"`
	// HasRuntime is true when the interpreter itself is defined in this
	// file (a static python or libpython), not just imported from a
	// shared libpython.
	HasRuntime bool `json:"has_runtime"`
	// LibpythonNeeded is the DT_NEEDED entry naming libpython
	// ("libpython3.12.so.1.0"), or "".
	LibpythonNeeded string `json:"libpython_needed,omitempty"`
}

// maxRodataScan bounds the .rodata scan for the version string.
const maxRodataScan = 64 << 20

// Symbols that only the interpreter runtime defines.
var runtimeSymbols = []string{
	"Py_Initialize",
	"Py_InitializeEx",
	"Py_Main",
	"Py_BytesMain",
	"_PyEval_EvalFrameDefault",
	"PyEval_EvalFrameEx",
}

// Symbols that only a Py_DEBUG (Py_REF_DEBUG) build defines. Checked on
// Debian's python3.11d (_Py_NegativeRefcount, _Py_GetRefTotal,
// _Py_RefTotal) against the release builds of 2.7 and 3.6 to 3.13, which
// define none of them; the 3.12+ names are from CPython's headers.
var debugSymbols = []string{
	"_Py_NegativeRefcount",
	"_Py_RefTotal",
	"_Py_GetRefTotal",
	"_Py_GetGlobalRefTotal",
	"_Py_INCREF_IncRefTotal",
}

const (
	symPyRuntime = "_PyRuntime"
	symPyVersion = "Py_Version"
)

// debugCookie starts _Py_DebugOffsets, the first member of _PyRuntime
// since 3.13.
const debugCookie = "xdebugpy"

// Read reads the Python facts of the ELF file behind r. name is the file's
// path or base name; it gives the version and ABI flags when the file
// itself does not. See ReadNamed for files opened through another path.
func Read(r io.ReaderAt, name string) (*Facts, error) {
	return ReadNamed(r, name)
}

// ReadNamed is Read for a file known by several names, such as
// /proc/PID/exe and the path it links to. The first name that parses
// (see ParseName) is used; names that do not, like "exe", are ignored.
// After the names come the file's DT_SONAME, when it names a libpython,
// and the DT_NEEDED libpython's name.
func ReadNamed(r io.ReaderAt, names ...string) (*Facts, error) {
	f, err := elfinfo.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("python facts: %w", err)
	}
	return ReadELF(f, nil, names...)
}

// ReadELF is ReadNamed on an ELF file parsed by elfinfo.NewFile. info
// holds its facts read with elfinfo.Options.Dynamic, or is nil to have
// them read here; passing what the caller has read already spares a
// second reading of the dynamic section.
func ReadELF(f *elf.File, info *elfinfo.Info, names ...string) (*Facts, error) {
	if info == nil {
		var err error
		info, err = elfinfo.ReadELF(f, elfinfo.Options{Dynamic: true})
		if err != nil {
			return nil, fmt.Errorf("python facts: %w", err)
		}
	}
	facts := &Facts{}
	for _, n := range info.Needed {
		if IsLibpython(n) {
			facts.LibpythonNeeded = n
			break
		}
	}
	// A libpython's own DT_SONAME and the libpython it needs speak for
	// files known only by a name like /proc/PID/exe or a renamed copy.
	names = names[:len(names):len(names)]
	if IsLibpython(info.Soname) {
		names = append(names, info.Soname)
	}
	if facts.LibpythonNeeded != "" {
		names = append(names, facts.LibpythonNeeded)
	}
	nameVersion, nameFlags := fromNames(names)

	syms, err := lookupSymbols(f, runtimeSymbols, debugSymbols, []string{symPyRuntime, symPyVersion})
	if err != nil {
		return nil, fmt.Errorf("python facts: %w", err)
	}
	debugSym := false
	for _, n := range runtimeSymbols {
		_, facts.HasRuntime = syms[n]
		if facts.HasRuntime {
			break
		}
	}
	for _, n := range debugSymbols {
		if _, ok := syms[n]; ok {
			debugSym = true
			break
		}
	}

	ftKnown, ft := false, false
	if s, ok := syms[symPyRuntime]; ok {
		if v, free, freeKnown, ok := readDebugOffsets(f, s); ok {
			facts.Version, facts.VersionSource = v, SourceDebugOffsets
			ftKnown, ft = freeKnown, free
		}
	}
	if facts.Version == "" {
		if s, ok := syms[symPyVersion]; ok {
			if v, ok := readPyVersion(f, s); ok {
				facts.Version, facts.VersionSource = v, SourcePyVersion
			}
		}
	}
	if facts.Version == "" && (facts.HasRuntime || nameVersion != "") {
		if v, ok := scanRodata(f, nameVersion, !facts.HasRuntime); ok {
			facts.Version, facts.VersionSource = v, SourceString
		}
	}
	if facts.Version == "" && nameVersion != "" {
		facts.Version, facts.VersionSource = nameVersion, SourceFileName
	}

	// Symbols, when the file has them, decide; the names decide for a
	// file that only links against libpython.
	facts.DebugBuild = debugSym || (!facts.HasRuntime && hasFlag(nameFlags, 'd'))
	if ftKnown {
		facts.FreeThreaded = ft
	} else {
		facts.FreeThreaded = hasFlag(nameFlags, 't')
	}
	var flags []byte
	if facts.FreeThreaded {
		flags = append(flags, 't')
	}
	if facts.DebugBuild {
		flags = append(flags, 'd')
	}
	for _, c := range []byte("mu") {
		if hasFlag(nameFlags, c) {
			flags = append(flags, c)
		}
	}
	facts.ABIFlags = string(flags)
	return facts, nil
}

// fromNames returns the version of the first name that parses and the
// union of the ABI flags of all names with that version.
func fromNames(names []string) (version, flags string) {
	var all []byte
	for _, n := range names {
		v, fl, ok := ParseName(path.Base(n))
		if !ok || (version != "" && v != version) {
			continue
		}
		version = v
		all = append(all, fl...)
	}
	var out []byte
	for i := 0; i < len(pyversion.FlagOrder); i++ {
		if bytes.IndexByte(all, pyversion.FlagOrder[i]) >= 0 {
			out = append(out, pyversion.FlagOrder[i])
		}
	}
	return version, string(out)
}

// lookupSymbols returns the defined symbols among the wanted names. It
// reads .symtab when present and falls back to .dynsym when .symtab is
// missing or holds none of the names (stripped executables that export
// the C API, like Debian's python3.11, keep it in .dynsym).
func lookupSymbols(f *elf.File, wanted ...[]string) (found map[string]elf.Symbol, err error) {
	defer func() {
		if err != nil {
			found = nil
		}
	}()
	defer elfinfo.RecoverCorrupt(&err, "symbol table")
	want := make(map[string]bool)
	for _, w := range wanted {
		for _, n := range w {
			want[n] = true
		}
	}
	for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		found, err = elfinfo.FindSymbols(f, typ, want)
		if errors.Is(err, elf.ErrNoSymbols) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			break
		}
	}
	if found == nil {
		found = map[string]elf.Symbol{}
	}
	return found, nil
}

// symbolBytes reads n bytes of a symbol's contents from the file. It
// reports false when the symbol has no contents in the file (SHT_NOBITS,
// an absolute or out-of-range value).
func symbolBytes(f *elf.File, s elf.Symbol, n uint64) ([]byte, bool) {
	var sec *elf.Section
	off := s.Value
	if s.Section > elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE && int(s.Section) < len(f.Sections) {
		sec = f.Sections[s.Section]
		if f.Type != elf.ET_REL {
			if off < sec.Addr {
				return nil, false
			}
			off -= sec.Addr
		}
	} else {
		for _, c := range f.Sections {
			if c.Flags&elf.SHF_ALLOC != 0 && c.Type != elf.SHT_NOBITS && off >= c.Addr && off-c.Addr < c.Size {
				sec, off = c, off-c.Addr
				break
			}
		}
	}
	if sec == nil || sec.Type == elf.SHT_NOBITS || sec.Size < n || off > sec.Size-n || off > math.MaxInt64 {
		return nil, false
	}
	b := make([]byte, n)
	if _, err := sec.ReadAt(b, int64(off)); err != nil {
		return nil, false
	}
	return b, true
}

// readDebugOffsets reads the start of _Py_DebugOffsets: the cookie, the
// version and, for 3.13 where the layout was checked against CPython's
// pycore_runtime.h and a real libpython3.13, the free_threaded field.
func readDebugOffsets(f *elf.File, s elf.Symbol) (version string, freeThreaded, freeKnown, ok bool) {
	b, ok := symbolBytes(f, s, 24)
	if !ok || string(b[:8]) != debugCookie {
		return "", false, false, false
	}
	version, ok = FormatHexVersion(f.ByteOrder.Uint64(b[8:16]))
	if !ok {
		return "", false, false, false
	}
	if pyversion.MajorMinorOf(version) == "3.13" {
		return version, f.ByteOrder.Uint64(b[16:24]) != 0, true, true
	}
	return version, false, false, true
}

// readPyVersion reads the Py_Version constant, an unsigned long.
func readPyVersion(f *elf.File, s elf.Symbol) (string, bool) {
	size := s.Size
	if size != 4 && size != 8 {
		size = 8
		if f.Class == elf.ELFCLASS32 {
			size = 4
		}
	}
	b, ok := symbolBytes(f, s, size)
	if !ok {
		return "", false
	}
	var v uint64
	if size == 4 {
		v = uint64(f.ByteOrder.Uint32(b))
	} else {
		v = f.ByteOrder.Uint64(b)
	}
	return FormatHexVersion(v)
}

// scanRodata looks for the PY_VERSION string in .rodata.
func scanRodata(f *elf.File, hint string, requireHint bool) (string, bool) {
	sec := f.Section(".rodata")
	if sec == nil || sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_COMPRESSED != 0 {
		return "", false
	}
	size := sec.Size
	if size > maxRodataScan {
		size = maxRodataScan
	}
	cands, _ := scanVersionStrings(io.NewSectionReader(sec, 0, int64(size)), int64(size), 0)
	return pickVersion(cands, hint, requireHint)
}
