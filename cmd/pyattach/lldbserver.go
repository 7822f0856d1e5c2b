package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv/environ"
)

// lldbServerEnv is the variable lldb reads the path of its lldb-server from.
const lldbServerEnv = "LLDB_DEBUGSERVER_PATH"

// lldbServerFor returns the program lldb should start as its lldb-server
// (LLDB_DEBUGSERVER_PATH) to attach to p's process, or "" when lldb's
// own does.
//
// lldb-server 14 learns a process's architecture from the file
// /proc/PID/exe names, opened at that path in its own mount namespace
// (lldb/source/Host/linux/Host.cpp, GetELFProcessCPUType: the first 0x20
// bytes, of which it uses the ELF class); for a process under pivot_root
// whose executable path does not exist here it gets none and crashes
// (SIGSEGV: "attach failed: lost connection"). The program returned is
// a script, in pyattach's private cache, that starts lldb-server in a
// private mount namespace where a file is shown at that path: a read-only
// overlay of the nearest directory this machine has, which adds that one
// name and hides nothing.
//
// The file is an ELF identification that pyattach writes itself (magic,
// class and byte order of the process's executable, zeros after), never
// the container's bytes, and is not executable: lldb-server runs as root
// and starts programs (lsb_release) in that namespace, and a container
// chooses its executable's path (/etc/ld.so.preload, a name on PATH).
// For the same reason a path this machine has is never covered: there
// lldb-server reads this machine's file, which serves as long as its
// class matches. It needs root.
func lldbServerFor(p plan.Plan, lldb string, env []string) (string, error) {
	if p.LLDBRoot == "" {
		return "", nil
	}
	// A chroot: /proc/PID/exe names the executable by this machine's
	// path (under the root), which lldb-server reads.
	if l, err := os.Readlink(filepath.Join(filepath.Dir(p.LLDBRoot), "exe")); err == nil && filepath.IsAbs(l) {
		if _, err := os.Lstat(l); err == nil {
			return "", nil
		}
	}
	exe := p.LLDBExe
	if !filepath.IsAbs(exe) || strings.Contains(exe+"/", "/../") {
		return "", fmt.Errorf("lldb: the process's executable %q is not a clean absolute path", exe)
	}
	if _, err := os.Lstat(exe); !errors.Is(err, fs.ErrNotExist) {
		// This machine has that path: lldb-server reads it.
		return "", nil
	}
	if os.Geteuid() != 0 {
		return "", withHint(fmt.Errorf("lldb-server cannot attach: it reads the process's executable %s at that path on this machine, where it exists only in the process's mount namespace", exe),
			"run pyattach as root (it shows lldb-server a file there in a private mount namespace), or use: pyattach gdb -p %d", p.PID)
	}
	ident, err := elfIdent(filepath.Join(p.LLDBRoot, exe))
	if err != nil {
		return "", withHint(fmt.Errorf("lldb: %w", err), "use: pyattach gdb -p %d", p.PID)
	}
	server := environ.Env(env).Get(lldbServerEnv)
	if server == "" {
		real, err := filepath.EvalSymlinks(lldb)
		if err != nil {
			return "", err
		}
		server = filepath.Join(filepath.Dir(real), "lldb-server")
	}
	unshare, err1 := lookPathAbs(env, "unshare")
	mount, err2 := lookPathAbs(env, "mount")
	if err := errors.Join(err1, err2); err != nil {
		return "", withHint(fmt.Errorf("lldb: %w", err), "install util-linux, whose unshare and mount start lldb-server in a private mount namespace")
	}
	// The nearest directory of the executable's path that exists here:
	// the overlay goes on it. Never "/": an overlay does not show the
	// file systems mounted below it (/proc).
	mnt := filepath.Dir(exe)
	for {
		if st, err := os.Stat(mnt); err == nil && st.IsDir() {
			break
		}
		mnt = filepath.Dir(mnt)
	}
	if mnt == "/" {
		return "", withHint(fmt.Errorf("lldb-server cannot attach: the process's executable %s is in a directory this machine lacks below /", exe),
			"use: pyattach gdb -p %d", p.PID)
	}
	sum := sha256.Sum256(append([]byte(exe+"\x00"), ident...))
	tree, err := safefs.PrivateDir(environ.Env(env).Dirs().CacheHome, environ.Name, "lldb-server", hex.EncodeToString(sum[:8]))
	if err != nil {
		return "", scriptCacheError(err)
	}
	lower := filepath.Join(tree, mnt)
	for _, s := range []string{lower, mnt, server, unshare, mount, exe} {
		if strings.ContainsAny(s, ",:\\") || strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return "", withHint(fmt.Errorf("lldb: path %q cannot be written into an overlay mount or a script", s),
				"set XDG_CACHE_HOME to a plain directory, or use: pyattach gdb -p %d", p.PID)
		}
	}
	stub := filepath.Join(tree, exe)
	if err := os.MkdirAll(filepath.Dir(stub), 0o755); err != nil {
		return "", scriptCacheError(err)
	}
	if err := safefs.WriteFile(stub, ident, 0o644); err != nil {
		return "", scriptCacheError(err)
	}
	script := "#!/bin/sh\n" +
		"# Generated by pyattach: lldb-server for a process whose executable\n" +
		"# " + exe + " exists only in its mount namespace. lldb-server 14 reads\n" +
		"# the ELF class at that path here and crashes without it: in a private\n" +
		"# mount namespace, an ELF identification is shown there (over " + mnt + ").\n" +
		"exec " + shquote.Quote(unshare) + " --mount --propagation private -- /bin/sh -c " +
		shquote.Quote(`"$1" -t overlay -o "ro,nosuid,nodev,lowerdir=$2:$3" pyattach "$3" && shift 3 && exec "$@"`) +
		" sh " + shquote.Join([]string{mount, lower, mnt, server}) + ` "$@"` + "\n"
	dir, err := safefs.PrivateDir(environ.Env(env).Dirs().CacheHome, environ.Name, "lldb-server")
	if err != nil {
		return "", scriptCacheError(err)
	}
	sum = sha256.Sum256([]byte(script))
	name := filepath.Join(dir, "lldb-server-"+hex.EncodeToString(sum[:8])+".sh")
	if err := safefs.WriteFile(name, []byte(script), 0o755); err != nil {
		return "", scriptCacheError(err)
	}
	return name, nil
}

// elfIdent returns the 64 bytes lldb-server is shown for the ELF file
// name: its magic, class and byte order, the ELF version, zeros after.
func elfIdent(name string) ([]byte, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b [6]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if string(b[:4]) != "\x7fELF" || b[4] < 1 || b[4] > 2 || b[5] < 1 || b[5] > 2 {
		return nil, fmt.Errorf("%s is not an ELF file lldb-server can read", name)
	}
	out := make([]byte, 64)
	copy(out, b[:])
	out[6] = 1 // EV_CURRENT
	return out, nil
}

// lookPath finds an executable file on env's PATH.
func lookPath(env []string, name string) (string, error) {
	for _, dir := range filepath.SplitList(environ.Env(env).Get("PATH")) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on PATH", name)
}

// lookPathAbs is lookPath for a program a script runs: a relative PATH
// entry would name another file in lldb-server's working directory.
func lookPathAbs(env []string, name string) (string, error) {
	p, err := lookPath(env, name)
	if err == nil && !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s is found on PATH only in the relative directory %s", name, filepath.Dir(p))
	}
	return p, err
}
