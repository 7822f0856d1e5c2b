package venv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Candidate is one interpreter file Resolve compared with the copy.
type Candidate struct {
	// Path is the candidate as listed by Candidates.
	Path string `json:"path"`
	// BuildID is its GNU build-id, hex; "" when it could not be read.
	BuildID string `json:"build_id,omitempty"`
	// Err says why the build-id could not be read.
	Err string `json:"err,omitempty"`
	// content is the candidate's size and loadable-segment digest,
	// read when the copy has no build-id.
	content elfinfo.Content
}

// Resolution is the real interpreter behind an executable path.
type Resolution struct {
	// Copy is the path given to Resolve.
	Copy string `json:"copy"`
	// CopyBuildID is the build-id of the file Copy names.
	CopyBuildID string `json:"copy_build_id"`
	// Interpreter is the real interpreter file, absolute, all symlinks
	// resolved. It is never the copy itself.
	Interpreter string `json:"interpreter"`
	// BuildID is the interpreter's build-id; equal to CopyBuildID except
	// for Via "self" and "symlink", where it is simply read (and "" when
	// the file has none).
	BuildID string `json:"build_id"`
	// Via says how the interpreter was found:
	//   "symlink"     Copy is a symlink chain to the interpreter;
	//   "pyvenv.cfg"  matched a candidate named by pyvenv.cfg;
	//   "orig-prefix" matched in a Python 2 virtualenv's orig-prefix;
	//   "candidates"  matched another candidate (PATH, pyenv, uv, conda);
	//                 also a bare copy in no environment (FindOriginal);
	//   "self"        Copy is not a copy: a base install, a conda env's
	//                 python, or a bare binary whose original was not found;
	//   "pyenv-shim"  Copy is a pyenv shim, resolved as `pyenv which` does.
	Via string `json:"via"`
	// Env is the environment that holds Copy (or the file it links to);
	// nil when there is none.
	Env *Env `json:"env,omitempty"`
	// Checked lists the candidates whose build-ids were compared, in
	// order, up to and including the match.
	Checked []Candidate `json:"checked,omitempty"`
	// MatchedBy says what proved that Interpreter is the file Copy was
	// copied from (Via "pyvenv.cfg", "orig-prefix", "candidates"):
	// "build-id", or "content" for a copy without a build-id (as
	// python-build-standalone's interpreters are): the same size and
	// the same loadable segments (elfinfo.ContentOf).
	MatchedBy string `json:"matched_by,omitempty"`
}

// The proofs of Resolution.MatchedBy.
const (
	MatchedByBuildID = "build-id"
	MatchedByContent = "content"
)

// NoMatchError says that a copy matches no candidate. It matches
// ErrNoMatch with errors.Is.
type NoMatchError struct {
	// Copy is the path given to Resolve.
	Copy string
	// CopyBuildID is the copy's build-id.
	CopyBuildID string
	// Checked lists every candidate compared.
	Checked []Candidate
	// Home is the base interpreter's directory according to the
	// environment (pyvenv.cfg home or orig-prefix/bin); "" if unknown.
	Home string
}

// Is reports whether target is ErrNoMatch.
func (e *NoMatchError) Is(target error) bool { return target == ErrNoMatch }

