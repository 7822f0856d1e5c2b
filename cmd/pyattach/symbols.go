package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/pyattach/pyattach/cmd/internal/symbols"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv"
)

// SymbolsCmd is `pyattach symbols`.
type SymbolsCmd struct {
	Install SymbolsInstallCmd `cmd:"" help:"Install a <wheel>-debug-symbols.zip where gdb and lldb find it."`
	List    SymbolsListCmd    `cmd:"" help:"List installed debug-symbol packages."`
	Remove  SymbolsRemoveCmd  `cmd:"" help:"Remove an installed debug-symbol package."`
}

// SymbolsInstallCmd is `pyattach symbols install`.
type SymbolsInstallCmd struct {
	Zip    string `arg:"" type:"existingfile" help:"The <wheel-stem>-debug-symbols.zip file."`
	Venv   string `help:"The virtualenv the distribution is installed in (default: ./.venv or ./venv)." placeholder:"DIR" xor:"where"`
	Python string `help:"The interpreter the distribution is installed for." placeholder:"PATH" xor:"where"`
	JSON   bool   `help:"Print the report as JSON."`
}

func (c *SymbolsInstallCmd) sitePackages(app *App) ([]string, error) {
	if c.Python != "" {
		env, err := venv.FindEnv(c.Python)
		if err != nil {
			return nil, err
		}
		return symbols.SitePackagesOf(env, c.Python)
	}
	dir := c.Venv
	if dir == "" {
		for _, d := range []string{".venv", "venv"} {
			p := filepath.Join(app.Cwd, d)
			if _, err := os.Stat(filepath.Join(p, "pyvenv.cfg")); err == nil {
				dir = p
				break
			}
		}
		if dir == "" {
			return nil, withHint(errors.New("no --venv or --python given, and no .venv or venv here"),
				"say where the distribution is installed: pyattach symbols install --venv DIR ZIP, or --python PATH")
		}
	}
	env, err := venv.Detect(dir)
	if err != nil {
		return nil, inDir(err, dir)
	}
	return symbols.SitePackagesOf(env, env.Python)
}

// Run installs the zip.
func (c *SymbolsInstallCmd) Run(app *App) error {
	// A FIFO or a device is refused first (Install would refuse it too).
	if f, err := saferead.Open(c.Zip); errors.Is(err, saferead.ErrNotRegular) {
		var nr *saferead.NotRegularError
		errors.As(err, &nr)
		return withHint(fmt.Errorf("symbols install: %w", err), "%s", notRegularHint(nr, "the debug-symbols zip file itself"))
	} else if err == nil {
		f.Close()
	}
	sp, err := c.sitePackages(app)
	if err != nil {
		return fmt.Errorf("symbols install: %w", err)
	}
	dist, err := symbols.FindDistribution(filepath.Base(c.Zip), sp)
	if err != nil {
		return fmt.Errorf("symbols install %s: %w", c.Zip, err)
	}
	dir, err := privateStoreDir(app.dirs())
	if err != nil {
		return withHint(fmt.Errorf("symbols: cannot write the debug store: %w", err), "set XDG_DATA_HOME to a writable directory of your own")
	}
	store := &symbols.Store{Dir: dir}
	rep, err := store.Install(c.Zip, dist)
	if rep != nil && c.JSON {
		if jerr := writeJSON(app.Stdout, rep); jerr != nil {
			return jerr
		}
	} else if rep != nil {
		for _, f := range rep.Install.Files {
			fmt.Fprintf(app.Stdout, "installed %s  (%s, verified by %s)\n", f.Entry, f.SO, f.Verified)
		}
		for _, m := range rep.Mismatches {
			fmt.Fprintf(app.Stdout, "NOT installed %s\n", m.String())
		}
		fmt.Fprintf(app.Stdout, "%s %s: %d debug files in %s\n", rep.Install.Name, rep.Install.Version, len(rep.Install.Files), store.Dir)
	}
	if err != nil {
		return fmt.Errorf("symbols install %s: %w", c.Zip, err)
	}
	return nil
}

// SymbolsListCmd is `pyattach symbols list`.
type SymbolsListCmd struct {
	JSON bool `help:"Print the installs as JSON."`
}

// Run lists the installs.
func (c *SymbolsListCmd) Run(app *App) error {
	store := &symbols.Store{Dir: storeDir(app.dirs())}
	list, err := store.List()
	if err != nil {
		return fmt.Errorf("symbols list: %w", err)
	}
	if c.JSON {
		if list == nil {
			list = []symbols.Install{}
		}
		return writeJSON(app.Stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintf(app.Stdout, "no debug-symbol packages installed in %s\n", store.Dir)
		return nil
	}
	tw := tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DISTRIBUTION\tVERSION\tFILES\tSITE-PACKAGES")
	for _, in := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", in.Name, in.Version, len(in.Files), in.SitePackages)
	}
	return tw.Flush()
}

// SymbolsRemoveCmd is `pyattach symbols remove`.
type SymbolsRemoveCmd struct {
	Name string `arg:"" help:"Distribution name, or NAME==VERSION."`
}

// Run removes an install.
func (c *SymbolsRemoveCmd) Run(app *App) error {
	dir, err := privateStoreDir(app.dirs())
	if err != nil {
		return withHint(fmt.Errorf("symbols: cannot write the debug store: %w", err), "set XDG_DATA_HOME to a writable directory of your own")
	}
	store := &symbols.Store{Dir: dir}
	removed, err := store.Remove(c.Name)
	if err != nil {
		return fmt.Errorf("symbols remove %s: %w", c.Name, err)
	}
	fmt.Fprintf(app.Stdout, "removed %s: %d files\n", c.Name, len(removed))
	for _, p := range removed {
		fmt.Fprintf(app.Stdout, "  %s\n", strings.TrimPrefix(p, store.Dir+"/"))
	}
	return nil
}
