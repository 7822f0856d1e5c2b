package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/initfiles"
	"github.com/pyattach/pyattach/detect/testenv"
)

// miApp holds still in inner, called by keyfn, which sorted (C) calls
// for outer: two calls of the eval loop, each running two Python frames,
// with C frames between them.
const miApp = `import sys, time
def inner(n, label):
    items = [1, 2, "three"]
    text = "tab\there \x1b[31m"
    sys.stdout.write("ready\n"); sys.stdout.flush()
    time.sleep(n)
def keyfn(x):
    inner(600, "lbl")
    return x
def outer(k):
    total = k * 2
    return sorted([k], key=keyfn)
outer(21)
`

// TestVSCodeMIPythonFrames: the cppdbg configuration `pyattach init
// --vscode` writes, run by gdb 13's MI as VS Code's C/C++ extension runs
// it (its setupCommands, -file-exec-and-symbols, -target-attach), lists
// the Python frames among the C frames in -stack-list-frames, each with
// the level cpptools needs, and a Python frame's locals (their escaped
// reprs) in -stack-list-variables with --simple-values and
// --all-values, and through -var-create of each name as the Variables
// pane asks, also for a frame below another eval loop frame. The
// process keeps running after -target-detach. For the project's venv
// (Debian's 3.11, a copy), a stripped pyenv 3.13 and pyenv 3.10 (one
// eval loop call per Python frame), as "program".
func TestVSCodeMIPythonFrames(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	project := t.TempDir()
	henv := homeEnv(t)
	testenv.Venv(t, testenv.Debian(t).Exe, filepath.Join(project, ".venv"), "--copies")
	mustRunIn(t, "pyattach init --vscode", project, henv, pyattachBin(t), "--offline", "init", "--vscode", project)
	conf := cppdbgConfig(t, filepath.Join(project, ".vscode", "launch.json"))

	t.Run("venv 3.11", func(t *testing.T) {
		checkMI(t, gdb, project, henv, conf, conf.Program, testenv.StartPython(t, conf.Program, miApp))
	})
	t.Run("pyenv 3.13 stripped", func(t *testing.T) {
		exe, env := testenv.Stripped(t, testenv.Pyenv(t, "3.13").Exe)
		checkMI(t, gdb, project, henv, conf, exe, testenv.StartPython(t, exe, miApp, env...))
	})
	t.Run("pyenv 3.10", func(t *testing.T) {
		exe := testenv.Pyenv(t, "3.10").Exe
		checkMI(t, gdb, project, henv, conf, exe, testenv.StartPython(t, exe, miApp))
	})
}

// miRow is a frame of -stack-list-frames: its level, function, file and
// line, and the functions of its children (elided frames).
type miRow struct {
	level          int
	fn, file, line string
	children       []string
}

