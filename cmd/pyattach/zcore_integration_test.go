package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"

	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/dap"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/pyattach/pyattach/venv/environ"
)

// compressFile writes src compressed in format ("zstd", "lz4", "xz",
// "gzip") to dst, streaming, as the CLI tools would.
func compressFile(t *testing.T, format, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var w io.WriteCloser
	switch format {
	case "zstd":
		w, err = zstd.NewWriter(out)
	case "lz4":
		w = lz4.NewWriter(out)
	case "xz":
		w, err = xz.NewWriter(out)
	case "gzip":
		w = gzip.NewWriter(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// coreCache lists the files in the test environment's core cache.
func coreCache(t *testing.T, env []string) []string {
	t.Helper()
	var cache string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CACHE_HOME="); ok {
			cache = v
		}
	}
	ents, err := os.ReadDir(filepath.Join(cache, "pyattach", "cores"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

var appStack = []*regexp.Regexp{
	regexp.MustCompile(`inner.*app\.py.*5|app\.py.*5.*inner`),
	regexp.MustCompile(`middle.*app\.py.*7|app\.py.*7.*middle`),
	regexp.MustCompile(`outer.*app\.py.*9|app\.py.*9.*outer`),
}

// TestCompressedCores: a gcore core of a Debian Python 3.11 process,
// compressed with zstd (named as systemd-coredump names its cores), lz4,
// xz and gzip, is read by every command that takes a core: dump shows
// the Python stack of each; resolve tells the compression and what the
// systemd-coredump name says; pyattach gdb -c and lldb -c run py-bt on
// the decompressed copy; a bundle packs it. Each core is decompressed
// once into the private cache, which then holds nothing else.
func TestCompressedCores(t *testing.T) {
	gcore := testenv.Need(t, "gcore")
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	py := testenv.Debian(t)
	pid := testenv.StartPython(t, py.Exe, "")
	dir := t.TempDir()
	mustRunIn(t, "gcore", dir, nil, gcore, "-o", filepath.Join(dir, "core"), strconv.Itoa(pid))
	raw := filepath.Join(dir, "core."+strconv.Itoa(pid))
	usec := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC).UnixMicro()
	comm := `python3\x2e11`
	names := map[string]string{
		"zstd": fmt.Sprintf("core.%s.%d.0123456789abcdef0123456789abcdef.%d.%d.zst", comm, os.Getuid(), pid, usec),
		"lz4":  "crash.lz4core", // the magic says what it is, not the name
		"xz":   "core.xz",
		"gzip": "core.gz",
	}
	for f, n := range names {
		compressFile(t, f, raw, filepath.Join(dir, n))
	}
	os.Remove(raw)
	bin := pyattachBin(t)
	env := testEnv(t)

	for _, f := range []string{"zstd", "lz4", "xz", "gzip"} {
		c := filepath.Join(dir, names[f])
		out, stderr := pyattachOK(t, "dump "+f, bin, env, "dump", c)
		for _, re := range appStack {
			if !re.MatchString(out) {
				t.Errorf("dump of the %s core lacks %s:\n%s%s", f, re, out, stderr)
			}
		}
		if !strings.Contains(stderr, ": "+f+"-compressed core, decompressed to ") {
			t.Errorf("dump of the %s core does not say it decompressed it:\n%s", f, stderr)
		}
	}
	if n := coreCache(t, env); len(n) != 4 {
		t.Errorf("the core cache holds %q, want the four cores", n)
	}

	zst := filepath.Join(dir, names["zstd"])
	_, stderr := pyattachOK(t, "dump zstd again", bin, env, "dump", zst)
	if !strings.Contains(stderr, "using its copy decompressed before") ||
		!strings.Contains(stderr, fmt.Sprintf("systemd-coredump's name: process %d (python3.11), uid %d, dumped 2026-11-28T09:30:00Z", pid, os.Getuid())) {
		t.Errorf("second dump of the zstd core: want the cached copy and the name's process, command and time:\n%s", stderr)
	}
	js, _ := pyattachOK(t, "resolve --json zstd", bin, env, "resolve", "--json", zst)
	var r target.Result
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("resolve --json: %v\n%s", err, js)
	}
	if r.Core == nil || r.Core.Path != zst || r.Core.PID != pid || r.Core.Compressed != "zstd" || !strings.HasSuffix(r.Core.Decompressed, ".core") ||
		r.Core.Coredump == nil || r.Core.Coredump.PID != pid || r.Core.Coredump.Comm != "python3.11" || r.Core.Coredump.Time.UnixMicro() != usec || r.Interpreter != py.Exe {
		t.Errorf("resolve --json of the zstd core: %+v, core %+v", r, r.Core)
	}
	out, _ := pyattachOK(t, "resolve zstd", bin, env, "resolve", zst)
	for _, want := range []string{`(?m)^compressed +zstd, decompressed to /`, `(?m)^coredump name +process ` + strconv.Itoa(pid) + ` \(python3\.11\), uid \d+, dumped 2026-11-28T09:30:00Z$`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("resolve %s lacks %s:\n%s", zst, want, out)
		}
	}

	out, _ = pyattachOK(t, "doctor zstd", bin, env, "doctor", zst)
	if !regexp.MustCompile(`(?m)^ok +target +.*Python 3\.11\.`).MatchString(out) {
		t.Errorf("doctor %s: want the target resolved through the decompressed core's notes:\n%s", zst, out)
	}
	// The DAP proxy's coreFile names the decompressed copy for the
	// adapter, as gdb's and lldb's -c do.
	var errBuf strings.Builder
	app := &App{Ctx: context.Background(), Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errBuf, Env: env, Cwd: dir}
	args := dap.Message{}
	args.Set("coreFile", zst)
	if _, err := dapPlan("gdb", "attach", args, &Globals{ProcRoot: "/proc"}, app, &config.Config{}); err != nil {
		t.Fatalf("dapPlan(coreFile %s): %v\n%s", zst, err, errBuf.String())
	}
	if cf := args.Str("coreFile"); !strings.HasSuffix(cf, ".core") || !strings.Contains(cf, "/pyattach/cores/") {
		t.Errorf("DAP attach: coreFile %q, want the decompressed copy in the cache\n%s", cf, errBuf.String())
	}

	gdb, _ := pyattachOK(t, "gdb -c lz4", bin, env, "gdb", "-nx", "-batch", "-c", filepath.Join(dir, names["lz4"]), "-ex", "bt", "-ex", "py-bt")
	if !strings.Contains(gdb, "time_sleep") && !strings.Contains(gdb, "select") && !strings.Contains(gdb, "clock_nanosleep") {
		t.Errorf("gdb -c of the lz4 core: bt shows no sleeping frame:\n%s", gdb)
	}
	checkPyBt(t, "gdb -c lz4", gdb)
	lldb, _ := pyattachOK(t, "lldb -c xz", bin, append(env, testenv.LLDBEnv()...), "lldb", "-b", "-c", filepath.Join(dir, names["xz"]), "-o", "bt", "-o", "py-bt")
	checkPyBt(t, "lldb -c xz", lldb)

	b := filepath.Join(dir, "gz.pyattach")
	pyattachOK(t, "bundle gzip", bin, env, "bundle", filepath.Join(dir, names["gzip"]), "-o", b)
	out, stderr = pyattachOK(t, "dump BUNDLE", bin, env, "dump", b)
	for _, re := range appStack {
		if !re.MatchString(out) {
			t.Errorf("dump of the bundle of the gzip core lacks %s:\n%s%s", re, out, stderr)
		}
	}
	for _, n := range coreCache(t, env) {
		if strings.HasPrefix(n, safefs.TempPrefix) || !strings.HasSuffix(n, ".core") {
			t.Errorf("the core cache holds %s", n)
		}
	}
}

// TestCompressedCoreHostile: a decompression bomb (beyond
// --max-core-size), a truncated stream, garbage after a valid magic and
// a FIFO named like a compressed core are refused by every command with
// a one-line error and a hint, and the cache holds no partial file.
func TestCompressedCoreHostile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\x7fELF\x02\x01\x01"))
	f.Truncate(64 << 20) // zeros: 64 MiB that compress to almost nothing
	f.Close()
	bomb := filepath.Join(dir, "core.bomb.zst")
	compressFile(t, "zstd", big, bomb)
	whole := filepath.Join(dir, "whole.xz")
	compressFile(t, "xz", big, whole)
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "core.cut.xz")
	testenv.WriteFile(t, cut, data[:len(data)/2], 0o600)
	garbage := filepath.Join(dir, "core.garbage.lz4")
	testenv.WriteFile(t, garbage, append([]byte{0x04, 0x22, 0x4d, 0x18}, []byte(strings.Repeat("not an lz4 frame ", 100))...), 0o600)
	fifo := filepath.Join(dir, "core.fifo.zst")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := pyattachBin(t)
	env := testEnv(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"bomb", []string{"--max-core-size", "16M", "dump", bomb}, `decompresses to more than 16M, the cap`},
		{"bomb resolve", []string{"--max-core-size", "16M", "resolve", bomb}, `decompresses to more than 16M, the cap`},
		{"bomb gdb", []string{"--max-core-size", "16M", "gdb", "-nx", "-batch", "-c", bomb}, `decompresses to more than 16M, the cap`},
		{"cut", []string{"dump", cut}, `xz core .* is truncated or damaged`},
		{"cut lldb", []string{"lldb", "-b", "-c", cut}, `xz core .* is truncated or damaged`},
		{"garbage", []string{"bundle", garbage, "-o", filepath.Join(dir, "g.pyattach")}, `lz4 core .* is truncated or damaged`},
		{"fifo", []string{"dump", fifo}, `FIFO`},
		{"bad cap", []string{"--max-core-size", "lots", "dump", bomb}, `--max-core-size: size "lots"`},
	} {
		code, stdout, stderr := runPyattach(t, bin, env, c.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code == 0 || len(lines) != 2 || !regexp.MustCompile(`^pyattach: error: .*`+c.want).MatchString(lines[0]) || !strings.HasPrefix(lines[1], "  hint: ") {
			t.Errorf("%s: exit %d; want an error matching %q and a hint:\n%s%s", c.name, code, c.want, stdout, stderr)
		}
		if n := coreCache(t, env); len(n) != 0 {
			t.Errorf("%s: the core cache holds %q", c.name, n)
		}
	}
	// The cap raised, the same bomb is read; an ELF file that is no
	// core is refused as resolve refuses it uncompressed.
	code, _, stderr := runPyattach(t, bin, env, "--max-core-size", "1G", "resolve", bomb)
	if code == 0 || !strings.Contains(stderr, "is zstd-compressed, but what it holds (") {
		t.Errorf("resolve with the cap raised: exit %d\n%s", code, stderr)
	}
	// Something else compressed is refused at its first bytes.
	text := filepath.Join(dir, "notes.txt")
	testenv.WriteFile(t, text, []byte(strings.Repeat("a log line\n", 1000)), 0o600)
	gz := filepath.Join(dir, "notes.gz")
	compressFile(t, "gzip", text, gz)
	code, _, stderr = runPyattach(t, bin, env, "dump", gz)
	if code == 0 || !strings.Contains(stderr, "is gzip-compressed, but what it holds is not a core file") {
		t.Errorf("dump of a compressed text file: exit %d\n%s", code, stderr)
	}
}

