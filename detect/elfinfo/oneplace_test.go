package elfinfo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnePlace keeps two rules in one place each, in the spirit of
// go/build's deps_test: no package but elfinfo calls debug/elf's Open or
// NewFile (which panic on some hostile files; elfinfo.NewFile is the one
// door for ELF input; machoinfo.NewFile is the one for Mach-O, so no
// package but detect/machoinfo calls debug/macho's Open, NewFile, OpenFat
// or NewFatFile), and no package but detect/buildid spells gdb's
// .build-id layout in a path literal (buildid.ID.Path does). Tests and
// testdata tools are left out, and so is detect/testenv, the tests'
// support package: it opens the test's own fixtures, and elfinfo's
// tests import it (elfinfo.NewFile there would be an import cycle).
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
