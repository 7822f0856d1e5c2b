package elfinfo

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnePlace keeps rules in one place each, in the spirit of
// go/build's deps_test: no package but elfinfo calls debug/elf's Open or
// NewFile (which panic on some hostile files; elfinfo.NewFile is the one
// door for ELF input; machoinfo.NewFile is the one for Mach-O, so no
// package but detect/machoinfo calls debug/macho's Open, NewFile, OpenFat
// or NewFatFile); no package but detect/buildid spells gdb's .build-id
// layout in a path literal (buildid.ID.Path does); and no package checks
// hex digits or an all-digits string by hand (handChecks): a build-id is
// buildid.Parse's or buildid.Valid's to judge, a PID argument
// target.IsPID's, and other numbers strconv's. Tests and testdata tools
// are left out, and so is detect/testenv, the tests' support package: it
// opens the test's own fixtures, and elfinfo's tests import it
// (elfinfo.NewFile there would be an import cycle).
func TestOnePlace(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkgDir := filepath.ToSlash(filepath.Dir(rel))
		elfName, machoName := "", ""
		for _, im := range f.Imports {
			if im.Path.Value == `"debug/macho"` {
				machoName = "macho"
				if im.Name != nil {
					machoName = im.Name.Name
				}
			}
			if im.Path.Value == `"debug/elf"` {
				elfName = "elf"
				if im.Name != nil {
					elfName = im.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			line := func(n ast.Node) int { return fset.Position(n.Pos()).Line }
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && elfName != "" && id.Name == elfName && (n.Sel.Name == "Open" || n.Sel.Name == "NewFile") && pkgDir != "detect/elfinfo" && pkgDir != "detect/testenv" {
					t.Errorf("%s:%d: %s.%s: parse ELF input with elfinfo.NewFile", rel, line(n), elfName, n.Sel.Name)
				}
				switch n.Sel.Name {
				case "Open", "NewFile", "OpenFat", "NewFatFile":
					if id, ok := n.X.(*ast.Ident); ok && machoName != "" && id.Name == machoName && pkgDir != "detect/machoinfo" && pkgDir != "detect/testenv" {
						t.Errorf("%s:%d: %s.%s: parse Mach-O input with machoinfo.NewFile", rel, line(n), machoName, n.Sel.Name)
					}
				}
			case *ast.BasicLit:
				// A path piece, not prose (help texts name the layout).
				if n.Kind == token.STRING && strings.Contains(n.Value, ".build-id") && !strings.ContainsAny(n.Value, " \\n") && pkgDir != "detect/buildid" {
					t.Errorf("%s:%d: %s: build the path with buildid.ID.Path or buildid.Tree", rel, line(n), n.Value)
				}
			}
			return true
		})
		if owner := handCheckOwners[pkgDir]; owner == "" {
			for _, c := range handChecks(fset, f) {
				t.Errorf("%s:%s", rel, c)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// handCheckOwners are the packages that may check digits by hand, each
// the one place of its rule.
var handCheckOwners = map[string]string{
	"detect/buildid":      "a GNU build-id: buildid.Parse, buildid.Valid",
	"cmd/internal/target": "a PID argument: target.IsPID",
	"detect/machoinfo":    "a Mach-O UUID as the store writes it: machoinfo.ValidUUID",
}

// handChecks returns the places in f that check hex digits or an
// all-digits string by hand, as "line: what, use what instead":
//   - a comparison with 'f' or 'F' (a hex digit's range);
//   - a loop that returns false for a character outside '0'..'9' (or not
//     unicode.IsDigit), and compares with no other character: a check
//     that a whole string is digits;
//   - a string literal spelling a hex class ("a-f", "[:xdigit:]") or an
//     anchored all-digits pattern (^[0-9]+$, ^\d+$), as a regexp would;
//   - a digit set ("0123456789...") handed to strings.Trim*,
//     ContainsAny, IndexAny or ContainsRune.
func handChecks(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%d: %s: judge a build-id with buildid.Parse or buildid.Valid, a PID argument with target.IsPID, other numbers with strconv", fset.Position(n.Pos()).Line, what))
	}
	charCmp := func(n ast.Node) (string, bool) {
		b, ok := n.(*ast.BinaryExpr)
		if !ok || b.Op != token.LSS && b.Op != token.LEQ && b.Op != token.GTR && b.Op != token.GEQ {
			return "", false
		}
		for _, x := range []ast.Expr{b.X, b.Y} {
			if l, ok := x.(*ast.BasicLit); ok && l.Kind == token.CHAR {
				return l.Value, true
			}
		}
		return "", false
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if c, ok := charCmp(n); ok && (c == "'f'" || c == "'F'") {
				report(n, "a hex digit checked by hand")
			}
		case *ast.ForStmt, *ast.RangeStmt:
			digits, others, isDigit, returnsFalse := false, false, false, false
			ast.Inspect(n, func(m ast.Node) bool {
				if c, ok := charCmp(m); ok {
					if c == "'0'" || c == "'9'" {
						digits = true
					} else {
						others = true
					}
				}
				if s, ok := m.(*ast.SelectorExpr); ok && s.Sel.Name == "IsDigit" {
					isDigit = true
				}
				if r, ok := m.(*ast.ReturnStmt); ok && len(r.Results) > 0 {
					if id, ok := r.Results[len(r.Results)-1].(*ast.Ident); ok && id.Name == "false" {
						returnsFalse = true
					}
				}
				return true
			})
			if (digits || isDigit) && !others && returnsFalse {
				report(n, "a loop checking that a string is all digits")
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				break
			}
			// As written: a raw string's \d or an interpreted one's \\d.
			v := strings.ReplaceAll(strings.ToLower(n.Value), `\\`, `\`)
			if strings.Contains(v, "a-f") || strings.Contains(v, "[:xdigit:]") || strings.Contains(v, `\p{hex`) {
				report(n, "a hex class "+n.Value)
			}
			for _, p := range []string{`^[0-9]+$`, `^[0-9]*$`, `^\d+$`, `^\d*$`} {
				if strings.Contains(v, p) {
					report(n, "an all-digits pattern "+n.Value)
				}
			}
		case *ast.CallExpr:
			s, ok := n.Fun.(*ast.SelectorExpr)
			if !ok {
				break
			}
			if id, ok := s.X.(*ast.Ident); !ok || id.Name != "strings" {
				break
			}
			switch s.Sel.Name {
			case "Trim", "TrimLeft", "TrimRight", "ContainsAny", "IndexAny", "LastIndexAny", "ContainsRune":
				for _, a := range n.Args {
					if l, ok := a.(*ast.BasicLit); ok && l.Kind == token.STRING && strings.Contains(l.Value, "0123456789") {
						report(n, "a digit set "+l.Value)
					}
				}
			}
		}
		return true
	})
	return out
}

// TestHandChecks: handChecks finds the hand-written checks that had
// places of their own before buildid.Valid and target.IsPID were their
// one place, and leaves alone scanning digits and checking identifiers.
func TestHandChecks(t *testing.T) {
	const src = `package p

func validHexID(id string) bool {
	if len(id) < 4 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isNum(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

var hexRE = regexp.MustCompile("^[0-9a-f]{40}$")
var pidRE = regexp.MustCompile(` + "`^[0-9]+$`" + `)
var pidRE2 = regexp.MustCompile(` + "`^\\d+$`" + `)

func trimmed(s string) bool { return strings.Trim(s, "0123456789") == "" }

func leading(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func isName(s string) bool {
	for _, c := range s {
		if c != '_' && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range handChecks(fset, f) {
		line, _, _ := strings.Cut(c, ":")
		lines = append(lines, line)
	}
	// validHexID's 'f' (8), allDigits (16), isNum (25), the three
	// patterns (33-35), the digit set (37).
	want := []string{"8", "16", "25", "33", "34", "35", "37"}
	if strings.Join(lines, " ") != strings.Join(want, " ") {
		t.Errorf("handChecks found lines %v, want %v", lines, want)
	}
}
