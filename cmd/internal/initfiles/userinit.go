package initfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/venv/environ"
)

// UserLLDBInit is the user init file lldb 14 reads: ~/.lldbinit-lldb
// when it exists (lldb then ignores ~/.lldbinit), else ~/.lldbinit.
func UserLLDBInit(env environ.Env, cwd string) (string, error) {
	home := env.Get("HOME")
	if home == "" {
		return "", errors.New("HOME is not set: no user lldb init file")
	}
	if !filepath.IsAbs(home) {
		home = filepath.Join(cwd, home)
	}
	own := filepath.Join(home, ".lldbinit-lldb")
	if _, err := os.Stat(own); err == nil {
		return own, nil
	}
	return filepath.Join(home, ".lldbinit"), nil
}

// SameFile reports whether a and b name one existing file, or are the
// same path.
func SameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// HasLine reports whether the user init file has line as a command.
func HasLine(file, line string) bool {
	data, err := os.ReadFile(file)
	return err == nil && hasCommandLine(data, line)
}

// SafePathLine is the add-auto-load-safe-path line for dir's .gdbinit.
// gdb adds the realpath of each entry as a further pattern, unescaped,
// so the entry names the file by its resolved path: its realpath is then
// itself (or fails, for an escaped entry) and adds nothing.
func SafePathLine(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return gdbgen.SafePathLine(filepath.Join(real, ".gdbinit"))
}

// UserGDBInit is the one user init file gdb 13 reads:
// $XDG_CONFIG_HOME/gdb/gdbinit (default ~/.config/gdb/gdbinit) when it
// exists, else ~/.gdbinit when that exists. A new file goes in the first
// place; creating it while ~/.gdbinit exists would make gdb stop reading
// ~/.gdbinit.
func UserGDBInit(env environ.Env, cwd string) (string, error) {
	home := env.Get("HOME")
	cfgDir := env.Get("XDG_CONFIG_HOME")
	if cfgDir == "" {
		if home == "" {
			return "", errors.New("HOME is not set: no user gdb init file")
		}
		cfgDir = filepath.Join(home, ".config")
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(cwd, p)
	}
	xdg := filepath.Join(abs(cfgDir), "gdb", "gdbinit")
	if _, err := os.Stat(xdg); err == nil {
		return xdg, nil
	}
	if home != "" {
		h := filepath.Join(abs(home), ".gdbinit")
		if _, err := os.Stat(h); err == nil {
			return h, nil
		}
	}
	return xdg, nil
}

// UserInitTarget returns the file to rewrite for the user's gdb init
// file: gdb runs it as the user, so it may be reached only through links
// and directories that saferead.CheckTrusted allows (none of another
// user's). A link of the user's own is kept: its target is returned.
// Nothing is written.
func UserInitTarget(file string, uid int) (string, error) {
	if _, err := os.Lstat(file); err == nil {
		if err := saferead.CheckTrusted(file, uid); err != nil {
			return "", err
		}
		return filepath.EvalSymlinks(file)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	top := filepath.Dir(file)
	for {
		if _, err := os.Lstat(top); err == nil || filepath.Dir(top) == top {
			break
		}
		top = filepath.Dir(top)
	}
	if err := saferead.CheckTrusted(top, uid); err != nil {
		return "", err
	}
	return file, nil
}

// AddTrustLine adds line to target (from UserInitTarget; shown as file)
// unless that exact line is there as a command of its own, keeping the
// file's mode; warnings go to warn. oldLine, when not "", is what older versions wrote (the
// raw path, read by gdb as a pattern): a warning asks to remove it. note
// ends the comment line written before line.
func AddTrustLine(file, target, line, oldLine, note string, uid int, warn io.Writer) (bool, error) {
	var data []byte
	mode := os.FileMode(0o644)
	st, err := os.Stat(target)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return false, fmt.Errorf("%s is not a regular file", target)
	case err == nil:
		mode = st.Mode().Perm()
		if data, err = os.ReadFile(target); err != nil {
			return false, err
		}
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		if err := saferead.CheckTrusted(dir, uid); err != nil {
			return false, err
		}
	default:
		return false, err
	}
	if hasCommandLine(data, line) {
		return false, nil
	}
	if oldLine != "" && oldLine != line && hasCommandLine(data, oldLine) {
		fmt.Fprintf(warn, "warning: %s also has the line %q, which gdb reads as a pattern that may trust other files; remove it\n", file, oldLine)
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, []byte("# added by pyattach init --trust"+note+"\n"+line+"\n")...)
	return true, writeFile(target, data, mode)
}

// hasCommandLine reports whether data has line exactly as one line that
// is not the continuation of a line ending in a backslash.
func hasCommandLine(data []byte, line string) bool {
	cont := false
	for _, l := range strings.Split(string(data), "\n") {
		if !cont && l == line {
			return true
		}
		cont = strings.HasSuffix(l, "\\")
	}
	return false
}

// writeFile writes an init file atomically (safefs.WriteFile).
func writeFile(name string, data []byte, perm os.FileMode) error {
	if err := safefs.WriteFile(name, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
