package debugfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

const src = `int work(int x) { int y = x * 3; return y + 1; }
int main(int argc, char **argv) { return work(argc); }
`

// build compiles src into dir/name with the flags.
func build(t testing.TB, dir, name string, flags ...string) string {
	t.Helper()
	return testenv.CC(t, dir, name, src, flags...)
}

// split moves bin's DWARF into debug, strips bin and links it to debug.
func split(t testing.TB, bin, debug string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(debug), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "", "objcopy", "--only-keep-debug", bin, debug)
	testenv.Run(t, "", "objcopy", "--strip-debug", "--strip-unneeded", bin)
	testenv.Run(t, "", "objcopy", "--add-gnu-debuglink="+debug, bin)
}

func buildID(t testing.TB, p string) string {
	t.Helper()
	id, err := elfinfo.ReadBuildIDFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func locate(t *testing.T, l *Locator, m Module) Found {
	t.Helper()
	f, err := l.Locate(m)
	if err != nil {
		t.Fatalf("Locate(%s): %v", m.Path, err)
	}
	return f
}

func TestEmbeddedAndKinds(t *testing.T) {
	dir := t.TempDir()
	l := &Locator{DebugDirs: []string{filepath.Join(dir, "none")}}
	for _, tc := range []struct {
		flags []string
		via   Via
		kind  Kind
	}{
		{[]string{"-g", "-O2"}, ViaEmbedded, KindDWARF},
		{[]string{"-g1", "-O2"}, ViaEmbedded, KindLineTables},
		{[]string{"-O2"}, ViaNone, KindSymtab},
		{[]string{"-O2", "-s"}, ViaNone, KindNone},
	} {
		name := strings.Join(tc.flags, "")
		bin := build(t, dir, name, tc.flags...)
		f := locate(t, l, Module{Path: bin})
		if f.Via != tc.via || f.Kind != tc.kind {
			t.Errorf("%v: via %s kind %s, want %s %s", tc.flags, f.Via, f.Kind, tc.via, tc.kind)
		}
		if tc.via == ViaEmbedded && f.Path != bin {
			t.Errorf("%v: path %s", tc.flags, f.Path)
		}
	}
}

func TestBuildIDDir(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, "prog", "-g", "-O1")
	id := buildID(t, bin)
	debugDir := filepath.Join(dir, "debug")
	dbg := filepath.Join(debugDir, ".build-id", id[:2], id[2:]+".debug")
	split(t, bin, dbg)
	// Move the debuglink target away so only the build-id can find it.
	l := &Locator{DebugDirs: []string{filepath.Join(dir, "empty"), debugDir}}
	f := locate(t, l, Module{Path: bin})
	if f.Via != ViaBuildID || f.Path != dbg || f.Kind != KindDWARF {
		t.Fatalf("got %+v, want build-id %s", f, dbg)
	}
	if f.Producer == nil || f.Producer.OLevel != "1" {
		t.Errorf("producer %+v", f.Producer)
	}

	// A wrong file at rest.debug is rejected; rest.1.debug is right.
	other := build(t, dir, "other", "-g", "-O3")
	data, _ := os.ReadFile(dbg)
	os.Rename(dbg, strings.TrimSuffix(dbg, ".debug")+".1.debug")
	odata, _ := os.ReadFile(other)
	os.WriteFile(dbg, odata, 0o644)
	f = locate(t, l, Module{Path: bin})
	if f.Via != ViaBuildID || !strings.HasSuffix(f.Path, ".1.debug") || len(f.Rejected) != 1 || !strings.Contains(f.Rejected[0].Reason, "build-id") {
		t.Fatalf("got %+v", f)
	}
	_ = data
}

func TestDebugLinkPlaces(t *testing.T) {
	for _, place := range []string{"objdir", "dotdebug", "debugdir"} {
		t.Run(place, func(t *testing.T) {
			dir := t.TempDir()
			bindir := filepath.Join(dir, "bin")
			os.MkdirAll(bindir, 0o755)
			bin := build(t, bindir, "prog", "-g")
			debugDir := filepath.Join(dir, "debug")
			var dbg string
			switch place {
			case "objdir":
				dbg = filepath.Join(bindir, "prog.debug")
			case "dotdebug":
				dbg = filepath.Join(bindir, ".debug", "prog.debug")
			case "debugdir":
				dbg = filepath.Join(debugDir, bindir, "prog.debug")
			}
			tmp := filepath.Join(dir, "prog.debug")
			split(t, bin, tmp)
			os.MkdirAll(filepath.Dir(dbg), 0o755)
			if err := os.Rename(tmp, dbg); err != nil {
				t.Fatal(err)
			}
			l := &Locator{DebugDirs: []string{debugDir}}
			f := locate(t, l, Module{Path: bin})
			if f.Via != ViaDebugLink || f.Path != dbg || f.Kind != KindDWARF {
				t.Fatalf("got %+v, want debuglink %s", f, dbg)
			}
		})
	}
}

