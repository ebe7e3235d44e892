package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// publicPackages are the packages whose API users hold, relative to the
// module root.
var publicPackages = []string{"store", "recorder", "replayer", "diff", "verify", "clock", "mcpvcrtest", "view", "scrub", "chaos", "probe"}

// TestNoInternalTypes parses each public package and fails for every
// exported declaration (type, field, embedded field, function, method of
// an exported type, variable, constant) whose declared type mentions a
// package under internal/. An exported alias of an internal type (type
// Kind = jsonrpc.Kind) is accepted, as the Go SDK's jsonrpc package does
// it: the alias gives users a name for the type, so that the type has
// one source; an alias of a type built from one ([]jsonrpc.Kind) is not,
// since its parts have no name users can write.
func TestNoInternalTypes(t *testing.T) {
	for _, dir := range publicPackages {
		t.Run(dir, func(t *testing.T) {
			for _, use := range internalUses(t, filepath.Join("..", "..", dir)) {
				t.Errorf("%s", use)
			}
		})
	}
}

// TestInternalUses_Finds makes sure the check can fail: a package that
// leaks internal types in every way it looks at is caught each time.
func TestInternalUses_Finds(t *testing.T) {
	got := internalUses(t, filepath.Join("testdata", "leaky"))
	want := []string{"field T.Field", "embedded field of type E", "func Func", "method Method", "var or const Var", "type Composite", "Inferred (inferred)"}
	if len(got) != len(want) {
		t.Fatalf("internalUses(testdata/leaky) found %d uses; want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("use %d = %q; want it to name %s", i, got[i], w)
		}
	}
}

// internalUses returns one line per exported declaration of the package
// in dir that mentions an internal package.
func internalUses(tb testing.TB, dir string) []string {
	tb.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		tb.Fatalf("parse %s: %v", dir, err)
	}
	var uses []string
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			internal := map[string]bool{} // import names of internal packages
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !strings.Contains(path, "/internal/") && !strings.HasPrefix(path, "internal/") {
					continue
				}
				n := path[strings.LastIndex(path, "/")+1:]
				if imp.Name != nil {
					n = imp.Name.Name
				}
				internal[n] = true
			}
			if len(internal) == 0 {
				continue
			}
			report := func(what string, n ast.Node) {
				if mentions(n, internal) {
					uses = append(uses, filepath.Base(name)+":"+strconv.Itoa(fset.Position(n.Pos()).Line)+": "+what)
				}
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv != nil && !exportedRecv(d.Recv) {
						continue
					}
					what := "func " + d.Name.Name
					if d.Recv != nil {
						what = "method " + d.Name.Name
					}
					report(what, d.Type)
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								continue
							}
							if st, ok := s.Type.(*ast.StructType); ok {
								for _, fld := range st.Fields.List {
									if len(fld.Names) == 0 {
										report("embedded field of type "+s.Name.Name, fld.Type)
									}
									for _, n := range fld.Names {
										if n.IsExported() {
											report("field "+s.Name.Name+"."+n.Name, fld.Type)
										}
									}
								}
								continue
							}
							if s.Assign.IsValid() && namesType(s.Type, internal) {
								continue // an alias names the internal type for users
							}
							report("type "+s.Name.Name, s.Type)
						case *ast.ValueSpec:
							for i, n := range s.Names {
								if !n.IsExported() {
									continue
								}
								if s.Type != nil {
									report("var or const "+n.Name, s.Type)
								} else if i < len(s.Values) {
									report("var or const "+n.Name+" (inferred)", s.Values[i])
								}
							}
						}
					}
				}
			}
		}
	}
	return uses
}

// namesType reports whether t is a type of an internal import, by name
// (jsonrpc.Kind, or an instance of a generic one).
func namesType(t ast.Expr, internal map[string]bool) bool {
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	sel, ok := t.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && internal[id.Name]
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	t := recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// mentions reports whether n refers to an identifier of an internal
// import, outside function bodies.
func mentions(n ast.Node, internal map[string]bool) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && internal[id.Name] {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestImportDirections: imports point one way (design.md §6): replayer
// imports neither diff nor verify, diff neither replayer nor verify, and
// recorder and replayer never import each other; replayer never imports
// chaos or probe, which work on its hook; view (the report and the
// timeline) reads recordings and reports, it never records or replays.
func TestImportDirections(t *testing.T) {
	const mod = "github.com/mcpvcr/mcpvcr/"
	forbidden := map[string][]string{
		"replayer": {"diff", "verify", "recorder", "chaos", "probe"},
		"chaos":    {"diff", "verify", "recorder", "probe"},
		"probe":    {"diff", "verify", "recorder", "chaos"},
		"diff":     {"replayer", "verify", "recorder"},
		"recorder": {"replayer", "diff", "verify"},
		"store":    {"replayer", "diff", "verify", "recorder", "view"},
		"view":     {"replayer", "verify", "recorder"},
	}
	for pkg, bad := range forbidden {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, filepath.Join("..", "..", pkg), func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", pkg, err)
		}
		for _, p := range pkgs {
			for name, f := range p.Files {
				for _, imp := range f.Imports {
					path, _ := strconv.Unquote(imp.Path.Value)
					for _, b := range bad {
						if path == mod+b {
							t.Errorf("%s imports %s", name, path)
						}
					}
				}
			}
		}
	}
}
