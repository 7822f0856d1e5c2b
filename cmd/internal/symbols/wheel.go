package symbols

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DebugZipSuffix ends the name of a split debug package:
// <wheel-stem>-debug-symbols.zip.
const DebugZipSuffix = "-debug-symbols.zip"

// MaxRecordSize bounds the size of a RECORD file. The largest real ones
// (big scientific packages) hold tens of thousands of rows, a few MiB.
const MaxRecordSize = 64 << 20

// WheelStem is a wheel file name without ".whl", split into its parts
// (PEP 427, "{name}-{version}(-{build})?-{python}-{abi}-{platform}").
type WheelStem struct {
	// Name is the distribution name as written (escaped: "dd_trace").
	Name string `json:"name"`
	// Version is the version as written ("2.9.0", "1.0+local").
	Version string `json:"version"`
	// Build is the optional build tag ("1", "2abc"); "" when absent.
	Build string `json:"build,omitempty"`
	// Python, ABI and Platform are the compressed tag sets
	// ("cp311", "cp311", "manylinux_2_17_x86_64.manylinux2014_x86_64").
	// They are all "" for a short stem (NAME-VERSION).
	Python   string `json:"python,omitempty"`
	ABI      string `json:"abi,omitempty"`
	Platform string `json:"platform,omitempty"`
}

// String reassembles the stem.
func (w WheelStem) String() string {
	parts := []string{w.Name, w.Version}
	if w.Build != "" {
		parts = append(parts, w.Build)
	}
	if w.Python != "" || w.ABI != "" || w.Platform != "" {
		parts = append(parts, w.Python, w.ABI, w.Platform)
	}
	return strings.Join(parts, "-")
}

// ParseWheelStem splits a wheel stem. It accepts the full form, with or
// without a build tag (5 or 6 parts), and the short form NAME-VERSION
// that make-debug-zip.sh uses for an installed tree whose WHEEL file has
// no tags. Every part must be non-empty and made of letters, digits and
// "_", ".", "+", "!"; the name must start with a letter or digit, the
// version and a build tag with a digit.
func ParseWheelStem(s string) (WheelStem, error) {
	bad := func(why string) (WheelStem, error) {
		return WheelStem{}, fmt.Errorf("wheel stem %q: %s", s, why)
	}
	parts := strings.Split(s, "-")
	for i, p := range parts {
		if p == "" {
			return bad("empty part")
		}
		for _, c := range p {
			if !stemChar(c) {
				return bad(fmt.Sprintf("part %d (%q) holds %q", i+1, p, c))
			}
		}
	}
	var w WheelStem
	switch len(parts) {
	case 2:
		w = WheelStem{Name: parts[0], Version: parts[1]}
	case 5:
		w = WheelStem{Name: parts[0], Version: parts[1], Python: parts[2], ABI: parts[3], Platform: parts[4]}
	case 6:
		if c := parts[2][0]; c < '0' || c > '9' {
			return bad(fmt.Sprintf("build tag %q does not start with a digit", parts[2]))
		}
		w = WheelStem{Name: parts[0], Version: parts[1], Build: parts[2], Python: parts[3], ABI: parts[4], Platform: parts[5]}
	default:
		return bad(fmt.Sprintf("%d parts separated by '-'; want NAME-VERSION(-BUILD)?-PYTHON-ABI-PLATFORM", len(parts)))
	}
	if !startsAlnum(w.Name) {
		return bad("the name does not start with a letter or digit")
	}
	if c := w.Version[0]; c < '0' || c > '9' {
		return bad(fmt.Sprintf("the version %q does not start with a digit (a \"-\" in the name must be written \"_\")", w.Version))
	}
	return w, nil
}

func stemChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == '+' || c == '!'
}