// checkMI drives gdb's MI as cpptools does with conf, program as its
// "program", attached to pid (running miApp).
func checkMI(t *testing.T, gdb, project string, henv []string, conf cppdbg, program string, pid int) {
	mi := startMI(t, project, henv, gdb)
	// cpptools starts with asynchronous MI, then the setupCommands, then
	// the program and the attach, and waits for the stop.
	mi.must("-gdb-set target-async on")
	for _, s := range conf.SetupCommands {
		cmd := s.Text
		if !strings.HasPrefix(cmd, "-") {
			cmd = "-interpreter-exec console " + miQuote(cmd)
		}
		mi.must(cmd)
	}
	mi.must("-file-exec-and-symbols " + miQuote(program))
	mi.must("-target-attach " + strconv.Itoa(pid))
	mi.waitFor("*stopped")

	stack := mi.must("-stack-list-frames --thread 1 0 1000").get("stack")
	if stack == nil {
		t.Fatal("-stack-list-frames: no stack")
	}
	var rows []miRow
	var python []string // every Python frame, children too, in order
	for _, f := range stack.list {
		lv, ok := f.v.get("level").str()
		n, err := strconv.Atoi(lv)
		if !ok || err != nil {
			t.Fatalf("a frame without a level (cpptools needs one): %s", f.v)
		}
		r := miRow{level: n}
		r.fn, _ = f.v.get("func").str()
		r.file, _ = f.v.get("file").str()
		r.line, _ = f.v.get("line").str()
		if strings.HasPrefix(r.fn, "[Python] ") {
			python = append(python, r.fn+":"+r.line)
		}
		if ch := f.v.get("children"); ch != nil {
			for _, c := range ch.list {
				fn, _ := c.v.get("func").str()
				r.children = append(r.children, fn)
				if line, _ := c.v.get("line").str(); strings.HasPrefix(fn, "[Python] ") {
					python = append(python, fn+":"+line)
				}
			}
		}
		if len(rows) > 0 && n <= rows[len(rows)-1].level {
			t.Errorf("levels not increasing: %d after %d", n, rows[len(rows)-1].level)
		}
		rows = append(rows, r)
	}
	if want := "[[Python] inner:6 [Python] keyfn:8 [Python] outer:12 [Python] <module>:13]"; fmt.Sprint(python) != want {
		t.Errorf("Python frames (function:line) %v, want %s:\n%+v", python, want, rows)
	}
	find := func(fn string) int {
		for i, r := range rows {
			if r.fn == fn {
				return i
			}
		}
		t.Fatalf("no frame %q in -stack-list-frames: %+v", fn, rows)
		return -1
	}
	in, out := find("[Python] inner"), find("[Python] outer")
	if filepath.Base(rows[in].file) != "app.py" || filepath.Base(rows[out].file) != "app.py" {
		t.Errorf("Python frames' files: %+v, %+v", rows[in], rows[out])
	}
	if in == 0 || out == len(rows)-1 {
		t.Errorf("want C frames before and after the Python frames: %+v", rows)
	}
	between := false
	for _, r := range rows[in+1 : out] {
		between = between || !strings.HasPrefix(r.fn, "[Python] ")
	}
	if !between {
		t.Errorf("want C frames (sorted's) between inner and outer: %+v", rows)
	}

	// Locals are named $py_NAME in MI (convenience variables holding
	// their values: cpptools asks for each value by its name).
	wantInner := map[string]string{"$py_n": "600", "$py_label": "'lbl'", "$py_items": "[1, 2, 'three']", "$py_text": `'tab\there \x1b[31m'`}
	wantOuter := map[string]string{"$py_k": "21", "$py_total": "42"}
	for _, c := range []struct {
		level int
		want  map[string]string
	}{{rows[in].level, wantInner}, {rows[out].level, wantOuter}} {
		for _, values := range []string{"--simple-values", "--all-values"} {
			cmd := fmt.Sprintf("-stack-list-variables --thread 1 --frame %d %s", c.level, values)
			got := map[string]string{}
			for _, v := range mi.must(cmd).get("variables").list {
				name, _ := v.v.get("name").str()
				got[name], _ = v.v.get("value").str()
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s:\n got %v\nwant %v", cmd, got, c.want)
			}
		}
		// VS Code's Variables pane: the names, then a variable object of
		// each, in the frame.
		cmd := fmt.Sprintf("-stack-list-variables --thread 1 --frame %d 0", c.level)
		got := map[string]string{}
		for _, v := range mi.must(cmd).get("variables").list {
			name, _ := v.v.get("name").str()
			vc := fmt.Sprintf("-var-create --thread 1 --frame %d - * %s", c.level, miQuote(name))
			got[name], _ = mi.must(vc).get("value").str()
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s, then -var-create of each:\n got %v\nwant %v", cmd, got, c.want)
		}
	}
	// The call stack's arguments, as cpptools asks for them.
	mi.must("-stack-list-arguments 2 0 1000")
	mi.must("-target-detach")
	mi.close()

	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("the process is gone after -target-detach: %v", err)
	}
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) == 0 || f[0] != "S" {
		t.Errorf("the process is not running on after -target-detach: %s", stat)
	}
}

type cppdbg struct {
	Name, Type, Program string
	SetupCommands       []struct{ Text string }
}

// cppdbgConfig reads pyattach's cppdbg configuration from launch.json
// (JSONC, as VS Code reads it).
func cppdbgConfig(t *testing.T, file string) cppdbg {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	clean, _ := initfiles.StripJSONC(data)
	var doc struct{ Configurations []cppdbg }
	if err := json.Unmarshal(clean, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, data)
	}
	for _, c := range doc.Configurations {
		if c.Type == "cppdbg" && c.Name == initfiles.ConfigGDB {
			return c
		}
	}
	t.Fatalf("%s has no cppdbg configuration named %q:\n%s", file, initfiles.ConfigGDB, data)
	return cppdbg{}
}

// miQuote is s as an MI c-string.
func miQuote(s string) string {
	return strconv.Quote(s)
}

