package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/detect/dsym"
	"github.com/pyattach/pyattach/detect/testenv"
)

// macSORel is where dd-trace-py's macOS wheel installs echion's
// extension module.
const macSORel = "ddtrace/internal/datadog/profiling/stack_v2/" + testenv.MachOName

// macZip is the debug-symbols zip of a macOS ddtrace wheel.
const macZip = "ddtrace-3.99.0-cp313-cp313-macosx_11_0_x86_64-debug-symbols.zip"

// macInstall installs a ddtrace 3.99.0 whose extension module is so
// into a real venv of Debian's python3.11, and returns the venv and the
// installed module.
func macInstall(t *testing.T, so string) (venv, installed string) {
	t.Helper()
	venv = makeVenv(t, testenv.NeedFile(t, "/usr/bin/python3.11", "apt-get install python3.11-venv"), false)
	site := filepath.Join(venv, "lib", "python3.11", "site-packages")
	b, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	di := "ddtrace-3.99.0.dist-info"
	files := map[string][]byte{
		"ddtrace/__init__.py": nil,
		macSORel:              b,
		di + "/METADATA":      []byte("Metadata-Version: 2.1\nName: ddtrace\nVersion: 3.99.0\n"),
		di + "/WHEEL":         []byte("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp313-cp313-macosx_11_0_x86_64\n"),
	}
	var rec strings.Builder
	for n, data := range files {
		testenv.WriteFile(t, filepath.Join(site, n), data, 0o644)
		sum := sha256.Sum256(data)
		rec.WriteString(n + ",sha256=" + base64.RawURLEncoding.EncodeToString(sum[:]) + "," + strconv.Itoa(len(data)) + "\n")
	}
	rec.WriteString(di + "/RECORD,,\n")
	testenv.WriteFile(t, filepath.Join(site, di, "RECORD"), []byte(rec.String()), 0o644)
	return venv, filepath.Join(site, macSORel)
}

// macDebugZip packs the bundle at bundle as dd-trace-py packs its macOS
// debug symbols: <path inside the wheel>/<name>.so.dSYM/... entries.
func macDebugZip(t *testing.T, bundle string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(bundle, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(bundle, p)
		w, err := zw.Create(macSORel + ".dSYM/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), macZip)
	testenv.WriteFile(t, out, buf.Bytes(), 0o644)
	return out
}

// objdumpUUID is the LC_UUID llvm-objdump reads from a thin file
// (llvm-objdump 14 has no --uuid; --private-headers shows the command).
func objdumpUUID(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(testenv.Need(t, "llvm-objdump-14"), "--macho", "--private-headers", path).CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-objdump: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^\s*uuid ([0-9A-F-]{36})$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("llvm-objdump printed no uuid:\n%s", out)
	}
	return m[1]
}

// TestMachOWorkflow is dd-trace-py's macOS instructions, on Linux with
// real Mach-O files: symbols install places the .dSYM, debuginfo names
// it with the module's UUID, srcmap maps the echion build path onto a
// checkout, and lldb, given the generated script, reads the .dSYM's line
// table and shows the checkout's frame.cc.
func TestMachOWorkflow(t *testing.T) {
	fx := testenv.MachO(t)
	lldb := testenv.Need(t, "lldb")
	_ = lldb
	venv, so := macInstall(t, fx.SO)
	zipPath := macDebugZip(t, fx.DSYM)
	env := homeEnv(t)
	bin := pyattachBin(t)

	out := mustRunIn(t, "symbols install", "", env, bin, "symbols", "install", "--venv", venv, zipPath)
	uuid := objdumpUUID(t, so)
	var data string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok {
			data = v
		}
	}
	bundle := dsym.StorePath(filepath.Join(data, "pyattach", "debug"), uuid, so)
	if _, err := os.Stat(dsym.DWARFPath(bundle, so)); err != nil || !strings.Contains(out, "installed "+macSORel+".dSYM") {
		t.Fatalf("symbols install did not place the bundle at %s (%v):\n%s", bundle, err, out)
	}

	js := mustRunIn(t, "debuginfo --json", "", env, bin, "--offline", "debuginfo", "--json", so)
	var di debugsearch.Info
	if err := json.Unmarshal([]byte(js), &di); err != nil {
		t.Fatalf("debuginfo --json: %v\n%s", err, js)
	}
	if len(di.Modules) != 1 || di.Modules[0].MachO == nil || len(di.Modules[0].MachO.Arches) != 1 {
		t.Fatalf("debuginfo --json: %s", js)
	}
	a := di.Modules[0].MachO.Arches[0]
	if a.UUID != uuid || a.Bundle != bundle || a.Via != dsym.ViaStore || a.CPU != "x86_64" {
		t.Errorf("debuginfo: %+v, want UUID %s (llvm-objdump) and the .dSYM %s from the store", a, uuid, bundle)
	}

	js = mustRunIn(t, "srcmap --json", "", env, bin, "--offline", "--source", "echion="+fx.Checkout, "srcmap", "--json", so)
	var sm SrcmapResult
	if err := json.Unmarshal([]byte(js), &sm); err != nil {
		t.Fatalf("srcmap --json: %v\n%s", err, js)
	}
	if len(sm.Rules) != 1 || sm.Rules[0].From != testenv.MachOBuildDir || sm.Rules[0].To != fx.Checkout {
		t.Errorf("srcmap: %s, want %s -> %s", js, testenv.MachOBuildDir, fx.Checkout)
	}

	// lldb creates the target from the Mach-O file, runs the script,
	// then the user's commands.
	out = mustRunIn(t, "pyattach lldb", "", env, bin, "--offline", "--source", "echion="+fx.Checkout,
		"lldb", "-b", "-o", "image lookup -n Frame::read -v", "-o", "source list -n Frame::read", so)
	for _, want := range []string{
		"has been added to", // target symbols add took the .dSYM
		"LineEntry:",        // its line table is read
		testenv.MachOBuildDir + "/echion/frame.cc:6", // at Frame::read's line
		"// CHECKOUT COPY",                           // and the checkout's frame.cc is shown
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lldb output lacks %q:\n%s", want, out)
		}
	}

	// The universal variant with its universal .dSYM beside it: lldb
	// picks an architecture, and the bundle's slice of the same UUID.
	out = mustRunIn(t, "pyattach lldb (universal)", "", env, bin, "--offline", "--source", "echion="+fx.Checkout,
		"lldb", "-b", "-o", "image lookup -n Frame::read -v", "-o", "source list -n Frame::read", fx.Fat)
	for _, want := range []string{"has been added to", "LineEntry:", "// CHECKOUT COPY"} {
		if !strings.Contains(out, want) {
			t.Errorf("lldb output (universal) lacks %q:\n%s", want, out)
		}
	}
}

