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

// TestOnePlaceParsesELF keeps NewFile the one door for untrusted ELF
// input: no other package (tests and testdata tools aside) calls
// debug/elf's Open or NewFile, which panic on some hostile files.
func TestOnePlaceParsesELF(t *testing.T) {
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
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || filepath.Dir(rel) == filepath.Join("detect", "elfinfo") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		elfName := ""
		for _, im := range f.Imports {
			if im.Path.Value == `"debug/elf"` {
				elfName = "elf"
				if im.Name != nil {
					elfName = im.Name.Name
				}
			}
		}
		if elfName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == elfName && (sel.Sel.Name == "Open" || sel.Sel.Name == "NewFile") {
					pos := fset.Position(sel.Pos())
					t.Errorf("%s:%d: %s.%s: parse ELF input with elfinfo.NewFile", rel, pos.Line, elfName, sel.Sel.Name)
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