func TestDebugLinkCRCMismatch(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, "prog", "-g")
	dbg := filepath.Join(dir, "prog.debug")
	split(t, bin, dbg)
	// Rewrite the debug file: same name, same build-id, other bytes.
	data, err := os.ReadFile(dbg)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, 0)
	os.WriteFile(dbg, data, 0o644)
	l := &Locator{DebugDirs: []string{filepath.Join(dir, "none")}}
	f := locate(t, l, Module{Path: bin})
	if f.Via != ViaNone || len(f.Rejected) != 1 || !strings.Contains(f.Rejected[0].Reason, "CRC-32") {
		t.Fatalf("got %+v, want a CRC rejection", f)
	}
}

// A module reached through a symlink (or a venv copy) is retried through
// its real path: the debug file sits beside the original.
func TestDebugLinkThroughSymlinkAndCopy(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.MkdirAll(real, 0o755)
	bin := build(t, real, "prog", "-g")
	split(t, bin, filepath.Join(real, "prog.debug"))
	link := filepath.Join(dir, "link")
	os.MkdirAll(link, 0o755)
	os.Symlink(bin, filepath.Join(link, "prog"))
	l := &Locator{DebugDirs: []string{filepath.Join(dir, "none")}}
	f := locate(t, l, Module{Path: filepath.Join(link, "prog")})
	if f.Via != ViaDebugLink || f.Path != filepath.Join(real, "prog.debug") {
		t.Fatalf("symlink: got %+v", f)
	}
	copyDir := filepath.Join(dir, "venv", "bin")
	os.MkdirAll(copyDir, 0o755)
	data, _ := os.ReadFile(bin)
	os.WriteFile(filepath.Join(copyDir, "python"), data, 0o755)
	f = locate(t, l, Module{Path: filepath.Join(copyDir, "python"), Also: []string{bin}})
	if f.Via != ViaDebugLink || f.Path != filepath.Join(real, "prog.debug") {
		t.Fatalf("copy: got %+v", f)
	}
}

// A container's debug directory is searched under its root first, and
// paths are the process's.
func TestContainerRoot(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	os.MkdirAll(filepath.Join(root, "app"), 0o755)
	bin := build(t, filepath.Join(root, "app"), "prog", "-g")
	id := buildID(t, bin)
	dbg := filepath.Join(root, "usr", "lib", "debug", ".build-id", id[:2], id[2:]+".debug")
	split(t, bin, dbg)
	l := &Locator{DebugDirs: []string{"/usr/lib/debug"}}
	f := locate(t, l, Module{Path: "/app/prog", Root: root})
	if f.Via != ViaBuildID || f.Path != dbg {
		t.Fatalf("got %+v", f)
	}
}

// TestSecurityContainerLinkOut: the container's /usr/lib/debug is an
// absolute link to a directory outside its root (standing for the
// host's /etc) that holds a debug file with the module's build-id. It
// is not used: the link is followed inside the root, where nothing is.
func TestSecurityContainerLinkOut(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside := filepath.Join(dir, "host-etc")
	os.MkdirAll(filepath.Join(root, "app"), 0o755)
	os.MkdirAll(filepath.Join(root, "usr", "lib"), 0o755)
	bin := build(t, filepath.Join(root, "app"), "prog", "-g")
	id := buildID(t, bin)
	planted := filepath.Join(outside, ".build-id", id[:2], id[2:]+".debug")
	split(t, bin, planted)
	if err := os.Symlink(outside, filepath.Join(root, "usr", "lib", "debug")); err != nil {
		t.Fatal(err)
	}
	// The control: the lexical join of root and the debug path names the
	// planted file.
	if _, err := os.Stat(filepath.Join(root, "usr/lib/debug/.build-id", id[:2], id[2:]+".debug")); err != nil {
		t.Fatalf("control: %v; the test proves nothing", err)
	}
	l := &Locator{DebugDirs: []string{"/usr/lib/debug"}}
	f, _ := l.Locate(Module{Path: "/app/prog", Root: root})
	if f.Path == planted || strings.HasPrefix(f.Path, filepath.Join(root, "usr", "lib", "debug")) {
		t.Fatalf("the debug file was read through a link out of the root: %+v", f)
	}
	// The same file at the link's target inside the root is found.
	inside := filepath.Join(root, outside, ".build-id", id[:2], id[2:]+".debug")
	os.MkdirAll(filepath.Dir(inside), 0o755)
	b, _ := os.ReadFile(planted)
	os.WriteFile(inside, b, 0o644)
	if f := locate(t, l, Module{Path: "/app/prog", Root: root}); f.Via != ViaBuildID || f.Path != inside {
		t.Fatalf("in-root target: got %+v, want %s", f, inside)
	}
}

type fakeFetcher struct {
	mu      sync.Mutex
	cache   map[string]string
	serve   map[string]string
	fetched [][]string
}

