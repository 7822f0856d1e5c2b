package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pyattach/pyattach/cmd/internal/bundle/archive"
)

// hostileBundle writes a bundle by hand: the magic frame, then a zstd
// stream of the tar entries (the manifest first), whatever they say.
// cut, when not 0, ends the tar stream that many bytes early.
func hostileBundle(t *testing.T, entries []archive.Entry, files []tar.Header, data []string, cut int) string {
	t.Helper()
	m := archive.Manifest{Format: archive.Format, Entries: entries, Missing: []archive.Missing{}}
	mj, _ := json.Marshal(m)
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: archive.ManifestName, Size: int64(len(mj)), Mode: 0o644})
	tw.Write(mj)
	for i, h := range files {
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(data[i]))
	}
	tw.Close()
	raw := tb.Bytes()
	if cut > 0 {
		raw = raw[:len(raw)-cut]
	}
	var out bytes.Buffer
	head := []byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}
	tag := "pyattach-bundle 1\n"
	binary.LittleEndian.PutUint32(head[4:], uint32(len(tag)))
	out.Write(head)
	out.WriteString(tag)
	zw, _ := zstd.NewWriter(&out)
	zw.Write(raw)
	zw.Close()
	p := filepath.Join(t.TempDir(), "bad.pyattach")
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hostileEntry(name, kind, data string) archive.Entry {
	h := sha256.Sum256([]byte(data))
	return archive.Entry{Name: name, Kind: kind, Size: int64(len(data)), SHA256: hex.EncodeToString(h[:]), Origin: "x"}
}

func hostileReg(name, data string) tar.Header {
	return tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o644}
}

// TestBundleHostile: a bundle that breaks a rule is refused by every
// command that opens one, with a one-line error, before anything is
// written to pyattach's cache (no gdb is started either).
func TestBundleHostile(t *testing.T) {
	bin := pyattachBin(t)
	core := hostileEntry("core", archive.KindCore, "C")
	src := "print(1)\n"
	one := func(name string, h tar.Header, data string) string {
		return hostileBundle(t, []archive.Entry{core, hostileEntry(name, archive.KindPythonSource, data)},
			[]tar.Header{hostileReg("core", "C"), h}, []string{"C", data}, 0)
	}
	lie := hostileEntry("root/a.py", archive.KindPythonSource, src)
	lie.Size = 4
	cases := map[string]struct{ file, want string }{
		"dotdot":   {one("root/../../etc/cron.d/x", hostileReg("root/../../etc/cron.d/x", src), src), "climbs out"},
		"absolute": {one("/etc/cron.d/x", hostileReg("/etc/cron.d/x", src), src), "absolute"},
		"symlink":  {one("root/a.py", tar.Header{Typeflag: tar.TypeSymlink, Name: "root/a.py", Linkname: "/etc/shadow"}, ""), "symbolic link"},
		"hardlink": {one("root/a.py", tar.Header{Typeflag: tar.TypeLink, Name: "root/a.py", Linkname: "core"}, ""), "hard link"},
		"device":   {one("root/dev/sda", tar.Header{Typeflag: tar.TypeBlock, Name: "root/dev/sda", Devmajor: 8}, ""), "device"},
		"fifo":     {one("root/f", tar.Header{Typeflag: tar.TypeFifo, Name: "root/f"}, ""), "FIFO"},
		"duplicate": {hostileBundle(t, []archive.Entry{core, hostileEntry("root/a.py", archive.KindPythonSource, src), hostileEntry("root/a.py", archive.KindPythonSource, src)},
			[]tar.Header{hostileReg("core", "C"), hostileReg("root/a.py", src), hostileReg("root/a.py", src)}, []string{"C", src, src}, 0), "duplicate"},
		"newline": {one("root/a\nb.py", hostileReg("root/a\nb.py", src), src), "control character"},
		"size vs manifest": {hostileBundle(t, []archive.Entry{core, lie},
			[]tar.Header{hostileReg("core", "C"), hostileReg("root/a.py", src)}, []string{"C", src}, 0), "the manifest 4"},
		"size vs data": {hostileBundle(t, []archive.Entry{core, hostileEntry("root/a.py", archive.KindPythonSource, src)},
			[]tar.Header{hostileReg("core", "C"), hostileReg("root/a.py", src)}, []string{"C", src}, 1024+512), "shorter"},
		"over the cap": {one("root/a.py", hostileReg("root/a.py", src), src), "cap"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			env := testEnv(t)
			if name == "over the cap" {
				env = append(env, "PYATTACH_BUNDLE_MAX_SIZE=5")
			}
			cache := ""
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "XDG_CACHE_HOME="); ok {
					cache = v
				}
			}
			for _, args := range [][]string{{"dump", c.file}, {"gdb", "-nx", "-batch", "-c", c.file, "-ex", "bt"}, {"lldb", "-b", "-c", c.file}} {
				code, stdout, stderr := runPyattach(t, bin, env, args...)
				if code == 0 {
					t.Fatalf("%s accepted it:\n%s%s", args[0], stdout, stderr)
				}
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				if !strings.HasPrefix(lines[0], "pyattach: error: ") || !strings.Contains(lines[0], c.want) {
					t.Errorf("%s: first line should be the error, with %q:\n%s", args[0], c.want, stderr)
				}
				for _, l := range lines[1:] {
					if !strings.HasPrefix(l, "  hint: ") && !strings.HasPrefix(l, "        ") {
						t.Errorf("%s: the error is not one line (and a hint):\n%s", args[0], stderr)
					}
				}
				if strings.Contains(stdout, "GNU gdb") || strings.Contains(stderr, "Core was generated") {
					t.Errorf("%s started the debugger", args[0])
				}
			}
			// Nothing unpacked: the cache's bundles directory is empty.
			ents, _ := os.ReadDir(filepath.Join(cache, "pyattach", "bundles"))
			if len(ents) != 0 {
				t.Errorf("the cache holds %v after a refused bundle", ents)
			}
		})
	}
	// Listing checks the manifest too.
	code, _, stderr := runPyattach(t, bin, testEnv(t), "bundle", "--list", cases["dotdot"].file)
	if code == 0 || !strings.Contains(stderr, "climbs out") {
		t.Errorf("bundle --list of a hostile manifest: exit %d\n%s", code, stderr)
	}
}
