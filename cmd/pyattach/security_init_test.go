package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/initfiles"
	"github.com/pyattach/pyattach/detect/testenv"
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

// TestSecurityInitHostileNames: for each
// hostile project name, `pyattach init --gdb --lldb --vscode --trust`
// either refuses it with a one-line error and writes nothing, or writes
// files that the real gdb 13 and lldb 14 read back exactly: the user's
// gdbinit trusts the project's .gdbinit and nothing else (not a sibling
// the raw name matches as a pattern, not a directory a link named like
// the escaped entry points to), launch.json's gdb and lldb commands
// source the written files, and no injected command runs.
func TestSecurityInitHostileNames(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	lldb := testenv.Need(t, "lldb")
	py := testenv.Debian(t).Exe
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
			initMkdirAll(t, 0o755, root, home)
			project := filepath.Join(root, tc.name)
			initFakeVenv(t, py, project)
			env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
				"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
				"PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages"}
			// pyattach's debug store, as after "symbols install": the
			// .gdbinit then names it, and gdb's "show debug-file-directory"
			// proves the file was read.
			debugDir := filepath.Join(home, ".local", "share", "pyattach", "debug")
			initMkdirAll(t, 0o700, debugDir)
			userInit := filepath.Join(home, ".config", "gdb", "gdbinit")
			marker := func(dir, what string) {
				initMkdirAll(t, 0o755, dir)
				initWriteFile(t, filepath.Join(dir, ".gdbinit"), "echo "+what+"-LOADED\\n\n", 0o644)
			}
			if tc.sibling != "" {
				marker(filepath.Join(root, tc.sibling), "SIBLING")
			}
			// A link named like the entry escaped without padding.
			link := ""
			if esc := naiveEscape(tc.name); esc != tc.name && !strings.ContainsAny(tc.name, ":\n\r") {
				marker(filepath.Join(root, evilDir(i)), "EVIL")
				link = filepath.Join(root, esc)
				initSymlink(t, evilDir(i), link)
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
				initCheckError(t, out, tc.refused)
				for _, f := range []string{filepath.Join(project, ".gdbinit"), filepath.Join(project, ".lldbinit"), filepath.Join(project, ".vscode"), userInit} {
					if _, err := os.Lstat(f); err == nil {
						t.Errorf("refused, but %s was written", f)
					}
				}
				if strings.Contains(tc.refused, "':'") {
					// Without --trust the .gdbinit is written, and the
					// advice is a warning, not a line that trusts more.
					out, err := runIn(t, root, env, bin, "--offline", "init", "--gdb", project)
					if err != nil || !strings.Contains(out, "warning: gdb loads") || strings.Contains(out, "add-auto-load-safe-path") {
						t.Errorf("init --gdb without --trust: %v\n%s", err, out)
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

			// The advice printed without --trust, to a user whose gdb init
			// file lacks it, is that same line.
			advice, err := runIn(t, root, append(env[:len(env):len(env)], "XDG_CONFIG_HOME="+t.TempDir()), bin, "--offline", "init", "--gdb", project)
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

// initFakeVenv makes dir/.venv/bin/python a copy of py, with its
// pyvenv.cfg.
func initFakeVenv(t *testing.T, py, dir string) {
	t.Helper()
	bin := filepath.Join(dir, ".venv", "bin")
	initMkdirAll(t, 0o755, bin)
	if err := os.Link(py, filepath.Join(bin, "python")); err != nil {
		testenv.CopyFile(t, py, filepath.Join(bin, "python"), 0)
	}
	if err := os.WriteFile(filepath.Join(dir, ".venv", "pyvenv.cfg"), []byte("home = "+filepath.Dir(py)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// initCheckError checks pyattach's error output: one error line
// holding want, then a hint.
func initCheckError(t *testing.T, out, want string) {
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
		case c.Type == "cppdbg" && len(c.SetupCommands) > 0:
			setup = c.SetupCommands[0].Text // the .gdbinit's source line comes first
		case c.Type == "lldb" && len(c.InitCommands) == 1:
			initCmd = c.InitCommands[0]
		}
	}
	if setup == "" || initCmd == "" {
		t.Fatalf("launch.json lacks pyattach's commands:\n%s", data)
	}
	return setup, initCmd
}

// initTrustEnv runs `pyattach init --gdb --trust` on project with HOME in
// home, and returns its output and error.
func initTrust(t *testing.T, home, project string, extra ...string) (string, error) {
	t.Helper()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}
	// pyattach's debug store exists, so that the .gdbinit names it.
	initMkdirAll(t, 0o700, filepath.Join(home, ".local", "share", "pyattach", "debug"))
	args := append([]string{"--offline", "init", "--gdb", "--trust", "--python", "/usr/bin/python3.11"}, extra...)
	return runIn(t, project, env, pyattachBin(t), append(args, project)...)
}

// initTrustOK runs initTrust, which must succeed, and returns its output.
func initTrustOK(t *testing.T, home, project string) string {
	t.Helper()
	out, err := initTrust(t, home, project)
	if err != nil {
		t.Fatalf("init --trust: %v\n%s", err, out)
	}
	return out
}

// initTrustRefused runs initTrust, which must fail with want in its
// error; what says what a success would have done.
func initTrustRefused(t *testing.T, home, project, what, want string) {
	t.Helper()
	out, err := initTrust(t, home, project)
	if err == nil {
		t.Fatalf("init --trust %s:\n%s", what, out)
	}
	initCheckError(t, out, want)
}

// TestSecurityInitUserGDBInit: --trust writes the one
// user init file gdb reads, never through a link or directory of another
// user, keeps the user's own link and the file's mode, and compares the
// exact line it writes.
func TestSecurityInitUserGDBInit(t *testing.T) {
	testenv.Debian(t)
	testenv.NeedRoot(t, "to give files to another user")
	const nobody = 65534
	setup := func(t *testing.T) (home, project, line string) {
		home = filepath.Join(t.TempDir(), "home")
		project = filepath.Join(t.TempDir(), "p*")
		initMkdirAll(t, 0o755, home, project)
		return home, project, safeLineFor(t, project)
	}

	t.Run("link owned by another user", func(t *testing.T) {
		home, project, _ := setup(t)
		victim := filepath.Join(t.TempDir(), "victim")
		initWriteFile(t, victim, "root's file\n", 0o644)
		link := filepath.Join(home, ".config", "gdb", "gdbinit")
		initSymlink(t, victim, link)
		if err := os.Lchown(link, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		initTrustRefused(t, home, project, "wrote through another user's link", "symbolic link owned by uid 65534")
		if _, err := os.Lstat(filepath.Join(project, ".gdbinit")); err == nil {
			t.Error("refused, but the project's .gdbinit was written")
		}
		if got := initReadFile(t, victim); got != "root's file\n" {
			t.Errorf("the link's target was changed:\n%s", got)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced: %v", err)
		}
	})

	t.Run("directory owned by another user", func(t *testing.T) {
		home, project, _ := setup(t)
		dir := filepath.Join(home, ".config")
		initMkdirAll(t, 0o755, dir)
		if err := os.Chown(dir, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		initTrustRefused(t, home, project, "wrote into another user's directory", "owned by uid 65534")
		if _, err := os.Lstat(filepath.Join(dir, "gdb")); err == nil {
			t.Error("init --trust created a directory in another user's directory")
		}
	})

	t.Run("own link kept, mode kept", func(t *testing.T) {
		home, project, line := setup(t)
		target := filepath.Join(home, "dotfiles", "gdbinit")
		initMkdirAll(t, 0o755, filepath.Dir(target))
		initWriteFile(t, target, "set print pretty on", 0o600)
		link := filepath.Join(home, ".config", "gdb", "gdbinit")
		initSymlink(t, target, link)
		initTrustOK(t, home, project)
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the user's link was replaced: %v", err)
		}
		want := "set print pretty on\n# added by pyattach init --trust\n" + line + "\n"
		if got := initReadFile(t, target); got != want {
			t.Errorf("target:\n%q\nwant\n%q", got, want)
		}
		if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode not kept: %v %v", fi.Mode(), err)
		}
	})

	t.Run("existing ~/.gdbinit", func(t *testing.T) {
		gdb := testenv.Need(t, "gdb")
		home, project, line := setup(t)
		dotGDBInit := filepath.Join(home, ".gdbinit")
		initWriteFile(t, dotGDBInit, "echo USER-GDBINIT\\n\n", 0o640)
		initTrustOK(t, home, project)
		if _, err := os.Lstat(filepath.Join(home, ".config", "gdb", "gdbinit")); err == nil {
			t.Error("~/.config/gdb/gdbinit created: gdb then no longer reads ~/.gdbinit")
		}
		if got := initReadFile(t, dotGDBInit); !strings.HasSuffix(got, "\n"+line+"\n") {
			t.Errorf("~/.gdbinit lacks the line %q:\n%s", line, got)
		}
		if fi, err := os.Stat(dotGDBInit); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("mode not kept: %v %v", fi.Mode(), err)
		}
		// gdb reads that file and the project's .gdbinit.
		o, _ := runIn(t, project, []string{"HOME=" + home, "XDG_CONFIG_HOME="}, gdb, "-batch", "-ex", "show debug-file-directory")
		if !strings.Contains(o, "USER-GDBINIT") || strings.Contains(o, "declined") || !strings.Contains(o, "pyattach/debug") {
			t.Errorf("gdb did not read ~/.gdbinit and the project's .gdbinit:\n%s", o)
		}
	})

	t.Run("exact line", func(t *testing.T) {
		home, project, line := setup(t)
		file := filepath.Join(home, ".config", "gdb", "gdbinit")
		initMkdirAll(t, 0o755, filepath.Dir(file))
		// The line as a continuation of an echo, and the raw line an
		// older pyattach wrote: neither is the command.
		raw := "add-auto-load-safe-path " + filepath.Join(project, ".gdbinit")
		initWriteFile(t, file, "echo x \\\n"+line+"\n"+raw+"\n", 0o644)
		out := initTrustOK(t, home, project)
		if !strings.Contains(out, "warning: "+file+" also has the line") {
			t.Errorf("no warning about the raw line:\n%s", out)
		}
		if got := initReadFile(t, file); strings.Count(got, "\n"+line+"\n") != 2 {
			t.Errorf("the line was not added as a command of its own:\n%s", got)
		}
		if out, err := initTrust(t, home, project); err != nil || !strings.Contains(out, "already trusts") {
			t.Errorf("second run: %v\n%s", err, out)
		}
	})
}

// TestSecurityInitProjectOthersCanChange: --trust
// refuses a project directory that another user owns or may write: gdb
// would run whatever they put in its .gdbinit.
func TestSecurityInitProjectOthersCanChange(t *testing.T) {
	testenv.Debian(t)
	testenv.NeedRoot(t, "to give files to another user")
	for name, change := range map[string]func(string) error{
		"writable by others": func(d string) error { return os.Chmod(d, 0o777) },
		"owned by nobody":    func(d string) error { return os.Chown(d, 65534, 65534) },
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			project := filepath.Join(t.TempDir(), "p")
			if err := os.Mkdir(project, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := change(project); err != nil {
				t.Fatal(err)
			}
			initTrustRefused(t, home, project, "trusted "+name, "init --trust: ")
			if _, err := os.Lstat(filepath.Join(home, ".config", "gdb", "gdbinit")); err == nil {
				t.Error("the user's gdbinit was written")
			}
		})
	}
}

// safeLineFor is the trust line init writes for project.
func safeLineFor(t *testing.T, project string) string {
	t.Helper()
	line, err := initfiles.SafePathLine(project)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// initMkdirAll makes each of dirs, with its parents, with mode.
func initMkdirAll(t *testing.T, mode os.FileMode, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// initSymlink makes link, and its directory, a link to target.
func initSymlink(t *testing.T, target, link string) {
	t.Helper()
	initMkdirAll(t, 0o755, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func initWriteFile(t *testing.T, name, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
}

func initReadFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSecurityInitLLDBTrust: init --lldb --trust adds its
// ~/.lldbinit line with gdb's care: once, keeping the file's mode and
// content, into ~/.lldbinit-lldb when lldb reads that instead; refused,
// with nothing written, for a project others can change, a user init
// file reached through another user's link, and a project that is the
// home directory (its .lldbinit is lldb's user init file).
func TestSecurityInitLLDBTrust(t *testing.T) {
	testenv.Debian(t)
	run := func(t *testing.T, home, project string) (string, error) {
		t.Helper()
		env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
			"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}
		return runIn(t, project, env, pyattachBin(t), "--offline", "init", "--lldb", "--trust", "--python", "/usr/bin/python3.11", project)
	}
	setup := func(t *testing.T) (home, project string) {
		home = filepath.Join(t.TempDir(), "home")
		project = filepath.Join(t.TempDir(), "p q")
		initMkdirAll(t, 0o755, home, project)
		return home, project
	}
	refused := func(t *testing.T, home, project, want string) {
		t.Helper()
		out, err := run(t, home, project)
		if err == nil {
			t.Fatalf("accepted:\n%s", out)
		}
		initCheckError(t, out, want)
		if _, err := os.Stat(filepath.Join(project, ".lldbinit")); err == nil && project != home {
			t.Error("refused, but the project .lldbinit was written")
		}
	}
	t.Run("once, mode and content kept", func(t *testing.T) {
		home, project := setup(t)
		user := filepath.Join(home, ".lldbinit")
		initWriteFile(t, user, "settings set target.x86-disassembly-flavor intel", 0o600)
		for i := 0; i < 2; i++ {
			if out, err := run(t, home, project); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		}
		data, err := os.ReadFile(user)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), "settings set target.x86-disassembly-flavor intel\n# added by pyattach init --trust") || strings.Count(string(data), "\nscript exec(") != 1 {
			t.Errorf("~/.lldbinit:\n%s", data)
		}
		if st, err := os.Stat(user); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("mode not kept: %v %v", st.Mode(), err)
		}
	})
	t.Run("lldbinit-lldb", func(t *testing.T) {
		home, project := setup(t)
		initWriteFile(t, filepath.Join(home, ".lldbinit-lldb"), "", 0o644)
		if out, err := run(t, home, project); err != nil || !strings.Contains(out, "in "+filepath.Join(home, ".lldbinit-lldb")) {
			t.Fatalf("%v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(home, ".lldbinit")); err == nil {
			t.Error("~/.lldbinit written, which lldb does not read beside ~/.lldbinit-lldb")
		}
	})
	t.Run("project writable by others", func(t *testing.T) {
		home, project := setup(t)
		if err := os.Chmod(project, 0o777); err != nil {
			t.Fatal(err)
		}
		refused(t, home, project, "init --trust: ")
		if _, err := os.Stat(filepath.Join(home, ".lldbinit")); err == nil {
			t.Error("~/.lldbinit written")
		}
	})
	t.Run("home directory", func(t *testing.T) {
		home, _ := setup(t)
		initWriteFile(t, filepath.Join(home, ".lldbinit"), "# mine\n", 0o644)
		refused(t, home, home, "init --lldb: ")
		if data, _ := os.ReadFile(filepath.Join(home, ".lldbinit")); string(data) != "# mine\n" {
			t.Errorf("~/.lldbinit changed:\n%s", data)
		}
	})
	t.Run("link owned by another user", func(t *testing.T) {
		testenv.NeedRoot(t, "to give a link to another user")
		home, project := setup(t)
		other := filepath.Join(t.TempDir(), "theirs")
		initWriteFile(t, other, "", 0o644)
		initSymlink(t, other, filepath.Join(home, ".lldbinit"))
		if err := os.Lchown(filepath.Join(home, ".lldbinit"), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		refused(t, home, project, "init --trust: ")
		if data, _ := os.ReadFile(other); len(data) != 0 {
			t.Errorf("the other user's file was written:\n%s", data)
		}
	})
}