func startsAlnum(s string) bool {
	c := s[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ParseDebugZipName parses the base name of a split debug package,
// <wheel-stem>-debug-symbols.zip, as dd-trace-py names them. A name
// without that suffix is an error wrapping ErrNotDebugZip.
func ParseDebugZipName(name string) (WheelStem, error) {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	stem, ok := strings.CutSuffix(base, DebugZipSuffix)
	if !ok {
		return WheelStem{}, fmt.Errorf("%w: %s: the name does not end in %s", ErrNotDebugZip, base, DebugZipSuffix)
	}
	w, err := ParseWheelStem(stem)
	if err != nil {
		return WheelStem{}, fmt.Errorf("%w: %s: %w", ErrNotDebugZip, base, err)
	}
	return w, nil
}

// NormalizeName normalises a distribution name per PEP 503: lower case,
// every run of "-", "_" and "." turned into one "-". "dd_trace",
// "DD.Trace" and "dd-trace" are the same distribution.
func NormalizeName(name string) string {
	var b strings.Builder
	sep := false
	for _, c := range strings.ToLower(name) {
		if c == '-' || c == '_' || c == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(c)
	}
	return b.String()
}

// sameVersion reports whether two versions as written in file names are
// the same: equal, or equal once lowercased with "_" read as "-" (wheel
// file names escape "-" in local versions). These are versions of
// distributions (numpy 1.26.4, 2.0.0.post1+local_x), not of Python: they
// follow PEP 440 in full, which detect/pyversion does not read.
func sameVersion(a, b string) bool {
	if a == b {
		return true
	}
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }
	return norm(a) == norm(b)
}

// RecordEntry is one row of a wheel's RECORD (PEP 376/427): a path
// relative to the site-packages directory, "/"-separated, its
// "algorithm=urlsafe-base64-digest" hash, and its size in bytes.
type RecordEntry struct {
	Path string `json:"path"`
	// Hash is "" for RECORD itself and for files written at install
	// time (.pyc files, INSTALLER).
	Hash string `json:"hash,omitempty"`
	// Size is -1 when the row leaves it empty.
	Size int64 `json:"size"`
}

// ErrMalformedRecord means a RECORD file could not be parsed.
var ErrMalformedRecord = errors.New("malformed RECORD")

// RecordError is a malformed RECORD file, with where it went wrong, in
// the manner of venv.CfgError and proc.MapsError. It matches
// ErrMalformedRecord with errors.Is.
type RecordError struct {
	// Line is the 1-based line number; 0 when the error concerns the
	// whole input (too large, not UTF-8).
	Line int
	// Field names the bad column ("path", "size"), or "".
	Field string
	// Msg says what is wrong.
	Msg string
	// Err is the CSV reader's error, if any.
	Err error
}

func (e *RecordError) Error() string {
	s := ErrMalformedRecord.Error()
	if e.Line > 0 {
		s += fmt.Sprintf(": line %d", e.Line)
	}
	return s + ": " + e.Msg
}

// Is reports whether target is ErrMalformedRecord.
func (e *RecordError) Is(target error) bool { return target == ErrMalformedRecord }

// Unwrap returns the CSV reader's error, if any.
func (e *RecordError) Unwrap() error { return e.Err }

// ParseRecord parses a RECORD file, a CSV file of path,hash,size rows.
// Rows with fewer than three fields are accepted (the size and hash are
// then unknown); a row with more, an empty path, a path holding NUL, a
// size that is not a non-negative number, input that is not UTF-8 or
// larger than MaxRecordSize is a *RecordError (matching ErrMalformedRecord).
func ParseRecord(r io.Reader) ([]RecordEntry, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxRecordSize+1))
	if err != nil {
		return nil, fmt.Errorf("read RECORD: %w", err)
	}
	if len(b) > MaxRecordSize {
		return nil, &RecordError{Msg: fmt.Sprintf("larger than %d bytes", MaxRecordSize)}
	}
	if !utf8.Valid(b) {
		return nil, &RecordError{Msg: "not UTF-8"}
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, &RecordError{Line: 1 + bytes.Count(b[:bytes.IndexByte(b, 0)], []byte("\n")), Msg: "holds a NUL byte"}
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var out []RecordEntry
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &RecordError{Line: pe.Line, Msg: pe.Err.Error(), Err: err}
			}
			return nil, &RecordError{Msg: err.Error(), Err: err}
		}
		line, _ := cr.FieldPos(0)
		if len(row) > 3 {
			return nil, &RecordError{Line: line, Msg: fmt.Sprintf("%d fields, want path,hash,size", len(row))}
		}
		e := RecordEntry{Path: row[0], Size: -1}
		if e.Path == "" {
			return nil, &RecordError{Line: line, Field: "path", Msg: "empty path"}
		}
		if len(row) > 1 {
			e.Hash = row[1]
		}
		if len(row) > 2 && row[2] != "" {
			n, err := strconv.ParseInt(row[2], 10, 64)
			if err != nil || n < 0 {
				return nil, &RecordError{Line: line, Field: "size", Msg: fmt.Sprintf("size %q is not a byte count", row[2])}
			}
			e.Size = n
		}
		out = append(out, e)
	}
	return out, nil
}
