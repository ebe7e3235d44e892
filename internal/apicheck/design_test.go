package apicheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The design rules of issue #49 that code can check: no product function
// is too complex to follow, replay's HTTP entry point is a short list of
// steps, and every session label is defined in one file of store.

// maxCyclo is the most cyclomatic complexity a product function may have.
const maxCyclo = 40

// maxServeHTTP is the bound on (*replayer.Server).ServeHTTP: under it, the
// HTTP route decides what a request is in one place.
const maxServeHTTP = 15

// knownComplex is empty by design: no product function may be over
// maxCyclo. The last two (verify's buildPlan at 52 and the benchmark's
// bench at 43) were split into named steps (issue #49). overCyclo keeps
// its allowance so that TestCyclomatic_Finds can show what a stale entry
// looks like, but TestCyclomatic fails on any entry here: split the
// function instead of listing it.
var knownComplex = map[string]int{}

// knownServeHTTP is ServeHTTP's complexity when the rule was written,
// while replay's HTTP route is reworked (issue #49, item 3): it may only
// go down, and is set to 0 once ServeHTTP is under maxServeHTTP.
const knownServeHTTP = 0

// productFiles returns the product code under root: its non-test Go
// files outside testdata, node_modules and hidden directories.
func productFiles(tb testing.TB, root string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("walk %s: %v", root, err)
	}
	return files
}

// funcCyclo is one function's cyclomatic complexity.
type funcCyclo struct {
	dir   string // the package's directory under root: replayer
	name  string // the function: (*Server).ServeHTTP, judge
	pos   string // file:line
	cyclo int
}

// cyclos returns the cyclomatic complexity of every function declared in
// the product files under root, most complex first.
func cyclos(tb testing.TB, root string) []funcCyclo {
	tb.Helper()
	var out []funcCyclo
	fset := token.NewFileSet()
	for _, path := range productFiles(tb, root) {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatalf("parse %s: %v", path, err)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			out = append(out, funcCyclo{
				dir:   filepath.ToSlash(rel),
				name:  funcName(fd),
				pos:   filepath.Base(path) + ":" + strconv.Itoa(fset.Position(fd.Pos()).Line),
				cyclo: cyclo(fd.Body),
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].cyclo > out[j].cyclo })
	return out
}

