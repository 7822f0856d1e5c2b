package doctor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/saferead"
)

// debugChecks explains the debug information of the modules that matter.
func (s *Services) debugChecks(ctx context.Context, res *target.Result, di *debugsearch.Info) []Check {
	var out []Check
	for _, m := range di.Modules {
		runtime := isRuntimeModule(m.Path, res)
		host := res.Embedded && m.Path == res.Exe
		if !runtime && !host && !debugsearch.SourceModule(m.Path, res) {
			continue
		}
		id := "debug." + filepath.Base(m.Path)
		d := m.Debug
		switch {
		case host && d.Kind != debugfile.KindDWARF && d.Kind != debugfile.KindLineTables:
			out = append(out, Check{ID: id, Status: Warn,
				Summary: fmt.Sprintf("%s (the program embedding Python) has no debug information: its own native frames show as ?? or without lines; py-bt does not need it", m.Path),
				Fix:     s.missingDebugFix(ctx, m, res)})
		case m.Error != "":
			out = append(out, Check{ID: id, Status: Warn, Summary: fmt.Sprintf("%s: %s", m.Path, m.Error)})
		case d.Kind == debugfile.KindDWARF || d.Kind == debugfile.KindLineTables:
			out = append(out, producerChecks(id, m, runtime, walkerCovers(res))...)
		case runtime && !walkerCovers(res):
			out = append(out, Check{ID: id, Status: Fail, Summary: missingDebugSummary(m), Fix: s.missingDebugFix(ctx, m, res)})
		case runtime:
			out = append(out, Check{ID: id, Status: Warn, Summary: missingDebugSummary(m) + "; pyattach's walker still reads them", Fix: s.missingDebugFix(ctx, m, res)})
		default:
			out = append(out, Check{ID: id, Status: Warn, Summary: missingDebugSummary(m), Fix: s.missingDebugFix(ctx, m, res)})
		}
	}
	return out
}

func missingDebugSummary(m debugsearch.Module) string {
	switch m.Debug.Kind {
	case debugfile.KindSymtab, debugfile.KindMiniDebugInfo:
		return fmt.Sprintf("%s has a symbol table only (%s): frames show function names but no files, lines or locals; py-bt cannot read frames", m.Path, m.Debug.Kind)
	}
	return fmt.Sprintf("%s has no debug information (build-id %s): native frames show as ??, CPython's py-bt cannot read Python frames", m.Path, m.BuildID)
}

// exists reports whether the file at p exists.
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// missingDebugFix names the package or command that brings the debug
// file of a module.
func (s *Services) missingDebugFix(ctx context.Context, m debugsearch.Module, res *target.Result) string {
	if strings.Contains(m.Path, "/uv/python/") || strings.Contains(m.Path, "python-build-standalone") {
		return "python-build-standalone (uv) interpreters ship stripped; use an interpreter with debug symbols (pyenv install, or your distribution's python3.X with python3.X-dbg)"
	}
	if res.Container {
		return s.containerDebugFix(m, res)
	}
	debian, fedora := exists(s.sysFile(res, "/etc/debian_version")), exists(s.sysFile(res, "/etc/fedora-release"))
	if base := filepath.Base(res.Interpreter); strings.HasPrefix(res.Interpreter, "/usr/bin/python3.") && (m.Path == res.Interpreter || m.Path == res.Exe || m.Path == res.Libpython) {
		if debian {
			return "sudo apt-get install " + strings.TrimSuffix(base, "d") + "-dbg"
		}
		if fedora {
			return "sudo dnf debuginfo-install python3"
		}
	}
	if fedora && m.BuildID != "" {
		return fmt.Sprintf("sudo dnf install 'debuginfo(build-id)=%s'", m.BuildID)
	}
	if debian {
		if out, err := s.run(ctx, "dpkg", "-S", m.Path); err == nil {
			pkg, _, _ := strings.Cut(strings.TrimSpace(out), ":")
			return fmt.Sprintf("sudo apt-get install %s-dbgsym (from the debug archive; see https://wiki.debian.org/HowToGetABacktrace), or set DEBUGINFOD_URLS", pkg)
		}
	}
	return "install its debug file into a debug directory (pyattach --debug-dir DIR), install a split debug package (pyattach symbols install), or set DEBUGINFOD_URLS"
}