// TestMachORefused: a .dSYM of another build (UUID mismatch), a
// truncated Mach-O file, a universal file whose header lies about an
// offset, and a .dSYM whose DWARF file links out of the bundle, each
// refused with a clear message.
func TestMachORefused(t *testing.T) {
	fx := testenv.MachO(t)
	env := homeEnv(t)
	bin := pyattachBin(t)
	uuid := objdumpUUID(t, fx.SO)

	// Another build's bundle beside the module: rejected, named.
	dir := t.TempDir()
	so := filepath.Join(dir, testenv.MachOName)
	testenv.CopyFile(t, fx.SO, so, 0)
	if err := os.Rename(fx.Other, so+".dSYM"); err != nil {
		t.Fatal(err)
	}
	out := mustRunIn(t, "debuginfo", "", env, bin, "--offline", "debuginfo", so)
	if !regexp.MustCompile(`warning: .*: rejected .*\.dSYM: UUID [0-9A-F-]{36} \(x86_64\), want ` + uuid).MatchString(out) {
		t.Errorf("UUID mismatch not reported:\n%s", out)
	}
	// ... doctor fails on it, naming the rejected bundle ...
	out, err := runIn(t, "", env, bin, "--offline", "doctor", so)
	if err == nil || !regexp.MustCompile(`FAIL\s+debug\.dsym\s+x86_64 \(UUID `+uuid+`\): the \.dSYM found belongs to another build`).MatchString(out) || !strings.Contains(out, "pyattach symbols install") {
		t.Errorf("doctor on a module with another build's .dSYM: %v\n%s", err, out)
	}
	// ... and a zip of it is not installed.
	venv, _ := macInstall(t, fx.SO)
	out, err = runIn(t, "", env, bin, "symbols", "install", "--venv", venv, macDebugZip(t, so+".dSYM"))
	if err == nil || !strings.Contains(out, "do not match") || !strings.Contains(out, uuid) {
		t.Errorf("symbols install of another build's bundle: %v\n%s", err, out)
	}

	// A truncated file and a lying universal header: one-line errors.
	b, err := os.ReadFile(fx.Linked)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut", testenv.MachOName)
	testenv.WriteFile(t, cut, b[:len(b)/2], 0o644)
	fat, err := os.ReadFile(fx.Fat)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(fat[8+20+8:], uint32(len(fat)+4096))
	lying := filepath.Join(dir, "lying", testenv.MachOName)
	testenv.WriteFile(t, lying, fat, 0o644)
	for file, want := range map[string]string{
		cut:   "corrupt or truncated Mach-O file",
		lying: "arm64 slice: fat header at offset 0x1c: architecture at offset",
	} {
		out, err := runIn(t, "", env, bin, "--offline", "debuginfo", file)
		if err == nil || !strings.Contains(out, want) || !strings.Contains(out, "hint: the Mach-O file is truncated or corrupt") {
			t.Errorf("debuginfo %s: %v, want an error naming %q and a hint:\n%s", file, err, want, out)
		}
	}

	// The DWARF file of the bundle beside a module is a link out of it.
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Rename(fx.DSYMDWARF, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, fx.DSYMDWARF); err != nil {
		t.Fatal(err)
	}
	out = mustRunIn(t, "debuginfo", "", env, bin, "--offline", "debuginfo", fx.SO)
	if !strings.Contains(out, "symbolic link out of the .dSYM bundle") || !strings.Contains(out, "no .dSYM found") {
		t.Errorf("a .dSYM linking out of its tree was not refused:\n%s", out)
	}
	out = mustRunIn(t, "pyattach --print lldb", "", env, bin, "--offline", "--print", "lldb", fx.SO)
	if strings.Contains(out, "target symbols add") {
		t.Errorf("the lldb script adds a refused .dSYM:\n%s", out)
	}
}