func (f *fakeFetcher) Cached(id string) (string, bool) { p, ok := f.cache[id]; return p, ok }
func (f *fakeFetcher) Fetch(ctx context.Context, ids []string) map[string]FetchResult {
	f.mu.Lock()
	f.fetched = append(f.fetched, ids)
	f.mu.Unlock()
	out := map[string]FetchResult{}
	for _, id := range ids {
		if p, ok := f.serve[id]; ok {
			out[id] = FetchResult{Path: p}
		} else {
			out[id] = FetchResult{Err: errors.New("not found on any server")}
		}
	}
	return out
}

func TestDebuginfodCacheAndServers(t *testing.T) {
	dir := t.TempDir()
	a := build(t, dir, "a", "-g", "-DA")
	b := build(t, dir, "b", "-g", "-O2")
	c := build(t, dir, "c", "-g", "-O3")
	emb := build(t, dir, "emb", "-g", "-Os")
	split(t, a, filepath.Join(dir, "cache-a.debug"))
	split(t, b, filepath.Join(dir, "server-b.debug"))
	split(t, c, filepath.Join(dir, "gone-c.debug"))
	os.Remove(filepath.Join(dir, "gone-c.debug"))
	// Keep the debuglink search from finding the files beside them.
	for _, n := range []string{"cache-a.debug", "server-b.debug"} {
		os.Rename(filepath.Join(dir, n), filepath.Join(dir, "x-"+n))
	}
	ff := &fakeFetcher{
		cache: map[string]string{buildID(t, a): filepath.Join(dir, "x-cache-a.debug")},
		serve: map[string]string{buildID(t, b): filepath.Join(dir, "x-server-b.debug")},
	}
	l := &Locator{DebugDirs: []string{filepath.Join(dir, "none")}, Debuginfod: ff}
	res := l.LocateAll(context.Background(), []Module{{Path: a}, {Path: b}, {Path: c}, {Path: emb}}, 2)
	want := []Via{ViaDebuginfodCache, ViaDebuginfod, ViaNone, ViaEmbedded}
	for i, r := range res {
		if r.Found.Via != want[i] {
			t.Errorf("%s: via %s, want %s (%+v)", r.Module.Path, r.Found.Via, want[i], r.Found)
		}
	}
	if len(ff.fetched) != 1 || len(ff.fetched[0]) != 2 {
		t.Errorf("servers asked %v; want one batch of b and c", ff.fetched)
	}
	if !strings.Contains(res[2].Found.Err, "not found") {
		t.Errorf("c: %+v", res[2].Found)
	}
	// Offline: no server is asked.
	ff.fetched = nil
	l.Offline = true
	res = l.LocateAll(context.Background(), []Module{{Path: b}}, 2)
	if res[0].Found.Via != ViaNone || len(ff.fetched) != 0 {
		t.Errorf("offline: %+v, fetched %v", res[0].Found, ff.fetched)
	}
}

// Debian's python3.11 with python3.11-dbg: the debug file is found
// through the build-id directory, full DWARF from an LTO build.
func TestDebianPython(t *testing.T) {
	py := testenv.Debian(t).Exe
	want := testenv.DebianDebugFile(t, buildID(t, py))
	f := locate(t, &Locator{}, Module{Path: py})
	if f.Via != ViaBuildID || f.Path != want || f.Kind != KindDWARF || f.Producer == nil || !f.Producer.LTO {
		t.Fatalf("got %+v, want %s", f, want)
	}
}

func TestCorruptModule(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "junk")
	os.WriteFile(p, []byte("\x7fELF\x02\x01\x01junk"), 0o644)
	if _, err := (&Locator{}).Locate(Module{Path: p}); !errors.Is(err, elfinfo.ErrCorrupt) {
		t.Fatalf("err %v, want ErrCorrupt", err)
	}
}

// TestHostPathInRoot: a container's debug directory that is an absolute
// link is followed inside the container's root, never to this
// machine's directory of that name, and RootDirs names both.
func TestHostPathInRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "srv", "debug"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "usr", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/srv/debug", filepath.Join(root, "usr", "lib", "debug")); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "srv", "debug")
	if got := HostPath(root, "/usr/lib/debug"); got != want {
		t.Errorf("HostPath = %q, want %q", got, want)
	}
	if got := HostPath("", "/usr/lib/debug"); got != "/usr/lib/debug" {
		t.Errorf("HostPath without a root = %q", got)
	}
	l := &Locator{DebugDirs: []string{"/usr/lib/debug"}}
	if got := l.RootDirs(root); len(got) != 1 || got[0] != (SearchedDir{Dir: "/usr/lib/debug", ReadFrom: want}) {
		t.Errorf("RootDirs = %+v, want /usr/lib/debug read from %s", got, want)
	}
	if got := l.RootDirs(""); got != nil {
		t.Errorf("RootDirs without a root = %+v, want nil", got)
	}
}
