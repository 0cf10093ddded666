package cann_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	aclnative "github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/engram"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/fallback/hcclsim"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/hccl"
	hcclnative "github.com/ascend-go/cann/hccl/native"
	"github.com/ascend-go/cann/zerocopy"
)

// The README promises that no public function panics on bad input. The
// walker below holds the SDK to it: nilsafety_calls_test.go (generated)
// calls every exported function and every exported method of an exported
// type of every public package (the module's packages outside internal/,
// testdata/ and commands) with zero arguments (nil pointers, slices, maps,
// functions, interfaces and contexts, zero numbers, empty strings) and a
// nil (or zero) receiver, and TestNilSafety fails on a panic or a call
// that does not return. TestNilSafetyCoverage fails when the table and the
// packages disagree: a new exported function or method is not walked until
// the table is regenerated with
//
//	go test -run TestNilSafetyCoverage -nilsafety.update .
//
// The few entries not called say why (skip below, or the generator's
// reason: a *testing.T parameter, an unexported type in the signature).

var updateNilSafety = flag.Bool("nilsafety.update", false, "regenerate nilsafety_calls_test.go")

// nilCall is one walked function: call makes the call; reason, when call
// is nil, says why it is not made.
type nilCall struct {
	call   func()
	reason string
}

// skip lists functions the walker must not call, and why. Keep it short:
// each entry is a function whose zero-argument call is not bad input but a
// documented action on the process.
var skip = map[string]string{
	"github.com/ascend-go/cann/fallback/hcclsim/procs.ServeChild": "serves a rank on standard input and output, then exits the process (the entry of a rank's process)",
}

// TestNilSafety makes every call of the table on its own goroutine and
// fails on a panic, with its stack, or on a call still running after a
// minute (a bound on a hang, not a speed limit).
func TestNilSafety(t *testing.T) {
	keys := make([]string, 0, len(nilCalls))
	for k := range nilCalls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type outcome struct {
		key, panic string
	}
	var (
		mu       sync.Mutex
		panics   []outcome
		running  = map[string]bool{}
		work     = make(chan string)
		wg       sync.WaitGroup
		called   int
		notCalls []string
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				done := make(chan string, 1)
				mu.Lock()
				running[k] = true
				mu.Unlock()
				go func() {
					defer func() {
						if r := recover(); r != nil {
							done <- fmt.Sprintf("%v\n%s", r, debug.Stack())
							return
						}
						done <- ""
					}()
					nilCalls[k].call()
				}()
				select {
				case p := <-done:
					mu.Lock()
					delete(running, k)
					if p != "" {
						panics = append(panics, outcome{k, p})
					}
					mu.Unlock()
				case <-time.After(time.Minute):
					// left in running: reported below
				}
			}
		}()
	}
	for _, k := range keys {
		c := nilCalls[k]
		if reason, ok := skip[k]; ok {
			notCalls = append(notCalls, k+": "+reason)
			continue
		}
		if c.call == nil {
			notCalls = append(notCalls, k+": "+c.reason)
			continue
		}
		called++
		work <- k
	}
	close(work)
	wg.Wait()
	t.Logf("%d functions and methods called with zero arguments; %d not called:\n%s", called, len(notCalls), strings.Join(notCalls, "\n"))
	for _, p := range panics {
		t.Errorf("%s panics on zero arguments or a nil receiver: %s", p.key, p.panic)
	}
	for k := range running {
		t.Errorf("%s called with zero arguments has not returned after a minute", k)
	}
}

