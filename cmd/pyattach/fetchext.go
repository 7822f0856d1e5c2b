package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/extfetch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/pyversion"
)

// FetchExtensionCmd is `pyattach fetch-extension`.
type FetchExtensionCmd struct {
	Target  string `arg:"" optional:"" help:"A PID, interpreter, venv or script whose Python version to fetch the extension for."`
	Version string `name:"python-version" help:"The exact CPython version (X.Y.Z) instead of a target's." placeholder:"X.Y.Z"`
	BaseURL string `help:"Where CPython's sources are served by tag (default from the config file, else CPython's repository)." placeholder:"URL"`
}

// Run downloads the extension.
func (c *FetchExtensionCmd) Run(g *Globals, app *App, cfg *Config) error {
	version := c.Version
	if version == "" {
		if c.Target == "" {
			return withHint(fmt.Errorf("fetch-extension: no target and no --python-version"), "name a PID or interpreter, or give --python-version X.Y.Z")
		}
		opts := g.targetOptions(app)
		opts.NoModules = true
		res, err := target.Resolve(app.Ctx, c.Target, opts)
		if err != nil {
			return fmt.Errorf("fetch-extension %s: %w", c.Target, err)
		}
		version = res.Python.Version
		if v, err := pyversion.Parse(version); err != nil || !v.Tagged() || v.String() != version {
			return withHint(fmt.Errorf("fetch-extension %s: the interpreter's exact version is not known (only %q)", c.Target, version),
				"give it: pyattach fetch-extension --python-version X.Y.Z (python -c 'import platform; print(platform.python_version())')")
		}
	}
	base := c.BaseURL
	if base == "" {
		base = cfg.ExtensionBaseURL
	}
	if err := extfetch.CheckBaseURL(base); err != nil {
		return withHint(fmt.Errorf("fetch-extension: --base-url: %w", err), httpsHint)
	}
	ctx, cancel := context.WithTimeout(app.Ctx, 2*time.Minute)
	defer cancel()
	cache, err := privateCacheDir(app.dirs())
	if err != nil {
		return withHint(fmt.Errorf("fetch-extension: cannot write pyattach's cache: %w", err), "set XDG_CACHE_HOME to a writable directory of your own")
	}
	p, err := extfetch.Fetch(ctx, &http.Client{Timeout: time.Minute}, base, version, cache)
	if errors.Is(err, extfetch.ErrInvalidVersion) {
		return withHint(fmt.Errorf("fetch-extension %s: %w", version, err),
			"give the exact version: pyattach fetch-extension --python-version X.Y.Z (python3 -c 'import platform; print(platform.python_version())' prints it)")
	}
	if err != nil {
		return withHint(fmt.Errorf("fetch-extension %s: %w", version, err),
			"check the version and the network, or set extension_base_url in the config file to a mirror of CPython's sources")
	}
	fmt.Fprintf(app.Stdout, "%s\n", p)
	return nil
}