// miSession is gdb's MI, driven one command at a time.
type miSession struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	token int
	seen  []string // every line read
	next  int      // the first line waitFor has not looked at
}

func startMI(t *testing.T, dir string, env []string, gdb string) *miSession {
	t.Helper()
	cmd := exec.Command(gdb, "-nx", "--interpreter=mi")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &miSession{t: t, cmd: cmd, in: in, lines: make(chan string, 1024)}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(outp)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	return s
}

// miHang is how long a command may go unanswered before the test gives
// up on gdb (a hang guard, not a time the test measures).
const miHang = 5 * time.Minute

// must sends cmd and returns its ^done results; anything else fails the
// test.
func (s *miSession) must(cmd string) *miValue {
	s.t.Helper()
	s.token++
	tok := strconv.Itoa(s.token)
	if _, err := io.WriteString(s.in, tok+cmd+"\n"); err != nil {
		s.t.Fatalf("%s: %v", cmd, err)
	}
	var seen []string
	timer := time.NewTimer(miHang)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("%s: gdb ended:\n%s", cmd, strings.Join(seen, "\n"))
			}
			seen = append(seen, line)
			s.seen = append(s.seen, line)
			if !strings.HasPrefix(line, tok+"^") {
				continue
			}
			rest := strings.TrimPrefix(line, tok+"^")
			class, results, _ := strings.Cut(rest, ",")
			if class != "done" {
				s.t.Fatalf("%s: %s\n%s", cmd, rest, strings.Join(seen, "\n"))
			}
			v, err := parseMIResults(results)
			if err != nil {
				s.t.Fatalf("%s: %v\n%s", cmd, err, line)
			}
			return v
		case <-timer.C:
			s.t.Fatalf("%s: no answer from gdb:\n%s", cmd, strings.Join(seen, "\n"))
		}
	}
}

// waitFor reads until a line that starts with prefix, looking first at
// the lines read since the last waitFor.
func (s *miSession) waitFor(prefix string) {
	s.t.Helper()
	timer := time.NewTimer(miHang)
	defer timer.Stop()
	for {
		for ; s.next < len(s.seen); s.next++ {
			if strings.HasPrefix(s.seen[s.next], prefix) {
				s.next++
				return
			}
		}
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("gdb ended before %s:\n%s", prefix, strings.Join(s.seen, "\n"))
			}
			s.seen = append(s.seen, line)
		case <-timer.C:
			s.t.Fatalf("no %s from gdb:\n%s", prefix, strings.Join(s.seen, "\n"))
		}
	}
}

func (s *miSession) close() {
	io.WriteString(s.in, "-gdb-exit\n")
	s.in.Close()
	for range s.lines {
	}
	s.cmd.Wait()
}

// miValue is an MI value: a c-string (isStr), or a tuple or list of
// named (tuples, result lists) or unnamed values.
type miValue struct {
	s     string
	isStr bool
	list  []miKV
}

type miKV struct {
	k string
	v *miValue
}

func (v *miValue) get(k string) *miValue {
	if v == nil {
		return nil
	}
	for _, e := range v.list {
		if e.k == k {
			return e.v
		}
	}
	return nil
}

func (v *miValue) str() (string, bool) {
	if v == nil || !v.isStr {
		return "", false
	}
	return v.s, true
}

