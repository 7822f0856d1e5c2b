package main

import (
	"errors"
	"fmt"
	"path/filepath"
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
		safetext.Fprintf(app.Stderr, "pyattach: %s is a %s-compressed core; using its copy decompressed before: %s (%s)\n", path, c.Format, c.Path, zcore.Size(c.Size))
	} else {
		safetext.Fprintf(app.Stderr, "pyattach: %s is a %s-compressed core; decompressed to %s (%s in %s)\n", path, c.Format, c.Path, zcore.Size(c.Size), c.Took.Round(time.Millisecond))
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
	case e.Kind == "write":
		return withHint(err, "free space under %s, or point XDG_CACHE_HOME elsewhere", dir)
	}
	return err
}
