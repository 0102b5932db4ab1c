// Package godoc reads the doc comments of struct fields from Go source,
// for the configuration's JSON Schema (host/config.JSONSchema).
package godoc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
)

// FieldDocs returns the doc comment of every field of every struct type
// declared in the non-test .go files of dirs, keyed "Type.Field", each
// comment on one line.
func FieldDocs(dirs ...string) (map[string]string, error) {
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, err
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			for n := range ast.Preorder(f) {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					if fld.Doc == nil {
						continue
					}
					text := strings.Join(strings.Fields(fld.Doc.Text()), " ")
					for _, name := range fld.Names {
						out[ts.Name.Name+"."+name.Name] = text
					}
				}
			}
		}
	}
	return out, nil
}