// containerDebugFix is missingDebugFix for a process in a container:
// the package comes from the container's distribution and dpkg
// database (read under its root), and is installed there, where the
// debug file is searched first; this machine's packages are another
// distribution's files.
func (s *Services) containerDebugFix(m debugsearch.Module, res *target.Result) string {
	where := "in the container (podman exec or docker exec CONTAINER ...): "
	if exists(s.sysFile(res, "/etc/debian_version")) {
		if pkg := dpkgOwner(s.sysFile(res, "/var/lib/dpkg/info"), m.Path); pkg != "" {
			dbg := pkg + "-dbgsym (from the debug archive, https://wiki.debian.org/HowToGetABacktrace)"
			// CPython's packages: python3.X-minimal, libpython3.X-stdlib
			// ... all have their debug files in (lib)python3.X-dbg.
			if py := debianPythonPkg().FindStringSubmatch(pkg); py != nil {
				dbg = py[1] + "-dbg"
			}
			return where + "apt-get install " + dbg
		}
	}
	if exists(s.sysFile(res, "/etc/fedora-release")) && m.BuildID != "" {
		return where + fmt.Sprintf("dnf install 'debuginfo(build-id)=%s'", m.BuildID)
	}
	return where + "install its debug file under /usr/lib/debug there, or here: pyattach --debug-dir DIR, or set DEBUGINFOD_URLS"
}

var debianPythonPkg = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^((?:lib)?python3\.\d+t?)(?:-minimal|-stdlib)?$`) })

// maxDpkgList bounds the read of one dpkg file list (the largest on a
// Debian system hold a few MB).
const maxDpkgList = 64 << 20

// readList reads a dpkg file list, which may be under a container's
// root: only a regular file (a FIFO would block), at most maxDpkgList
// bytes (a link to /dev/zero would never end).
func readList(name string) ([]byte, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxDpkgList))
}

// dpkgOwner returns the package whose file list in dpkg's info
// directory (a host path) names p, without the architecture, or "".
func dpkgOwner(info, p string) string {
	lists, _ := filepath.Glob(filepath.Join(info, "*.list"))
	for _, l := range lists {
		b, err := readList(l)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			if strings.TrimRight(line, "\n") == p {
				pkg, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(l), ".list"), ":")
				return pkg
			}
		}
	}
	return ""
}

// producerChecks reads the compiler line: -g level and optimisation.
func producerChecks(id string, m debugsearch.Module, runtime, walker bool) []Check {
	p := m.Debug.Producer
	where := fmt.Sprintf("%s: debug information %s %s", m.Path, m.Debug.Via, m.Debug.Path)
	if m.Debug.Via == debugfile.ViaEmbedded {
		where = fmt.Sprintf("%s: debug information embedded", m.Path)
	}
	if p == nil {
		return []Check{{ID: id, Status: OK, Summary: where}}
	}
	if p.GLevel == "0" || p.GLevel == "1" || m.Debug.Kind == debugfile.KindLineTables {
		st := Warn
		if runtime {
			st = Fail
		}
		msg := "py-bt cannot read frames"
		if runtime && walker {
			st, msg = Warn, "CPython's py-bt cannot read frames (pyattach's walker can)"
		}
		return []Check{{ID: id, Status: st, Summary: fmt.Sprintf("%s, built with -g%s: line tables only, no locals: %s", where, p.GLevel, msg),
			Fix: "rebuild with -g (CFLAGS=-g), or use a build with full debug information"}}
	}
	if p.OLevel == "3" || p.LTO {
		opt := "-O" + p.OLevel
		if p.LTO {
			opt += " and LTO"
		}
		// The walker reads frames from memory, whatever the compiler
		// kept in registers: with it, only plain gdb minds.
		st, also := Warn, ""
		if runtime && walker {
			st, also = Note, " in plain gdb (pyattach's walker reads them)"
		}
		return []Check{{ID: id, Status: st, Summary: fmt.Sprintf("%s, optimised with %s: some Python frames may show as (frame information optimized out)%s", where, opt, also),
			Fix: "for every frame, use a debug build (Debian: python3.Xd from python3.X-dbg; pyenv: PYTHON_CFLAGS='-O0 -g' pyenv install)"}}
	}
	return []Check{{ID: id, Status: OK, Summary: fmt.Sprintf("%s (-g%s -O%s)", where, p.GLevel, p.OLevel)}}
}
