package bundle

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/bundle/archive"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Opened is a bundle unpacked into pyattach's cache.
type Opened struct {
	// Bundle is the bundle file as the user named it.
	Bundle string
	// Dir is the unpacked directory, named by the bundle's sha256.
	Dir string
	// Core is the unpacked core; Root stands for the process's "/";
	// DebugDir holds the debug files by build-id.
	Core, Root, DebugDir string
	// GDBExtension is the packed CPython gdb extension ("" if none):
	// code from the packing machine, loaded only when the user trusts
	// the bundle.
	GDBExtension string
	Manifest     *archive.Manifest
}

// IsBundle reports whether the file name starts with a bundle's magic
// (false for anything unreadable, a directory, a FIFO).
func IsBundle(name string) bool {
	f, err := saferead.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, archive.HeadSize)
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	return archive.IsBundle(head)
}

// ReadManifest reads and checks a bundle's manifest only.
func ReadManifest(name string, max int64) (*archive.Manifest, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := archive.ReadManifest(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// Open unpacks the bundle name into cacheDir (a private directory of
// pyattach's) once, as cacheDir/<sha256 of the bundle>, and returns
// where its files are. A bundle already unpacked is reused. Unpacking
// checks the whole bundle first (archive.Verify) and writes nothing for a
// refused one; it writes into a temporary directory renamed into place
// when complete, so that the cache never holds half a bundle.
func Open(name, cacheDir string, max int64) (*Opened, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dir := filepath.Join(cacheDir, hex.EncodeToString(h.Sum(nil)))
	if m, err := loadManifest(dir); err == nil {
		return opened(name, dir, m), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if _, err := archive.Verify(f, max); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var rb [8]byte
	rand.Read(rb[:])
	tmp := filepath.Join(cacheDir, safefs.TempPrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rb[:]))
	m, err := archive.Extract(f, tmp, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, d := range []string{"root", "debug"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	sonameLinks(tmp, m)
	loaderLinks(tmp, m)
	sourceDirs(tmp, m)
	if err := safefs.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		// Another pyattach unpacked the same bundle meanwhile.
		if m2, err2 := loadManifest(dir); err2 == nil {
			return opened(name, dir, m2), nil
		}
		return nil, fmt.Errorf("unpack %s: %w", name, err)
	}
	return opened(name, dir, m), nil
}

func loadManifest(dir string) (*archive.Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, archive.ManifestName))
	if err != nil {
		return nil, err
	}
	var m archive.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m.Format != archive.Format {
		return nil, errors.New("another format")
	}
	return &m, nil
}

func opened(name, dir string, m *archive.Manifest) *Opened {
	o := &Opened{
		Bundle: name, Dir: dir, Manifest: m,
		Core:     filepath.Join(dir, "core"),
		Root:     filepath.Join(dir, "root"),
		DebugDir: filepath.Join(dir, "debug"),
	}
	for _, e := range m.Entries {
		if e.Kind == archive.KindGDBExtension {
			o.GDBExtension = filepath.Join(dir, e.Name)
		}
	}
	return o
}

// LibDirs are the unpacked directories holding the bundle's modules, in
// the manifest's order: where a debugger finds a library by file name
// when the loader recorded it by another path (/lib for /usr/lib).
func (o *Opened) LibDirs() []string {
	var dirs []string
	seen := map[string]bool{}
	for _, e := range o.Manifest.Entries {
		if e.Kind != archive.KindModule {
			continue
		}
		d := filepath.Dir(filepath.Join(o.Dir, e.Name))
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// sonameLinks gives each unpacked library its DT_SONAME too, as a hard
// link beside it: the loader records a library by the name it opened
// (libz.so.1), the core maps the file that name led to (libz.so.1.3.1),
// and a debugger looks the former up by file name. The links are made
// in pyattach's own new directory, to files it just wrote.
func sonameLinks(dir string, m *archive.Manifest) {
	for _, e := range m.Entries {
		if e.Kind != archive.KindModule {
			continue
		}
		file := filepath.Join(dir, e.Name)
		info, err := elfinfo.Open(file, elfinfo.Options{Dynamic: true})
		if err != nil || info.Soname == "" || info.Soname == filepath.Base(file) {
			continue
		}
		if archive.CheckName(filepath.Join(filepath.Dir(e.Name), info.Soname)) != nil || filepath.Base(info.Soname) != info.Soname {
			continue
		}
		link := filepath.Join(filepath.Dir(file), info.Soname)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		os.Link(file, link)
	}
}

// loaderLinks gives each unpacked module the path the dynamic loader
// recorded for it in the core's memory (its link_map l_name) too, as a
// hard link under root/: the core maps /usr/lib/x/libc.so.6, or a
// chroot's /srv/c/usr/lib/x/libc.so.6, where the loader named
// /lib/x/libc.so.6, and lldb reads a core's libraries by the latter
// (under the sysroot pyattach gives it). A path already unpacked keeps
// its file. Only pyattach's own new directory is written.
func loaderLinks(dir string, m *archive.Manifest) {
	info, err := core.Open(filepath.Join(dir, "core"))
	if err != nil {
		return
	}
	mods := map[string]bool{}
	for _, e := range m.Entries {
		if e.Kind == archive.KindModule {
			mods[e.Name] = true
		}
	}
	for _, l := range info.Loaded {
		if !path.IsAbs(l.Name) || l.Path == "" {
			continue
		}
		from, to := path.Join("root", l.Path), path.Join("root", l.Name)
		// l.Name is the core's: "/../x" must not lead out of root/.
		if from == to || !mods[from] || !strings.HasPrefix(to, "root/") || archive.CheckName(to) != nil {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(to))
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if os.MkdirAll(filepath.Dir(dst), 0o755) != nil {
			continue
		}
		os.Link(filepath.Join(dir, filepath.FromSlash(from)), dst)
	}
}

// sourceDirs makes, under src/, the directories a native source's DWARF
// path steps back out of with "..": a debugger joins the unit's
// directory (.../build-static) and the file's name (../Modules/x.c)
// without cleaning them, and the system resolves ".." only in a
// directory that exists. Only pyattach's own new directory is written,
// and nothing above src/.
func sourceDirs(dir string, m *archive.Manifest) {
	for _, e := range m.Entries {
		if e.Kind != archive.KindNativeSource || e.Name != NativeSourceName(e.Path) {
			continue
		}
		comps := strings.Split(e.Path[1:], "/")
		var stack []string
		for _, c := range comps[:len(comps)-1] {
			switch c {
			case "", ".":
			case "..":
				if len(stack) == 0 {
					continue
				}
				if d := "src/" + strings.Join(stack, "/"); archive.CheckName(d) == nil {
					os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755)
				}
				stack = stack[:len(stack)-1]
			default:
				stack = append(stack, c)
			}
		}
	}
}

// SourceRules map the top directories of the native sources' DWARF
// paths (/build) onto the unpacked src/ (gdb's substitute-path, lldb's
// target.source-map). An entry whose name is not its path's (a bundle
// not written by pyattach) gives none.
func (o *Opened) SourceRules() [][2]string {
	var rules [][2]string
	seen := map[string]bool{}
	for _, e := range o.Manifest.Entries {
		if e.Kind != archive.KindNativeSource || e.Name != NativeSourceName(e.Path) {
			continue
		}
		top, _, _ := strings.Cut(path.Clean(e.Path)[1:], "/")
		if top == "" || seen[top] || archive.CheckName("src/"+top) != nil {
			continue
		}
		seen[top] = true
		rules = append(rules, [2]string{"/" + top, filepath.Join(o.Dir, "src", top)})
	}
	return rules
}