func (e *NoMatchError) Error() string {
	var b strings.Builder
	if e.CopyBuildID == "" {
		fmt.Fprintf(&b, "%s (no build-id; compared by size and loadable segments) is a copy of no interpreter found: ", e.Copy)
	} else {
		fmt.Fprintf(&b, "%s (build-id %s) is a copy of no interpreter found: ", e.Copy, e.CopyBuildID)
	}
	// Show the candidates from the environment's home first: they are
	// the ones the copy was made from.
	var home, rest []Candidate
	for _, c := range e.Checked {
		if e.Home != "" && filepath.Dir(c.Path) == filepath.Clean(e.Home) {
			home = append(home, c)
		} else {
			rest = append(rest, c)
		}
	}
	all := append(home, rest...)
	if len(all) == 0 {
		b.WriteString("no candidate interpreter exists")
		if e.Home != "" {
			fmt.Fprintf(&b, " (home %s holds no python)", e.Home)
		}
		return b.String()
	}
	const show = 3
	for i, c := range all {
		if i == show {
			fmt.Fprintf(&b, "; and %d more checked", len(all)-show)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		if c.Err != "" {
			fmt.Fprintf(&b, "%s could not be read: %s", c.Path, c.Err)
		} else {
			fmt.Fprintf(&b, "%s has %s", c.Path, c.describe())
		}
	}
	for _, c := range home {
		if c.BuildID != "" || c.content.Digest != "" {
			b.WriteString(" (the base interpreter was probably upgraded or rebuilt after the venv was made; recreate the venv)")
			break
		}
	}
	return b.String()
}

// Resolve finds the real interpreter behind exe.
//
//   - A symlink chain is followed (filepath.EvalSymlinks); its end is the
//     interpreter (Via "symlink") unless that file is itself a copy
//     inside an environment, which is then matched as below.
//   - A regular file inside a venv or virtualenv (see FindEnv) is a copy:
//     the first of Candidates whose build-id equals its own is the
//     interpreter. Candidates that resolve to the copy itself or that
//     live inside a venv (other copies) are passed over. No match gives a
//     *NoMatchError (ErrNoMatch).
//   - A conda env's python (even through a symlink inside the env), and a
//     file in no environment, is its own interpreter (Via "self"). With
//     Options.FindOriginal a file in no environment is first matched
//     against the candidates, and taken as itself only when none matches.
//   - A pyenv shim is resolved with PyenvWhich (Options.Dir selects the
//     .python-version files) and the result resolved in turn.
//
// Symlink loops give an error wrapping ErrSymlinkLoop.
func Resolve(exe string, opts Options) (*Resolution, error) {
	return resolve(exe, opts, 0)
}

func resolve(exe string, opts Options, depth int) (*Resolution, error) {
	fi, err := os.Lstat(exe)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", exe, err)
	}
	isLink := fi.Mode()&fs.ModeSymlink != 0
	real, err := realPath(exe)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", exe, err)
	}
	if rfi, err := os.Stat(real); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", exe, err)
	} else if !rfi.Mode().IsRegular() {
		return nil, fmt.Errorf("resolve %s: %s is not a regular file", exe, real)
	}

	// env holds exe as given; holder holds the file exe resolves to.
	// When exe is a symlink only holder matters, and a broken env around
	// the link (say, a malformed pyvenv.cfg) does not stop resolution.
	env, err := FindEnv(exe)
	if err != nil && !errors.Is(err, ErrNoPython) {
		if !isLink {
			return nil, fmt.Errorf("resolve %s: %w", exe, err)
		}
		env = nil
	}
	holder := env
	if isLink {
		holder, err = FindEnv(real)
		if err != nil && !errors.Is(err, ErrNoPython) {
			return nil, fmt.Errorf("resolve %s: %w", exe, err)
		}
		if env == nil {
			env = holder
		}
	}

	res := &Resolution{Copy: exe, Env: env}
	id, idErr := opts.readBuildID(real)
	if errors.Is(idErr, elfinfo.ErrNotELF) && depth == 0 {
		if shim, err := isShimFile(real); err == nil && shim {
			return resolveShim(exe, opts)
		}
	}
	res.CopyBuildID = id

	self := func() (*Resolution, error) {
		if idErr != nil && !errors.Is(idErr, elfinfo.ErrNoBuildID) {
			return nil, fmt.Errorf("resolve %s: read build-id of %s: %w", exe, real, idErr)
		}
		res.Interpreter, res.BuildID, res.Via = real, id, viaSelf
		if isLink && (holder == nil || holder.Kind != KindConda) {
			res.Via = viaSymlink
		}
		return res, nil
	}

	isCopy := holder != nil && holder.Kind != KindConda
	if !isCopy && !opts.FindOriginal {
		return self()
	}
	// A copy without a build-id is compared by content: size and
	// loadable segments.
	var content elfinfo.Content
	byContent := errors.Is(idErr, elfinfo.ErrNoBuildID)
	if byContent {
		content, idErr = elfinfo.ContentOf(real)
	}
	if idErr != nil {
		if !isCopy {
			return self()
		}
		what := "build-id"
		if byContent {
			what = "loadable segments"
		}
		return nil, fmt.Errorf("resolve %s: read %s of %s: %w", exe, what, real, idErr)
	}

	cands := candidates(holder, real, opts)
	ids := map[string]Candidate{} // by real path
	venvs := venvRoots{}
	for _, c := range cands {
		cr, err := realPath(c.path)
		if err != nil {
			res.Checked = append(res.Checked, Candidate{Path: c.path, Err: err.Error()})
			continue
		}
		if cr == real || (holder != nil && within(cr, holder.Path)) || venvs.inside(c.path) || venvs.inside(cr) {
			continue
		}
		got, ok := ids[cr]
		if !ok {
			got.BuildID, err = opts.readBuildID(cr)
			if byContent && errors.Is(err, elfinfo.ErrNoBuildID) {
				got.content, err = elfinfo.ContentOf(cr)
			}
			if err != nil {
				got.Err = err.Error()
			}
			ids[cr] = got
		}
		got.Path = c.path
		res.Checked = append(res.Checked, got)
		switch {
		case !byContent && got.BuildID == id:
			res.Interpreter, res.BuildID, res.Via, res.MatchedBy = cr, id, c.via, MatchedByBuildID
			return res, nil
		case byContent && got.Err == "" && got.BuildID == "" && got.content == content:
			res.Interpreter, res.Via, res.MatchedBy = cr, c.via, MatchedByContent
			return res, nil
		}
	}
	if !isCopy {
		return self()
	}
	home := holder.Home
	return nil, &NoMatchError{Copy: exe, CopyBuildID: id, Checked: res.Checked, Home: home}
}