// TestDumpCoredump: dump --coredump finds the core through coredumpctl
// (a stand-in on PATH that answers as systemd's does: systemd-coredump
// is not installed here, for it would change the machine's
// core_pattern), and says how to do without it when it is absent.
func TestDumpCoredump(t *testing.T) {
	gcore := testenv.Need(t, "gcore")
	py := testenv.Debian(t)
	pid := testenv.StartPython(t, py.Exe, "")
	dir := t.TempDir()
	mustRunIn(t, "gcore", dir, nil, gcore, "-o", filepath.Join(dir, "core"), strconv.Itoa(pid))
	raw := filepath.Join(dir, "core."+strconv.Itoa(pid))
	store := filepath.Join(dir, "coredump")
	os.Mkdir(store, 0o700)
	name := fmt.Sprintf(`core.python3\x2e11.0.0123456789abcdef0123456789abcdef.%d.1764322200000000.zst`, pid)
	compressFile(t, "zstd", raw, filepath.Join(store, name))
	bindir := filepath.Join(dir, "bin")
	os.Mkdir(bindir, 0o755)
	script := fmt.Sprintf(`#!/bin/sh
case "$*" in
*--json=short\ list*) echo '[{"time":1764322100000000,"pid":77,"uid":0,"gid":0,"sig":6,"corefile":"missing","exe":"/usr/bin/old","size":1},{"time":1764322200000000,"pid":%d,"uid":0,"gid":0,"sig":11,"corefile":"present","exe":"%s","size":1}]' ;;
*"info -1 77") printf '           PID: 77\n       Storage: none\n' ;;
*"info -1 %d") printf '           PID: %d\n       Storage: %s (present)\n' ;;
*) echo "unexpected: $*" >&2; exit 1 ;;
esac
`, pid, py.Exe, pid, pid, filepath.Join(store, strings.ReplaceAll(name, `\`, `\\`)))
	testenv.WriteFile(t, filepath.Join(bindir, "coredumpctl"), []byte(script), 0o755)
	bin := pyattachBin(t)
	env := environ.Env(testEnv(t))
	withCtl := env.With("PATH", bindir+":"+env.Get("PATH"))

	for _, which := range []string{"latest", strconv.Itoa(pid)} {
		out, stderr := pyattachOK(t, "dump --coredump "+which, bin, withCtl, "dump", "--coredump", which)
		for _, re := range appStack {
			if !re.MatchString(out) {
				t.Errorf("dump --coredump %s lacks %s:\n%s%s", which, re, out, stderr)
			}
		}
		// The name's backslashes are printed escaped.
		if !strings.Contains(stderr, fmt.Sprintf("coredumpctl: process %d (%s), signal 11, core %s", pid, py.Exe, strings.ReplaceAll(filepath.Join(store, name), `\`, `\\`))) ||
			!strings.Contains(stderr, fmt.Sprintf("systemd-coredump's name: process %d (python3.11), uid 0", pid)) {
			t.Errorf("dump --coredump %s does not tell the core it found:\n%s", which, stderr)
		}
	}
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{withCtl, []string{"dump", "--coredump", "77"}, `coredumpctl keeps no core file of process 77`},
		{withCtl, []string{"dump", "--coredump", "12345"}, `coredumpctl lists no such core`},
		{withCtl, []string{"dump", "--coredump", "x;y"}, `not a PID or "latest"`},
		{withCtl, []string{"dump", "--coredump", "latest", "123"}, `not both`},
		{env.With("PATH", dir), []string{"dump", "--coredump", "latest"}, `coredumpctl is not installed`},
	} {
		code, stdout, stderr := runPyattach(t, bin, c.env, c.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code == 0 || len(lines) != 2 || !strings.Contains(lines[0], c.want) || !strings.HasPrefix(lines[1], "  hint: ") {
			t.Errorf("%q: exit %d; want %q and a hint:\n%s%s", c.args, code, c.want, stdout, stderr)
		}
	}
}
