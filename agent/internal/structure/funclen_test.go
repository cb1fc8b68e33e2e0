// Package structure holds tests of the agent's source as a whole rather than of one package.
package structure

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the longest a non-test function may be, counted from its func keyword to its closing
// brace (the doc comment is not counted). A function that needs more is doing several steps that each
// deserve a name.
const maxFuncLines = 80

// longFunc is a function over maxFuncLines.
type longFunc struct {
	pos   token.Position
	name  string
	lines int
}

func (f longFunc) String() string {
	return fmt.Sprintf("%s:%d %s (%d lines)", f.pos.Filename, f.pos.Line, f.name, f.lines)
}

// TestNoFunctionOver80Lines parses every non-test Go file of the agent module (every package, commands,
// tests' helper programs under testdata) and names each function or method longer than maxFuncLines.
func TestNoFunctionOver80Lines(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var long []longFunc
	sawMain := false
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		sawMain = sawMain || filepath.ToSlash(path) == filepath.ToSlash(filepath.Join(root, "cmd/wirespeed-agent/main.go"))
		for _, lf := range longFuncs(fset, f) {
			lf.pos.Filename, _ = filepath.Rel(root, lf.pos.Filename)
			long = append(long, lf)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawMain {
		t.Fatalf("cmd/wirespeed-agent/main.go not seen under %s: the walk is not seeing the module", root)
	}
	if len(long) > 0 {
		sort.Slice(long, func(i, j int) bool { return long[i].lines > long[j].lines })
		msg := make([]string, len(long))
		for i, f := range long {
			msg[i] = "  " + f.String()
		}
		t.Fatalf("%d non-test functions over %d lines; extract well-named steps:\n%s",
			len(long), maxFuncLines, strings.Join(msg, "\n"))
	}
}

// longFuncs returns f's functions and methods, and function literals declared at package level, that
// are longer than maxFuncLines.
func longFuncs(fset *token.FileSet, f *ast.File) []longFunc {
	var out []longFunc
	check := func(name string, n ast.Node) {
		start, end := fset.Position(n.Pos()), fset.Position(n.End())
		if lines := end.Line - start.Line + 1; lines > maxFuncLines {
			out = append(out, longFunc{pos: start, name: name, lines: lines})
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				check(funcName(d), d)
			}
		case *ast.GenDecl:
			ast.Inspect(d, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					check("func literal", lit)
					return false
				}
				return true
			})
		}
	}
	return out
}

// funcName is Name, or Type.Name for a method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr: // generic receiver T[P]
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + d.Name.Name
		}
		return d.Name.Name
	}
}

// moduleRoot is the directory of the agent's go.mod, found upwards from the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// The rule counts what it says: 80 lines pass, 81 fail, methods are named by their type, and a long
// function literal at package level counts too.
func TestLongFuncsCountsFromFuncToClosingBrace(t *testing.T) {
	body := func(lines int) string { // a function of exactly `lines` lines
		return "{\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	src := "package p\n\ntype T struct{}\n\n" +
		"// doc comments do not count\n// at all\nfunc fits() " + body(80) +
		"func tooLong() " + body(81) +
		"func (t *T) method() " + body(81) +
		"var literal = func() " + body(81) +
		"func short() {}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, lf := range longFuncs(fset, f) {
		got = append(got, fmt.Sprintf("%s %d", lf.name, lf.lines))
	}
	want := []string{"tooLong 81", "T.method 81", "func literal 81"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("long functions %q, want %q", got, want)
	}
}
