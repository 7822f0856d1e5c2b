package main

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/cmd/internal/zcore"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv/environ"
)

// setMaxCoreSize sets app's cap on a decompressed core: --max-core-size,
// else the configuration's max_core_size, else zcore.DefaultMaxSize.
func setMaxCoreSize(app *App, flag, cfg string) error {
	s, from := flag, "--max-core-size"
	if s == "" {
		s, from = cfg, "max_core_size"
	}
	if s == "" {
		app.MaxCoreSize = zcore.DefaultMaxSize
		return nil
	}
	n, err := zcore.ParseSize(s)
	if err != nil {
		return withHint(fmt.Errorf("%s: %w", from, err), "write a size in bytes, or with a K, M, G or T suffix: --max-core-size 64G")
	}
	app.MaxCoreSize = n
	return nil
}

// inflateCore hands every command the uncompressed core: when path is
// a compressed core (zstd, lz4, xz or gzip, known by its magic bytes),
// it is decompressed once into pyattach's cache
// ($XDG_CACHE_HOME/pyattach/cores/SHA256.core) and that file is
// returned; nil for anything else (a PID, an uncompressed core, a
// program, a file that does not exist: the command says what it is).
// What the decompression did, and what a systemd-coredump file name
// says, are told on stderr.
func inflateCore(app *App, path string) (*zcore.Core, error) {
	if path == "" || target.IsPID(path) {
		return nil, nil
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(app.Cwd, abs)
	}
	if zcore.SniffFile(abs) == zcore.None {
		return nil, nil
	}
	dir, err := safefs.PrivateDir(app.dirs().CacheHome, environ.Name, "cores")
	if err != nil {
		return nil, withHint(fmt.Errorf("cannot write the core cache: %w", err), "set XDG_CACHE_HOME to a writable directory of your own with room for the core (export XDG_CACHE_HOME=$(mktemp -d))")
	}
	max := app.MaxCoreSize
	if max == 0 {
		max = zcore.DefaultMaxSize
	}
	c, err := zcore.Inflate(app.Ctx, abs, dir, max)
	if err != nil {
		return nil, explainInflate(err, path, dir)
	}
	if c.Reused {
		safetext.Fprintf(app.Stderr, "pyattach: %s: %s-compressed core; using its copy decompressed before: %s (%s)\n", path, c.Format, c.Path, zcore.Size(c.Size))
	} else {
		safetext.Fprintf(app.Stderr, "pyattach: %s: %s-compressed core, decompressed to %s (%s in %s)\n", path, c.Format, c.Path, zcore.Size(c.Size), c.Took.Round(time.Millisecond))
	}
	if n, ok := zcore.ParseName(filepath.Base(path)); ok {
		safetext.Fprintf(app.Stderr, "pyattach: systemd-coredump's name: process %d (%s), uid %d, dumped %s\n", n.PID, safetext.Escape(n.Comm), n.UID, n.Time.Format(time.RFC3339))
	}
	return c, nil
}

// inflatedPath is inflateCore's path for the debugger: the cached core,
// or path itself when it is not compressed.
func inflatedPath(app *App, path string) (string, error) {
	c, err := inflateCore(app, path)
	if err != nil || c == nil {
		return path, err
	}
	return c.Path, nil
}

// explainInflate adds the hint to a compressed core's error.
func explainInflate(err error, path, dir string) error {
	var e *zcore.Error
	var nr *saferead.NotRegularError
	switch {
	case errors.As(err, &nr):
		return withHint(fmt.Errorf("core %w", nr), "give the core file itself, a regular file: pyattach dump CORE")
	case !errors.As(err, &e):
		return err
	case e.Kind == "bomb":
		return withHint(err, "if the core is genuine, raise the cap: pyattach --max-core-size %s ... (or max_core_size in the configuration)", zcore.Size(4*e.Limit))
	case e.Kind == "space":
		return withHint(err, "free space under %s, or point XDG_CACHE_HOME at a larger file system", dir)
	case e.Kind == "corrupt":
		return withHint(err, "check the file with its own tool (zstd -t, lz4 -t, xz -t, gzip -t %s); copy it again if it was cut short", shquote.Quote(path))
	case e.Kind == "notcore":
		return withHint(err, "give a core file, compressed or not: pyattach dump CORE")
	case e.Kind == "write":
		return withHint(err, "free space under %s, or point XDG_CACHE_HOME elsewhere", dir)
	}
	return err
}

// coredumpHint is where a user without coredumpctl finds the core.
const coredumpHint = "coredumpctl comes with systemd-coredump; without it, give the core file itself: pyattach dump /var/lib/systemd/coredump/core.NAME.zst"

// coredumpCore finds the core which (a PID, or "latest") names through
// coredumpctl: its list (--json=short) picks the entry, its info says
// where the core is stored.
func coredumpCore(app *App, which string) (string, error) {
	if which != "latest" && !target.IsPID(which) {
		return "", withHint(fmt.Errorf("--coredump %s: not a PID or \"latest\"", safetext.Escape(which)), "pyattach dump --coredump PID, or pyattach dump --coredump latest")
	}
	ctl, err := lookPathAbs(app.Env, "coredumpctl")
	if err != nil {
		return "", withHint(fmt.Errorf("--coredump: coredumpctl is not installed: %w", err), coredumpHint)
	}
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(app.Ctx, ctl, args...)
		cmd.Env = append(append([]string(nil), app.Env...), "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return nil, fmt.Errorf("coredumpctl %s: %s", strings.Join(args, " "), safetext.Last(msg))
		}
		return out, nil
	}
	listArgs := []string{"--no-pager", "--json=short", "list"}
	if which != "latest" {
		listArgs = append(listArgs, which)
	}
	out, err := run(listArgs...)
	if err != nil {
		return "", withHint(err, "list the cores coredumpctl knows: coredumpctl list")
	}
	entries, err := zcore.ParseList(out)
	if err != nil {
		return "", withHint(err, "list the cores coredumpctl knows: coredumpctl list")
	}
	e, ok := zcore.Pick(entries, which)
	if !ok {
		return "", withHint(fmt.Errorf("--coredump %s: coredumpctl lists no such core", which), "list the cores coredumpctl knows: coredumpctl list")
	}
	info, err := run("--no-pager", "info", "-1", fmt.Sprint(e.PID))
	if err != nil {
		return "", withHint(err, "list the cores coredumpctl knows: coredumpctl list")
	}
	path := zcore.ParseStorage(string(info))
	if path == "" {
		return "", withHint(fmt.Errorf("--coredump %s: coredumpctl keeps no core file of process %d (%s; corefile: %s)", which, e.PID, safetext.Escape(e.Exe), safetext.Escape(e.CoreFile)),
			"write it out and dump that: coredumpctl dump %d -o core && pyattach dump core", e.PID)
	}
	safetext.Fprintf(app.Stderr, "pyattach: coredumpctl: process %d (%s), signal %d, core %s\n", e.PID, safetext.Escape(e.Exe), e.Sig, path)
	return path, nil
}