// TestNilSafetyCoverage: the table walks exactly the exported functions
// and methods the public packages declare now. With -nilsafety.update it
// rewrites the table first.
func TestNilSafetyCoverage(t *testing.T) {
	pkgs, err := publicPackages(".")
	require.NoError(t, err)
	if *updateNilSafety {
		src, err := generateNilCalls(pkgs)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile("nilsafety_calls_test.go", src, 0o644))
	}
	var declared []string
	for _, p := range pkgs {
		for _, f := range p.funcs {
			declared = append(declared, f.key)
		}
	}
	var missing, stale []string
	for _, k := range declared {
		if _, ok := nilCalls[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range nilCalls {
		if !slices.Contains(declared, k) {
			stale = append(stale, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	require.Empty(t, missing, "exported functions the nil-safety walker does not call: regenerate with go test -run TestNilSafetyCoverage -nilsafety.update .")
	require.Empty(t, stale, "walker entries for functions that are gone: regenerate with go test -run TestNilSafetyCoverage -nilsafety.update .")
	require.Greater(t, len(declared), 500, "the walker found too few functions")
}

const modulePath = "github.com/ascend-go/cann"

// publicPkg is one public package of the module and its exported
// functions and methods, in declaration order.
type publicPkg struct {
	dir, path string
	files     []*ast.File
	fset      *token.FileSet
	funcs     []publicFunc
}

// publicFunc is an exported function, or an exported method of an
// exported type: key names it ("path.F", "path.(*T).M", "path.T.M").
type publicFunc struct {
	key  string
	decl *ast.FuncDecl
}

// publicPackages lists the module's public packages under root: every
// directory with Go files for this platform, outside internal/, testdata/,
// nested modules and commands (package main).
func publicPackages(root string) ([]*publicPkg, error) {
	var pkgs []*publicPkg
	err := filepath.WalkDir(root, func(dir string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		base := d.Name()
		if dir != root && (base == "internal" || base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
			return filepath.SkipDir
		}
		if dir != root {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		bp, err := build.ImportDir(dir, 0)
		if err != nil {
			return nil // no Go files for this platform
		}
		if bp.Name == "main" || len(bp.GoFiles) == 0 {
			return nil
		}
		p := &publicPkg{dir: dir, path: path.Join(modulePath, filepath.ToSlash(dir)), fset: token.NewFileSet()}
		if dir == root {
			p.path = modulePath
		}
		for _, name := range bp.GoFiles {
			f, err := parser.ParseFile(p.fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			p.files = append(p.files, f)
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() {
					continue
				}
				if fd.Recv == nil {
					p.funcs = append(p.funcs, publicFunc{key: p.path + "." + fd.Name.Name, decl: fd})
					continue
				}
				typ, ptr := recvType(fd.Recv.List[0].Type)
				if !ast.IsExported(typ) {
					continue
				}
				key := p.path + "." + typ + "." + fd.Name.Name
				if ptr {
					key = p.path + ".(*" + typ + ")." + fd.Name.Name
				}
				p.funcs = append(p.funcs, publicFunc{key: key, decl: fd})
			}
		}
		pkgs = append(pkgs, p)
		return nil
	})
	return pkgs, err
}

// recvType returns a receiver's base type name and whether it is a
// pointer.
func recvType(e ast.Expr) (name string, ptr bool) {
	if s, ok := e.(*ast.StarExpr); ok {
		e, ptr = s.X, true
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name, ptr
	}
	return "", ptr
}

// generateNilCalls type-checks the packages from source and writes the
// table: per function a closure calling it with zero arguments.
func generateNilCalls(pkgs []*publicPkg) ([]byte, error) {
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)
	g := &gen{aliases: map[string]string{}, used: map[string]bool{}}
	var body bytes.Buffer
	for _, p := range pkgs {
		tp, err := imp.ImportFrom(p.path, ".", 0)
		if err != nil {
			return nil, fmt.Errorf("type-checking %s: %w", p.path, err)
		}
		for _, f := range p.funcs {
			expr, reason := g.call(tp, f)
			if reason != "" {
				fmt.Fprintf(&body, "\t%q: {reason: %q},\n", f.key, reason)
				continue
			}
			fmt.Fprintf(&body, "\t%q: {call: func() { %s }},\n", f.key, expr)
		}
	}
	var out bytes.Buffer
	out.WriteString("// Code generated by go test -run TestNilSafetyCoverage -nilsafety.update .; DO NOT EDIT.\n\n")
	out.WriteString("package cann_test\n\nimport (\n")
	paths := make([]string, 0, len(g.aliases))
	for p := range g.aliases {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if bytes.Contains(body.Bytes(), []byte(g.aliases[p]+".")) { // not only named by a skipped entry
			fmt.Fprintf(&out, "\t%s %q\n", g.aliases[p], p)
		}
	}
	out.WriteString(")\n\n// nilCalls is the walker's table (nilsafety_test.go).\nvar nilCalls = map[string]nilCall{\n")
	out.Write(body.Bytes())
	out.WriteString("}\n")
	return format.Source(out.Bytes())
}

// gen writes call expressions, importing what they name.
type gen struct {
	aliases map[string]string // import path → name in the generated file
	used    map[string]bool
}

// alias returns the generated file's name for package p.
func (g *gen) alias(p *types.Package) string {
	if a, ok := g.aliases[p.Path()]; ok {
		return a
	}
	a := p.Name()
	if strings.HasPrefix(p.Path(), modulePath+"/") {
		a = strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(strings.TrimPrefix(p.Path(), modulePath+"/"))
	}
	for base, i := a, 2; g.used[a] || a == "nilCall" || a == "nilCalls"; i++ {
		a = fmt.Sprintf("%s%d", base, i)
	}
	g.aliases[p.Path()], g.used[a] = a, true
	return a
}

// typeString spells t in the generated file, or returns false when it
// cannot be named there (an unexported type of another package).
func (g *gen) typeString(t types.Type) (string, bool) {
	ok := true
	var visit func(types.Type)
	seen := map[types.Type]bool{}
	visit = func(t types.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		switch x := t.(type) {
		case *types.Named:
			if o := x.Obj(); o.Pkg() != nil && !o.Exported() {
				ok = false
			}
			if x.TypeArgs() != nil {
				for i := range x.TypeArgs().Len() {
					visit(x.TypeArgs().At(i))
				}
			}
		case *types.Alias:
			visit(types.Unalias(x))
		case *types.Pointer:
			visit(x.Elem())
		case *types.Slice:
			visit(x.Elem())
		case *types.Array:
			visit(x.Elem())
		case *types.Map:
			visit(x.Key())
			visit(x.Elem())
		case *types.Chan:
			visit(x.Elem())
		case *types.Signature:
			for i := range x.Params().Len() {
				visit(x.Params().At(i).Type())
			}
			for i := range x.Results().Len() {
				visit(x.Results().At(i).Type())
			}
		case *types.Struct:
			for i := range x.NumFields() {
				if !x.Field(i).Exported() {
					ok = false
				}
				visit(x.Field(i).Type())
			}
		case *types.Interface:
			for i := range x.NumMethods() {
				if !x.Method(i).Exported() {
					ok = false
				}
			}
		case *types.TypeParam:
			ok = false
		}
	}
	visit(t)
	if !ok {
		return "", false
	}
	return types.TypeString(t, g.alias), true
}

// candidates are the type arguments tried, in order, for a type parameter.
var candidates = []types.Type{
	types.Typ[types.Float32], types.Typ[types.Int], types.Typ[types.Uint16], types.Typ[types.Uint8],
	types.Typ[types.String], types.NewSlice(types.Typ[types.Byte]), types.NewInterfaceType(nil, nil),
}

// instantiate picks for each type parameter the first candidate that
// satisfies its constraint.
func instantiate(tparams *types.TypeParamList) ([]types.Type, bool) {
	var args []types.Type
	for i := range tparams.Len() {
		iface, _ := tparams.At(i).Constraint().Underlying().(*types.Interface)
		var pick types.Type
		for _, c := range candidates {
			if iface == nil || types.Satisfies(c, iface) {
				pick = c
				break
			}
		}
		if pick == nil {
			return nil, false
		}
		args = append(args, pick)
	}
	return args, true // the caller's types.Instantiate checks them together
}

// call returns the Go expression calling f with zero arguments, or why
// there is none.
func (g *gen) call(tp *types.Package, f publicFunc) (string, string) {
	obj := tp.Scope().Lookup(f.decl.Name.Name)
	var fn *types.Func
	var recv string
	if f.decl.Recv == nil {
		fn, _ = obj.(*types.Func)
		if fn == nil {
			return "", "not a function in the type-checked package"
		}
	} else {
		tname, ptr := recvType(f.decl.Recv.List[0].Type)
		to, _ := tp.Scope().Lookup(tname).(*types.TypeName)
		if to == nil {
			return "", "receiver type not found"
		}
		named, _ := to.Type().(*types.Named)
		if named == nil {
			return "", "receiver is not a named type"
		}
		var rt types.Type = named
		if named.TypeParams().Len() > 0 {
			targs, ok := instantiate(named.TypeParams())
			if !ok {
				return "", "no type argument satisfies the receiver's constraints"
			}
			inst, err := types.Instantiate(nil, named, targs, true)
			if err != nil {
				return "", "cannot instantiate the receiver: " + err.Error()
			}
			rt = inst
		}
		s, ok := g.typeString(rt)
		if !ok {
			return "", "the receiver type cannot be named outside its package"
		}
		if ptr {
			recv = "(*" + s + ")(nil)."
		} else {
			recv = "(*new(" + s + "))."
		}
		ms := types.NewMethodSet(types.NewPointer(rt))
		sel := ms.Lookup(tp, f.decl.Name.Name)
		if sel == nil {
			return "", "method not in the method set"
		}
		fn = sel.Obj().(*types.Func)
	}
	sig := fn.Type().(*types.Signature)
	name := f.decl.Name.Name
	if recv == "" {
		name = g.alias(tp) + "." + name
		if sig.TypeParams().Len() > 0 {
			targs, ok := instantiate(sig.TypeParams())
			if !ok {
				return "", "no type argument satisfies the function's constraints"
			}
			inst, err := types.Instantiate(nil, sig, targs, true)
			if err != nil {
				return "", "cannot instantiate: " + err.Error()
			}
			sig = inst.(*types.Signature)
			var ts []string
			for _, a := range targs {
				s, _ := g.typeString(a)
				ts = append(ts, s)
			}
			name += "[" + strings.Join(ts, ", ") + "]"
		}
	}
	var args []string
	params := sig.Params()
	for i := range params.Len() {
		if sig.Variadic() && i == params.Len()-1 {
			break
		}
		pt := params.At(i).Type()
		s, ok := g.typeString(pt)
		if !ok {
			return "", fmt.Sprintf("parameter %d has a type that cannot be named outside its package", i)
		}
		if strings.Contains(s, "testing.") {
			return "", "takes a testing value: a test helper, called by the tests that use it"
		}
		args = append(args, "*new("+s+")")
	}
	call := recv + name + "(" + strings.Join(args, ", ") + ")"
	if n := sig.Results().Len(); n > 0 {
		call = strings.Repeat("_, ", n-1) + "_ = " + call // vet: results of String and Error must be used
	}
	return call, ""
}

// TestNilHandleCodes: a nil handle answers one code per library across the
// packages: ACL_ERROR_INVALID_PARAM (and ErrInvalidHandle) on the ACL
// side, HCCL_E_PTR on the HCCL side (docs/misuse.md, "Nil handles in Go").
func TestNilHandleCodes(t *testing.T) {
	aclErrs := map[string]error{
		"acl.Device.NewStream": func() error { _, err := (*acl.Device)(nil).NewStream(); return err }(),
		"acl.Model.Execute":    (*acl.Model)(nil).Execute(nil, nil),
		"zerocopy.Binding.Run": (*zerocopy.Binding)(nil).Run(),
		"zerocopy.ReadOutput":  func() error { _, err := zerocopy.ReadOutput[float32](nil, 0); return err }(),
		"engram.Buffer.Fetch":  func() error { _, err := (*engram.Buffer)(nil).Fetch(nil, nil); return err }(),
		"fallback.NPU.Malloc":  func() error { _, err := (*fallback.NPU)(nil).Malloc(1, 0); return err }(),
		"native.Backend.Init":  (*aclnative.Backend)(nil).Init(""),
		"ge.Graph.Err":         (*ge.Graph)(nil).Err(),
	}
	for what, err := range aclErrs {
		require.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err), "%s: %v", what, err)
		require.ErrorIs(t, err, acl.ErrInvalidHandle, what)
	}
	_, err := hccl.InitAll(nil, []int32{0})
	hcclErrs := map[string]error{
		"hccl.InitAll":              err,
		"hccl.Comm.AllReduce":       (*hccl.Comm)(nil).AllReduce(context.Background(), nil, nil, 1, hccl.Float32, hccl.Sum),
		"hcclsim.Sim.CommInitAll":   func() error { _, err := (*hcclsim.Sim)(nil).CommInitAll([]int32{0}); return err }(),
		"hccl/native.Backend.Close": (*hcclnative.Backend)(nil).CommDestroy(0),
	}
	for what, err := range hcclErrs {
		var e *hccl.Error
		require.ErrorAs(t, err, &e, what)
		require.Equal(t, hccl.EPtr, e.Code, "%s: %v", what, err)
	}
}
