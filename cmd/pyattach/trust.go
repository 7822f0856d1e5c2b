package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv/environ"
)

// TrustCmd is `pyattach trust`.
type TrustCmd struct {
	Path   string `arg:"" optional:"" help:"The project directory, or its .pyattach.toml (default: the one pyattach reads in this directory)." placeholder:"DIR|FILE"`
	List   bool   `help:"List the trusted files, and whether each is unchanged since."`
	Remove bool   `help:"Forget the file: its code-carrying settings are ignored again."`
}

// Run trusts, lists or forgets a project file.
func (c *TrustCmd) Run(app *App) error {
	store, err := config.LoadTrustStore(app.dirs())
	if err != nil {
		return withHint(err, "the trust store must be yours and not writable by others; remove it and trust your projects again: rm %s", shquote.Quote(config.TrustStorePath(app.dirs())))
	}
	if c.List {
		if c.Path != "" || c.Remove {
			return withHint(errors.New("trust --list takes no other argument"), "run: pyattach trust --list")
		}
		listed := store.List()
		if len(listed) == 0 {
			fmt.Fprintln(app.Stdout, "no project file is trusted; trust one with: pyattach trust [DIR]")
		}
		for _, l := range listed {
			fmt.Fprintf(app.Stdout, "%-8s %s\n", l.State, l.Path)
		}
		return nil
	}
	file, err := c.projectFile(app)
	if err != nil {
		return err
	}
	if c.Remove {
		if !store.Remove(file) && !store.Remove(filepath.Join(file, config.ProjectFileName)) {
			return withHint(fmt.Errorf("trust --remove: %s is not trusted", file), "list the trusted files with: pyattach trust --list")
		}
		if err := store.Save(); err != nil {
			return fmt.Errorf("trust --remove: %w", err)
		}
		fmt.Fprintf(app.Stdout, "no longer trusted: %s\n", file)
		return nil
	}
	if err := saferead.CheckTrusted(file, os.Geteuid()); err != nil {
		return withHint(fmt.Errorf("trust %s: %w", file, err), "%s", trustFix(err, file, app.dirs()))
	}
	data, err := config.ReadFile(file)
	if err != nil {
		return err
	}
	if err := config.Check(file, data); err != nil {
		return err
	}
	sum := store.Set(file, data)
	if err := store.Save(); err != nil {
		return fmt.Errorf("trust %s: %w", file, err)
	}
	fmt.Fprintf(app.Stdout, "trusted %s (sha256 %s)\n", file, sum)
	return nil
}

// trustFix is the hint for a file that fails saferead.CheckTrusted.
func trustFix(err error, file string, dirs environ.Dirs) string {
	var ue *saferead.UntrustedError
	if errors.As(err, &ue) && strings.HasPrefix(ue.Reason, "writable by") {
		return fmt.Sprintf("no one else may be able to change a file that gdb's code comes from: chmod go-w %s, then run pyattach trust again", shquote.Quote(ue.Component))
	}
	return fmt.Sprintf("only a file owned by you or root can be trusted: review it and copy the settings you want into %s, or, if it is yours, chown it to yourself", dirs.ConfigFile())
}

// projectFile is the absolute path of the project file c names.
func (c *TrustCmd) projectFile(app *App) (string, error) {
	if c.Path == "" {
		p := config.FindProject(app.Cwd, app.Env.Get("HOME"))
		if p == "" {
			return "", withHint(fmt.Errorf("trust: no %s in %s or a parent directory", config.ProjectFileName, app.Cwd), "name the project: pyattach trust DIR")
		}
		return p, nil
	}
	p := c.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(app.Cwd, p)
	}
	p = filepath.Clean(p)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		p = filepath.Join(p, config.ProjectFileName)
	} else if err != nil && !c.Remove {
		return "", withHint(fmt.Errorf("trust: %w", err), "name a project directory or its %s", config.ProjectFileName)
	}
	if _, err := os.Stat(p); err != nil && !c.Remove {
		return "", withHint(fmt.Errorf("trust: %w", err), "name a project directory or its %s", config.ProjectFileName)
	}
	return p, nil
}
