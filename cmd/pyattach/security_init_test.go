package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// initHostileNames are project directory names that a debugger or VS Code
// would read specially if pyattach init wrote them raw. refused is a part
// of the one-line error when init must refuse the name ("" when it must
// write it exactly); sibling is a directory that the raw name, read as
// gdb's safe-path pattern, would also trust.
var initHostileNames = []struct {
	name, refused, sibling string
}{
	{name: "with space"},
	{name: " lead and trail "},
	{name: "tab\there"},
	{name: "tilde ~root", refused: "has a blank before '~'"},
	{name: "~lead and mid~dle"},
	{name: `single'quote`},
	{name: `double"quote`},
	{name: `back\slash`},
	{name: `trailing\`},
	{name: "back`p 1+1`tick"},
	{name: "$(touch PWNED)"},
	{name: "$datadir"},
	{name: "$debugdir"},
	{name: "star*", sibling: "starX"},
	{name: "what?", sibling: "whatX"},
	{name: "[ab]", sibling: "a"},
	{name: "co:lon", refused: "holds ':'", sibling: "co"},
	{name: "hash # x"},
	{name: "semi;colon"},
	{name: "nl\nshell touch PWNED\n#", refused: "line break"},
	{name: "cr\rshell touch PWNED", refused: "line break"},
	{name: "bytes\xff\xfe", refused: "init"},
	{name: "${env:HOME}", refused: "VS Code replaces"},
	{name: "ünï cødé"},
	{name: strings.Repeat("L", 250)},
}

// TestSecurityInitHostileNames (issue 9, classes 1 and 5): for each
// hostile project name, `pyattach init --gdb --lldb --vscode --trust`
// either refuses it with a one-line error and writes nothing, or writes
// files that the real gdb 13 and lldb 14 read back exactly: the user's
// gdbinit trusts the project's .gdbinit and nothing else (not a sibling
// the raw name matches as a pattern, not a directory a link named like
// the escaped entry points to), launch.json's gdb and lldb commands
// source the written files, and no injected command runs.
func TestSecurityInitHostileNames(t *testing.T) {
	gdb := needTool(t, "gdb")
	lldb := needTool(t, "lldb")
	py := need(t, "/usr/bin/python3.11")
	bin := pyattachBin(t)
	for i, tc := range initHostileNames {
		// The test's name is in its temporary directories: only letters
		// and digits, so that the project's name is the only hostile one.
		sub := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, tc.name)
		t.Run(sub, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "r")
			home := filepath.Join(t.TempDir(), "home")
			for _, d := range []string{root, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			project := filepath.Join(root, tc.name)
			makeFakeVenv(t, py, project)
			env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
				"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
				"PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages"}
			debugDir := filepath.Join(home, ".local", "share", "pyattach", "debug")
			userInit := filepath.Join(home, ".config", "gdb", "gdbinit")
			marker := func(dir, what string) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".gdbinit"), []byte("echo "+what+"-LOADED\\n\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.sibling != "" {
				marker(filepath.Join(root, tc.sibling), "SIBLING")
			}
			// A link named like the entry escaped without padding.
			link := ""
			if esc := naiveEscape(tc.name); esc != tc.name && !strings.ContainsAny(tc.name, ":\n\r") {
				marker(filepath.Join(root, evilDir(i)), "EVIL")
				link = filepath.Join(root, esc)
				if err := os.Symlink(evilDir(i), link); err != nil {
					t.Fatal(err)
				}
			}
			defer func() {
				for _, d := range []string{root, project, home} {
					if _, err := os.Lstat(filepath.Join(d, "PWNED")); err == nil {
						t.Errorf("an injected command ran: %s exists", filepath.Join(d, "PWNED"))
					}
				}
			}()

			out, err := runIn(t, root, env, bin, "--offline", "init", "--gdb", "--lldb", "--vscode", "--trust", project)
			if tc.refused != "" {
				if err == nil {
					// Show what gdb does with the user's gdbinit now.
					o, _ := runIn(t, root, env, gdb, "-nx", "-batch", "-x", userInit)
					t.Fatalf("init accepted %q:\n%s\ngdb -x %s:\n%s", tc.name, out, userInit, o)
				}
				checkOneLineError(t, out, tc.refused)
				for _, f := range []string{filepath.Join(project, ".gdbinit"), filepath.Join(project, ".lldbinit"), filepath.Join(project, ".vscode"), userInit} {
					if _, err := os.Lstat(f); err == nil {
						t.Errorf("refused, but %s was written", f)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			data, err := os.ReadFile(userInit)
			if err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(l, "add-auto-load-safe-path ") {
					line = l
				}
			}
			entry := strings.TrimPrefix(line, "add-auto-load-safe-path ")

			// The advice printed without --trust is that same line.
			advice, err := runIn(t, root, env, bin, "--offline", "init", "--gdb", project)
			if err != nil || !strings.Contains(advice, "\n  "+line+"\n") {
				t.Errorf("init without --trust: %v; its advice is not the trusted line %q:\n%s", err, line, advice)
			}

			// (a) gdb reads the user's gdbinit back with the entry as written.
			o, _ := runIn(t, root, env, gdb, "-nx", "-batch", "-x", userInit, "-ex", "show auto-load safe-path")
			if !strings.Contains(o, ":"+entry+".") || strings.Contains(o, "rror") {
				t.Errorf("gdb's safe-path lacks the entry %q:\n%s", entry, o)
			}
			// A plain gdb in the project loads its .gdbinit.
			o, _ = runIn(t, project, env, gdb, "-batch", "-ex", "show debug-file-directory")
			if !strings.Contains(o, debugDir) || strings.Contains(o, "declined") {
				t.Errorf("plain gdb in the project did not load its .gdbinit:\n%s\nuser gdbinit:\n%s", o, data)
			}
			// ... and not a sibling's or a planted link's.
			for _, other := range []struct{ dir, what string }{{tc.sibling, "SIBLING"}, {evilDir(i), "EVIL"}} {
				if other.dir == "" || (other.what == "EVIL" && link == "") {
					continue
				}
				o, _ = runIn(t, filepath.Join(root, other.dir), env, gdb, "-batch")
				if strings.Contains(o, other.what+"-LOADED") || !strings.Contains(o, "declined") {
					t.Errorf("gdb in %s loaded its .gdbinit: the entry %q trusts more than the project:\n%s", other.dir, entry, o)
				}
			}

			// (b), (c): launch.json's commands, run by the real debuggers.
			setup, initCmd := readLaunchCommands(t, filepath.Join(project, ".vscode", "launch.json"))
			o, _ = runIn(t, root, env, gdb, "-nx", "-batch", "-ex", setup, "-ex", "show debug-file-directory")
			if !strings.Contains(o, debugDir) || strings.Contains(o, "No such file") {
				t.Errorf("gdb %q did not source the .gdbinit:\n%s", setup, o)
			}
			cmds := filepath.Join(t.TempDir(), "init.lldb")
			if err := os.WriteFile(cmds, []byte(initCmd+"\nsettings show target.debug-file-search-paths\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			o, _ = runIn(t, root, env, lldb, "-b", "-x", "-s", cmds)
			if !strings.Contains(o, debugDir) || strings.Contains(o, "error:") {
				t.Errorf("lldb %q did not source the .lldbinit:\n%s", initCmd, o)
			}
		})
	}
}

func evilDir(i int) string { return "evil" + strings.Repeat("X", i) }

// naiveEscape is a safe-path entry component escaped without padding, as
// gdb would read it back as a path.
func naiveEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte("*?[$", c) >= 0 || c == '~' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
			b.WriteString("[" + string(c) + "]")
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// makeFakeVenv makes dir/.venv/bin/python a copy of py, with its
// pyvenv.cfg.
func makeFakeVenv(t *testing.T, py, dir string) {
	t.Helper()
	bin := filepath.Join(dir, ".venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(py, filepath.Join(bin, "python")); err != nil {
		copyFile(t, py, filepath.Join(bin, "python"))
	}
	if err := os.WriteFile(filepath.Join(dir, ".venv", "pyvenv.cfg"), []byte("home = "+filepath.Dir(py)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkOneLineError checks pyattach's error output: one error line
// holding want, then a hint.
func checkOneLineError(t *testing.T, out, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "pyattach: error: ") || !strings.HasPrefix(lines[1], "  hint: ") || !strings.Contains(lines[0], want) {
		t.Errorf("want a one-line error holding %q and a hint, got:\n%s", want, out)
	}
}

// readLaunchCommands returns the gdb setup command and the lldb init
// command of pyattach's configurations in launch.json.
func readLaunchCommands(t *testing.T, file string) (string, string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Configurations []struct {
			Type          string
			SetupCommands []struct{ Text string }
			InitCommands  []string
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var setup, initCmd string
	for _, c := range doc.Configurations {
		switch {
		case c.Type == "cppdbg" && len(c.SetupCommands) == 1:
			setup = c.SetupCommands[0].Text
		case c.Type == "lldb" && len(c.InitCommands) == 1:
			initCmd = c.InitCommands[0]
		}
	}
	if setup == "" || initCmd == "" {
		t.Fatalf("launch.json lacks pyattach's commands:\n%s", data)
	}
	return setup, initCmd
}