// venvRoots remembers which directories are venv or virtualenv roots.
type venvRoots map[string]bool

// inside reports whether the interpreter path lies in the bin directory
// of a venv or virtualenv (not a conda env): another copy, never an
// original.
func (v venvRoots) inside(path string) bool {
	bin := filepath.Dir(path)
	if filepath.Base(bin) != "bin" {
		return false
	}
	root := filepath.Dir(bin)
	is, ok := v[root]
	if !ok {
		is = isFile(filepath.Join(root, "pyvenv.cfg"))
		if !is {
			p, _, err := findOrigPrefix(root)
			is = p != "" && err == nil
		}
		v[root] = is
	}
	return is
}

// resolveShim resolves a pyenv shim the way `pyenv which` does, then
// resolves what it names.
func resolveShim(exe string, opts Options) (*Resolution, error) {
	target, _, err := PyenvWhich(filepath.Base(exe), opts.Dir, opts)
	if err != nil {
		return nil, fmt.Errorf("resolve pyenv shim %s: %w", exe, err)
	}
	res, err := resolve(target, opts, 1)
	if err != nil {
		return nil, fmt.Errorf("resolve pyenv shim %s: %w", exe, err)
	}
	res.Copy = exe
	res.CopyBuildID = ""
	if res.Via == viaSelf || res.Via == viaSymlink {
		res.Via = viaPyenvShim
	}
	return res, nil
}

func isShimFile(name string) (bool, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return IsPyenvShim(f), nil
}

// describe names what a candidate was compared by.
func (c Candidate) describe() string {
	if c.BuildID == "" && c.content.Digest != "" {
		return fmt.Sprintf("no build-id, %d bytes, loadable segments %.12s", c.content.Size, c.content.Digest)
	}
	return "build-id " + c.BuildID
}