// funcName names fd as (*Recv).Name, Recv.Name or Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t, star := fd.Recv.List[0].Type, ""
	if s, ok := t.(*ast.StarExpr); ok {
		t, star = s.X, "*"
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	recv := "?"
	if id, ok := t.(*ast.Ident); ok {
		recv = id.Name
	}
	if star != "" {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}

// cyclo is the cyclomatic complexity of a function body, as gocyclo
// counts it: 1, plus one for each if, for, range, case (not default),
// select case (not default), && and ||. Function literals in the body
// count towards it: they are read with the function.
func cyclo(body *ast.BlockStmt) int {
	n := 1
	ast.Inspect(body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// overCyclo returns the functions of fs over max that allowed does not
// hold at or above their complexity, and the entries of allowed no
// longer over max (or gone).
func overCyclo(fs []funcCyclo, max int, allowed map[string]int) (offenders, stale []string) {
	seen := map[string]bool{}
	for _, f := range fs {
		if f.cyclo <= max {
			continue
		}
		seen[f.name] = true
		if was, ok := allowed[f.name]; !ok || f.cyclo > was {
			offenders = append(offenders, f.dir+" "+f.name+" ("+f.pos+") has cyclomatic complexity "+strconv.Itoa(f.cyclo))
		}
	}
	for name := range allowed {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	return offenders, stale
}

// TestCyclomatic: no product function has cyclomatic complexity over
// maxCyclo, and knownComplex stays empty. -v prints every
// function over 20.
func TestCyclomatic(t *testing.T) {
	fs := cyclos(t, filepath.Join("..", ".."))
	for _, f := range fs {
		if f.cyclo > 20 {
			t.Logf("%3d %s %s (%s)", f.cyclo, f.dir, f.name, f.pos)
		}
	}
	if len(knownComplex) != 0 {
		t.Errorf("knownComplex = %v; the list is empty by design: split the function instead", knownComplex)
	}
	offenders, stale := overCyclo(fs, maxCyclo, knownComplex)
	for _, o := range offenders {
		t.Errorf("%s; the bound is %d: split it", o, maxCyclo)
	}
	for _, s := range stale {
		t.Errorf("%s is no longer over %d: remove it from knownComplex", s, maxCyclo)
	}
}

// TestCyclomatic_Finds makes sure the check can fail: testdata/complex
// holds a function of complexity 10 (each kind of branch counted) and one
// of 1, and a bound of 8 finds the first, unless it is allowed at 10 or
// more; an allowed name that is not over the bound is stale.
func TestCyclomatic_Finds(t *testing.T) {
	fs := cyclos(t, filepath.Join("testdata", "complex"))
	got := map[string]int{}
	for _, f := range fs {
		got[f.name] = f.cyclo
	}
	if got["Branchy"] != 10 || got["(*T).Plain"] != 1 {
		t.Fatalf("cyclos(testdata/complex) = %v; want Branchy 10, (*T).Plain 1", got)
	}
	if off, _ := overCyclo(fs, 8, nil); len(off) != 1 || !strings.Contains(off[0], "Branchy") {
		t.Errorf("overCyclo(bound 8) = %q; want Branchy", off)
	}
	if off, _ := overCyclo(fs, 8, map[string]int{"Branchy": 9}); len(off) != 1 {
		t.Errorf("overCyclo(bound 8, Branchy allowed at 9) = %q; want Branchy, grown past its figure", off)
	}
	if off, stale := overCyclo(fs, 8, map[string]int{"Branchy": 10, "(*T).Plain": 5}); len(off) != 0 || len(stale) != 1 || stale[0] != "(*T).Plain" {
		t.Errorf("overCyclo(bound 8, both allowed) = %q, stale %q; want none, stale Plain", off, stale)
	}
}

// TestServeHTTP: replay's HTTP entry point stays a short list of steps.
func TestServeHTTP(t *testing.T) {
	found := false
	for _, f := range cyclos(t, filepath.Join("..", "..", "replayer")) {
		if f.name != "(*Server).ServeHTTP" {
			continue
		}
		found = true
		t.Logf("(*replayer.Server).ServeHTTP (%s): cyclomatic complexity %d", f.pos, f.cyclo)
		if msg := serveHTTPBound(f.cyclo, knownServeHTTP); msg != "" {
			t.Error(msg)
		}
	}
	if !found {
		t.Error("replayer has no (*Server).ServeHTTP")
	}
}

// serveHTTPBound says what is wrong with a ServeHTTP of complexity cyclo
// when it was known at known (0: none allowed over maxServeHTTP); "" when
// nothing is.
func serveHTTPBound(cyclo, known int) string {
	switch {
	case known == 0 && cyclo >= maxServeHTTP:
		return fmt.Sprintf("(*replayer.Server).ServeHTTP has cyclomatic complexity %d; want under %d", cyclo, maxServeHTTP)
	case known > 0 && cyclo > known:
		return fmt.Sprintf("(*replayer.Server).ServeHTTP has cyclomatic complexity %d, more than its %d when the rule was written; want under %d", cyclo, known, maxServeHTTP)
	case known > 0 && cyclo < maxServeHTTP:
		return fmt.Sprintf("(*replayer.Server).ServeHTTP is under %d (%d): set knownServeHTTP to 0", maxServeHTTP, cyclo)
	}
	return ""
}

// TestServeHTTPBound_Finds makes sure the bound can fail: over it with
// no exception, past the exception, and under it with a stale exception.
func TestServeHTTPBound_Finds(t *testing.T) {
	for _, tt := range []struct {
		cyclo, known int
		fails        bool
	}{
		{14, 0, false}, {15, 0, true}, {35, 35, false}, {36, 35, true}, {20, 35, false}, {14, 35, true},
	} {
		if got := serveHTTPBound(tt.cyclo, tt.known) != ""; got != tt.fails {
			t.Errorf("serveHTTPBound(%d, %d) fails = %v; want %v", tt.cyclo, tt.known, got, tt.fails)
		}
	}
}

// labelsFile is the one file, relative to the module root, that defines
// session labels.
const labelsFile = "store/labels.go"

// labelDefinitions returns one line for every session label the product
// files under root define outside skip (a path relative to root): a
// constant or variable whose name says Label and whose value is a string
// literal, a string literal indexing a map named ...Labels or ...labels,
// or one given to LabelValues.
func labelDefinitions(tb testing.TB, root, skip string) []string {
	tb.Helper()
	var found []string
	fset := token.NewFileSet()
	for _, path := range productFiles(tb, root) {
		rel, _ := filepath.Rel(root, path)
		if filepath.ToSlash(rel) == skip {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatalf("parse %s: %v", path, err)
		}
		report := func(n ast.Node, what string) {
			found = append(found, filepath.ToSlash(rel)+":"+strconv.Itoa(fset.Position(n.Pos()).Line)+": "+what)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				for i, name := range x.Names {
					if i < len(x.Values) && strings.Contains(strings.ToLower(name.Name), "label") && isString(x.Values[i]) {
						report(x, "label "+name.Name+" defined")
					}
				}
			case *ast.IndexExpr:
				if isString(x.Index) && strings.HasSuffix(strings.ToLower(exprName(x.X)), "labels") {
					report(x, "label "+x.Index.(*ast.BasicLit).Value+" written out")
				}
			case *ast.CallExpr:
				if exprName(x.Fun) == "LabelValues" {
					for _, a := range x.Args {
						if isString(a) {
							report(x, "label "+a.(*ast.BasicLit).Value+" written out")
						}
					}
				}
			}
			return true
		})
	}
	return found
}

// isString reports whether e is a string literal other than "".
func isString(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.STRING && lit.Value != `""` && lit.Value != "``"
}

// exprName is the name an identifier or a selector ends with; "" for
// other expressions.
func exprName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// TestLabelsInOneFile: every session label is defined in store/labels.go;
// the packages that give a label a name of their own define it as
// store's.
func TestLabelsInOneFile(t *testing.T) {
	for _, d := range labelDefinitions(t, filepath.Join("..", ".."), labelsFile) {
		t.Errorf("%s: define session labels in %s", d, labelsFile)
	}
}

// TestLabelDefinitions_Finds makes sure the check can fail:
// testdata/labels defines a label in each way the check looks at, and
// uses labels in the ways it allows.
func TestLabelDefinitions_Finds(t *testing.T) {
	got := labelDefinitions(t, filepath.Join("testdata", "labels"), "")
	want := []string{"label FooLabel defined", "label labelBar defined", `label "baz" written out`, `label "qux" written out`, `label "quux" written out`}
	if len(got) != len(want) {
		t.Fatalf("labelDefinitions(testdata/labels) found %d; want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasSuffix(got[i], w) {
			t.Errorf("definition %d = %q; want it to end %s", i, got[i], w)
		}
	}
}
