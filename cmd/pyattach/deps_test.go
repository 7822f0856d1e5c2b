package main

import (
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The direction of imports, in the spirit of go/build/deps_test.go:
//
//	cmd/pyattach -> cmd/internal/... -> venv/... -> detect/...
//	cmd/... -> gdbgen, lldbgen -> detect/plan
//
// detect/ holds the detectors: facts about files and processes, nothing
// above them. venv/ maps environments onto interpreters with them. The
// generators are pure: they turn a detect/plan.Plan into text and reach
// neither the file system nor the detectors. cmd/internal/ holds the
// orchestration (target resolution, plan building, doctor) and cmd/pyattach
// the command line, its commands only (configuration, init files, source
// maps and bundles' contents live in cmd/internal packages named for
// them). cmd/internal/doctor starts no process itself: every
// command goes through the Runner it is given; cmd/internal/dump runs gdb
// through its Runner too. detect/testenv serves tests only.
//
// Each rule names the module packages (by path prefix) and third-party
// modules a layer may import; the standard library is free except where
// a layer lists forbidden standard packages.
type layer struct {
	prefix    string   // packages this rule governs (longest prefix wins)
	own       []string // module package prefixes it may import
	external  []string // third-party module paths it may import
	forbidStd []string // standard packages it must not import
	forbidOwn []string // module packages it must not import, though own allows them
}

var layers = []layer{
	// The plan, the facts a debugger is handed, and the spelling of its
	// strings as Python literals: plain values, nothing of the module.
	{prefix: "detect/plan"},
	{prefix: "detect/plan/pyquote"},
	{prefix: "gdbgen", own: []string{"detect/plan"}, forbidStd: []string{"os", "os/exec", "net/http"}},
	{prefix: "lldbgen", own: []string{"detect/plan"}, forbidStd: []string{"os", "os/exec", "net/http"}},
	{prefix: "detect", own: []string{"detect/"}, external: []string{
		"golang.org/x/sys/unix",
	}},
	// The bundle format's compression is a well-kept zstd library, not
	// a hand-written one.
	{prefix: "cmd/internal/bundle/archive", own: []string{"detect/"}, external: []string{"github.com/klauspost/compress/zstd"}},
	// Compressed cores: well-kept decoders for each format
	// systemd-coredump and users write (zstd, lz4 frames, xz), gzip from
	// the standard library.
	{prefix: "cmd/internal/zcore", own: []string{"detect/", "cmd/internal/safefs"}, external: []string{
		"github.com/klauspost/compress/zstd",
		"github.com/pierrec/lz4/v4",
		"github.com/ulikunitz/xz",
		"golang.org/x/sys/unix",
	}},
	{prefix: "venv", own: []string{"detect/", "venv"}, external: []string{"golang.org/x/sys/unix"}},
	// The environment as a value, under venv so that venv and cmd share
	// it: nothing of the module below it.
	{prefix: "venv/environ"},
	{prefix: "cmd/internal", own: []string{"detect/", "venv", "gdbgen", "lldbgen", "cmd/internal/"}, external: []string{
		"golang.org/x/sys/unix",
	}},
	// The debuginfod client draws its downloads' progress bar.
	{prefix: "cmd/internal/debuginfod", own: []string{"detect/", "venv", "cmd/internal/"}, external: []string{
		"github.com/schollz/progressbar/v3",
		"golang.org/x/sys/unix",
	}},
	// doctor runs every command through its injected Runner (with a
	// deadline), so that each check can be tested on canned output.
	{prefix: "cmd/internal/doctor", own: []string{"detect/", "venv", "gdbgen", "cmd/internal/"}, forbidStd: []string{"os/exec"}},
	// dump runs gdb through its injected Runner, so that its parsing and
	// output are tested on literal gdb JSON. It reads cores with
	// detect/core, not through the planner, which makes debugger plans.
	{prefix: "cmd/internal/dump", own: []string{"detect/", "venv", "gdbgen", "cmd/internal/"}, forbidStd: []string{"os/exec"}, forbidOwn: []string{"cmd/internal/planner"}},
	// bundle packs and opens bundles; it reads cores with detect/core.
	{prefix: "cmd/internal/bundle", own: []string{"detect/", "venv", "gdbgen", "lldbgen", "cmd/internal/"}, external: []string{"golang.org/x/sys/unix"}, forbidOwn: []string{"cmd/internal/planner"}},
	// The DAP proxy relays messages between streams it is given: it
	// starts no process (the command starts the adapter) and knows no
	// plan (the command's Prepare builds it).
	{prefix: "cmd/internal/dap", own: []string{"cmd/internal/safetext", "cmd/internal/dap"}, forbidStd: []string{"os/exec"}},
	// The configuration files are TOML, read by one well-kept decoder
	// (after config's own size and nesting checks).
	{prefix: "cmd/internal/config", own: []string{"detect/", "venv", "cmd/internal/"}, external: []string{"github.com/BurntSushi/toml"}},
	// adrg/xdg reads the process environment: only the command boundary
	// (main's hostLayout) may ask it, once, for the system's layout.
	{prefix: "cmd/pyattach", own: []string{"detect/", "venv", "gdbgen", "lldbgen", "cmd/internal/"}, external: []string{
		"github.com/adrg/xdg",
		"github.com/alecthomas/kong",
		"golang.org/x/sys/unix",
		"golang.org/x/term",
	}},
}

const modulePath = "github.com/pyattach/pyattach"

// testOnly are module packages that only tests may import.
var testOnly = []string{"detect/testenv", "cmd/internal/dap/daptest"}

func hasPrefixPath(p, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(p, prefix)
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

func ruleFor(pkg string) (layer, bool) {
	best, found := layer{}, false
	for _, l := range layers {
		if hasPrefixPath(pkg, l.prefix) && len(l.prefix) > len(best.prefix) {
			best, found = l, true
		}
	}
	return best, found
}

func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// modulePackages lists the module's packages (relative import paths) with
// their non-test and test imports, read by go/build.
func modulePackages(t *testing.T) map[string]*build.Package {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not at %s: %v", root, err)
	}
	pkgs := map[string]*build.Package{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(p, build.ImportComment)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		pkgs[filepath.ToSlash(rel)] = bp
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func TestImportDirection(t *testing.T) {
	pkgs := modulePackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages: %v", len(pkgs), pkgs)
	}
	var names []string
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		bp := pkgs[name]
		if name == "." {
			t.Errorf("a Go package at the module root: the top level is cmd, detect, gdbgen, lldbgen, venv")
			continue
		}
		rule, ok := ruleFor(name)
		if !ok {
			t.Errorf("%s: no import rule covers it; add one to deps_test.go", name)
			continue
		}
		for _, imp := range bp.Imports {
			if err := checkImport(rule, imp); err != "" {
				t.Errorf("%s imports %s: %s", name, imp, err)
			}
		}
		for _, imp := range append(append([]string{}, bp.TestImports...), bp.XTestImports...) {
			if strings.HasPrefix(imp, modulePath+"/cmd/pyattach") {
				t.Errorf("%s's tests import the command %s", name, imp)
			}
		}
	}
}

func checkImport(rule layer, imp string) string {
	if isStd(imp) {
		for _, f := range rule.forbidStd {
			if imp == f {
				return "the standard package is forbidden in " + rule.prefix
			}
		}
		return ""
	}
	rel, own := strings.CutPrefix(imp, modulePath+"/")
	if !own {
		for _, e := range rule.external {
			if imp == e || strings.HasPrefix(imp, e+"/") {
				return ""
			}
		}
		return "third-party module not allowed in " + rule.prefix
	}
	for _, p := range testOnly {
		if hasPrefixPath(rel, p) {
			return "a test-only package"
		}
	}
	for _, p := range rule.forbidOwn {
		if hasPrefixPath(rel, p) {
			return "forbidden in " + rule.prefix
		}
	}
	for _, p := range rule.own {
		if hasPrefixPath(rel, p) {
			return ""
		}
	}
	return "against the direction cmd -> venv -> detect, generators -> plan"
}

// The rules must catch what they are written for: a detector importing
// venv, a generator touching the file system, the contract importing a
// generator, a third-party module slipping into detect.
func TestImportRulesCatch(t *testing.T) {
	for _, c := range []struct{ pkg, imp string }{
		{"detect/pyinfo", modulePath + "/venv"},
		{"detect/proc", modulePath + "/cmd/internal/target"},
		{"venv", modulePath + "/cmd/internal/target"},
		{"gdbgen", "os"},
		{"gdbgen", modulePath + "/detect/elfinfo"},
		{"lldbgen", modulePath + "/gdbgen"},
		{"detect/plan", modulePath + "/gdbgen"},
		{"detect/plan", modulePath + "/detect/elfinfo"},
		{"detect/plan/pyquote", modulePath + "/detect/plan"},
		{"detect/elfinfo", "github.com/alecthomas/kong"},
		{"cmd/internal/target", modulePath + "/cmd/pyattach"},
		{"cmd/internal/symbols", modulePath + "/detect/testenv"},
		{"cmd/internal/doctor", "os/exec"},
		{"cmd/internal/doctor", modulePath + "/cmd/pyattach"},
		{"cmd/internal/dump", "os/exec"},
		{"cmd/internal/dump", modulePath + "/cmd/pyattach"},
		{"cmd/internal/dump", modulePath + "/cmd/internal/planner"},
		{"cmd/internal/bundle", modulePath + "/cmd/internal/planner"},
		{"cmd/pyattach", "github.com/BurntSushi/toml"},
		{"cmd/internal/initfiles", "github.com/BurntSushi/toml"},
		{"cmd/internal/zcore", modulePath + "/cmd/internal/target"},
		{"cmd/internal/target", "github.com/pierrec/lz4/v4"},
	} {
		rule, ok := ruleFor(c.pkg)
		if !ok {
			t.Errorf("%s: no rule", c.pkg)
			continue
		}
		if checkImport(rule, c.imp) == "" {
			t.Errorf("%s importing %s passes the rules", c.pkg, c.imp)
		}
	}
	for _, c := range []struct{ pkg, imp string }{
		{"detect/pyinfo", modulePath + "/detect/elfinfo"},
		{"cmd/internal/symbols", modulePath + "/venv"},
		{"cmd/internal/target", modulePath + "/venv"},
		{"lldbgen", modulePath + "/detect/plan"},
		{"lldbgen", modulePath + "/detect/plan/pyquote"},
		{"detect/pyversion", "golang.org/x/sys/unix"},
		{"cmd/pyattach", path.Join(modulePath, "cmd/internal/target")},
		{"cmd/internal/doctor", modulePath + "/cmd/internal/debugsearch"},
		{"cmd/internal/doctor", "net/http"},
		{"cmd/internal/config", "github.com/BurntSushi/toml"},
		{"cmd/internal/bundle", modulePath + "/cmd/internal/dump"},
		{"cmd/internal/gcore", modulePath + "/detect/core"},
	} {
		rule, _ := ruleFor(c.pkg)
		if err := checkImport(rule, c.imp); err != "" {
			t.Errorf("%s importing %s refused: %s", c.pkg, c.imp, err)
		}
	}
}