func (v *miValue) String() string {
	if v == nil {
		return "<nil>"
	}
	if v.isStr {
		return strconv.Quote(v.s)
	}
	var parts []string
	for _, e := range v.list {
		parts = append(parts, e.k+"="+e.v.String())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// parseMIResults parses "a=...,b=..." (a result record's results).
func parseMIResults(s string) (*miValue, error) {
	p := &miParser{s: s}
	v := &miValue{}
	for p.i < len(p.s) {
		kv, err := p.result()
		if err != nil {
			return nil, err
		}
		v.list = append(v.list, kv)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
		}
	}
	return v, nil
}

type miParser struct {
	s string
	i int
}

func (p *miParser) result() (miKV, error) {
	j := strings.IndexByte(p.s[p.i:], '=')
	if j < 0 {
		return miKV{}, fmt.Errorf("no '=' at %d", p.i)
	}
	k := p.s[p.i : p.i+j]
	p.i += j + 1
	v, err := p.value()
	return miKV{k, v}, err
}

func (p *miParser) value() (*miValue, error) {
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("a value was expected at the end")
	}
	switch c := p.s[p.i]; c {
	case '"':
		j := p.i + 1
		for j < len(p.s) && p.s[j] != '"' {
			if p.s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(p.s) {
			return nil, fmt.Errorf("a string does not end")
		}
		text, err := unquoteMI(p.s[p.i : j+1])
		p.i = j + 1
		return &miValue{s: text, isStr: true}, err
	case '{', '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		v := &miValue{}
		for {
			if p.i >= len(p.s) {
				return nil, fmt.Errorf("%c not closed", c)
			}
			if p.s[p.i] == end {
				p.i++
				return v, nil
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.s[p.i] == '"' || p.s[p.i] == '{' || p.s[p.i] == '[' {
				e, err := p.value()
				if err != nil {
					return nil, err
				}
				v.list = append(v.list, miKV{"", e})
				continue
			}
			kv, err := p.result()
			if err != nil {
				return nil, err
			}
			v.list = append(v.list, kv)
		}
	}
	return nil, fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
}

// unquoteMI reads an MI c-string: C escapes, bytes as they are.
func unquoteMI(q string) (string, error) {
	var b strings.Builder
	s := q[1 : len(q)-1]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, err := strconv.ParseUint(s[i:j], 8, 8)
			if err != nil {
				return "", fmt.Errorf("bad escape in %s", q)
			}
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// TestInitVSCodeConfigurations: `init --vscode` edits an existing
// launch.json in place: its comments, trailing commas and other entries
// stay, pyattach's entries are replaced (not repeated) on a second run,
// and the DAP configurations run this pyattach as the adapter of the
// LLDB DAP extension, with the process picked by VS Code.
func TestInitVSCodeConfigurations(t *testing.T) {
	project := t.TempDir()
	henv := homeEnv(t)
	testenv.Venv(t, testenv.Debian(t).Exe, filepath.Join(project, ".venv"), "--copies")
	lj := filepath.Join(project, ".vscode", "launch.json")
	if err := os.MkdirAll(filepath.Dir(lj), 0o755); err != nil {
		t.Fatal(err)
	}
	const mine = `{
    // KEEP: the user's note
    "version": "0.2.0",
    "configurations": [
        {
            "name": "Python: current file", // KEEP: same line
            "type": "debugpy",
            "request": "launch",
            "program": "${file}",
        },
        /* KEEP: block */ {"name": "pyattach: attach with gdb", "type": "cppdbg", "old": true},
    ],
}
`
	if err := os.WriteFile(lj, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := filepath.EvalSymlinks(pyattachBin(t))
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for run := 0; run < 2; run++ {
		mustRunIn(t, "pyattach init --vscode", project, henv, bin, "--offline", "init", "--vscode", project)
		data, err := os.ReadFile(lj)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, keep := range []string{"// KEEP: the user's note", `"Python: current file", // KEEP: same line`, `"program": "${file}",`} {
			if !strings.Contains(text, keep) {
				t.Errorf("run %d: %q was not kept:\n%s", run, keep, text)
			}
		}
		if run == 1 && text != first {
			t.Errorf("a second init changed launch.json:\n%s\n---\n%s", first, text)
		}
		first = text
		clean, _ := initfiles.StripJSONC(data)
		var doc struct {
			Configurations []map[string]any
		}
		if err := json.Unmarshal(clean, &doc); err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		byName := map[string]map[string]any{}
		for _, c := range doc.Configurations {
			name := fmt.Sprint(c["name"])
			if byName[name] != nil {
				t.Errorf("two configurations named %q", name)
			}
			byName[name] = c
		}
		if len(doc.Configurations) != 5 || byName["Python: current file"] == nil || byName[initfiles.ConfigGDB]["old"] != nil {
			t.Errorf("want the user's entry and pyattach's four, the old one replaced:\n%s", text)
		}
		for name, args := range map[string]string{initfiles.ConfigLLDBDAP: "[lldb-dap]", initfiles.ConfigGDBDAP: "[gdb -i=dap]"} {
			c := byName[name]
			if c == nil || c["type"] != "lldb-dap" || c["request"] != "attach" || c["pid"] != "${command:pickProcess}" ||
				c["debugAdapterExecutable"] != bin || fmt.Sprint(c["debugAdapterArgs"]) != args ||
				c["program"] != filepath.Join(project, ".venv", "bin", "python") {
				t.Errorf("%s: %v", name, c)
			}
		}
	}
}
