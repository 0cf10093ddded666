package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ascend-go/cann"
	aclnative "github.com/ascend-go/cann/acl/native"
	hcclnative "github.com/ascend-go/cann/hccl/native"
	"github.com/ascend-go/cann/internal/stubbuild"
)

type config struct {
	dryRun           bool
	libDir, out      string
	libDirFrom       string // "-lib-dir" or "CANN_REAL_LIB_DIR": what set libDir, for errors
	bench, benchtime string
	model            string // offline model for the doctor's smoke test
	timeout          time.Duration
	root             string // module root; "" finds it from the working directory
}

// suite is one conformance run.
type suite struct {
	name, pkg, test string
}

var suites = []suite{
	{"ACL conformance", "./acl/native/", "TestConformanceReal"},
	{"HCCL conformance", "./hccl/native/", "TestConformanceReal"},
}

// testResult is the outcome of one test or subtest.
type testResult struct {
	name, action string
	elapsed      float64
	// msg is the test's own output (its t.Skip, t.Error or t.Fatal
	// messages and logs), without go test's RUN/PASS/FAIL lines.
	msg string
}

// run executes every step and writes the report; ok is false when a step
// failed. err is for what stops the run itself (no library directory, no
// module root, an unwritable report).
func run(ctx context.Context, cfg config, log io.Writer) (ok bool, err error) {
	root := cfg.root
	if root == "" {
		if root, err = moduleRoot(); err != nil {
			return false, err
		}
	}
	lib := cfg.libDir
	bench, benchtime := cfg.bench, cfg.benchtime
	if cfg.dryRun {
		if lib, err = stubLibDir(root); err != nil {
			return false, err
		}
		defer os.RemoveAll(lib)
		bench = or(bench, "^(BenchmarkNativeCall|BenchmarkPlanner)$")
		benchtime = or(benchtime, "1x")
	}
	if lib == "" {
		return false, errors.New("CANN_REAL_LIB_DIR is not set (or pass -lib-dir, or --dry-run for the C stubs)")
	}
	if !cfg.dryRun {
		if err := checkLibDir(lib, or(cfg.libDirFrom, "-lib-dir")); err != nil {
			return false, err
		}
	}
	bench, benchtime = or(bench, "."), or(benchtime, "1s")
	env := append(os.Environ(),
		"CANN_REAL_LIB_DIR="+lib, aclnative.EnvLibrary+"="+lib, hcclnative.EnvLibrary+"="+lib, cann.EnvBackend+"=native")

	var md bytes.Buffer
	mode := "real hardware"
	if cfg.dryRun {
		mode = "dry run over the C stubs"
	}
	fmt.Fprintf(&md, "# cann-go %s on %s\n\n", cann.Version, mode)
	fmt.Fprintf(&md, "- libraries: `%s`\n- date: %s\n\n", lib, time.Now().UTC().Format(time.RFC3339))
	ok = true

	md.WriteString("## Conformance\n\n| suite | pass | skip | fail |\n| --- | --- | --- | --- |\n")
	var details bytes.Buffer
	for _, s := range suites {
		fmt.Fprintf(log, "== %s (%s)\n", s.name, s.pkg)
		res, out, err := goTestJSON(ctx, root, env, "-count=1", "-run", "^"+s.test+"$", s.pkg)
		counts := map[string]int{}
		for _, r := range res {
			counts[r.action]++
		}
		if err != nil || counts["fail"] > 0 || len(res) == 0 {
			ok = false
		}
		fmt.Fprintf(&md, "| %s | %d | %d | %d |\n", s.name, counts["pass"], counts["skip"], counts["fail"])
		fmt.Fprintf(&details, "\n### %s\n\n", s.name)
		if err != nil && len(res) == 0 {
			fmt.Fprintf(&details, "did not run: %v\n\n```\n%s\n```\n", err, tail(out, 40))
			continue
		}
		details.WriteString(resultTable(res))
	}
	md.Write(details.Bytes())

	md.WriteString("\n## Examples\n\n")
	md.WriteString("`examples/doctor` runs on the native libraries; quickstart, allreduce and engram are fallback programs (the SDK's ge-format model and HCCL rank processes on the host-memory NPU).\n\n")
	doctor := []string{"./examples/doctor", "-backend", "native"}
	if cfg.model != "" {
		doctor = append(doctor, "-model", cfg.model)
	}
	for _, ex := range [][]string{doctor} {
		fmt.Fprintf(log, "== %s\n", ex[0])
		cmd := exec.CommandContext(ctx, "go", append([]string{"run"}, ex...)...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		status := "PASS"
		if err != nil {
			status, ok = "FAIL ("+err.Error()+")", false
		}
		fmt.Fprintf(&md, "### `go run %s`: %s\n\n```\n%s```\n\n", strings.Join(ex, " "), status, out)
	}

	md.WriteString("## Benchmarks\n\n")
	fmt.Fprintf(&md, "`go test -run '^$' -bench '%s' -benchtime %s ./bench/ ./hccl/native/`\n\n", bench, benchtime)
	fmt.Fprintf(log, "== benchmarks\n")
	res, out, err := goTestJSON(ctx, root, env, "-count=1", "-run", "^$", "-bench", bench, "-benchtime", benchtime, "./bench/", "./hccl/native/")
	var failed []testResult
	for _, r := range res {
		if r.action == "fail" || r.action == "skip" {
			failed = append(failed, r)
		}
		if r.action == "fail" {
			ok = false
		}
	}
	if len(failed) > 0 {
		md.WriteString("Benchmarks that failed or skipped:\n\n" + resultTable(failed) + "\n")
	}
	if err != nil {
		ok = false
		fmt.Fprintf(&md, "failed: %v\n\n```\n%s\n```\n", err, tail(out, 40))
	}
	md.WriteString(benchTables(out))
	if err := os.WriteFile(cfg.out, md.Bytes(), 0o644); err != nil {
		return false, err
	}
	fmt.Fprintf(log, "wrote %s\n", cfg.out)
	return ok, nil
}

// goTestJSON runs go test -json and returns the final result of every
// test and subtest in order of completion, and the plain output.
func goTestJSON(ctx context.Context, root string, env []string, args ...string) ([]testResult, string, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json"}, args...)...)
	cmd.Dir, cmd.Env = root, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	res, out := parseTestJSON(raw)
	return res, out + stderr.String(), err
}

// parseTestJSON reads go test -json output: the final result of every
// test and subtest with its own output, and the plain output.
func parseTestJSON(raw []byte) ([]testResult, string) {
	var res []testResult
	var out strings.Builder
	own := map[string]*strings.Builder{} // key: package and test
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Action, Package, Test, Output string
			Elapsed                       float64
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			out.WriteString(sc.Text() + "\n")
			continue
		}
		key := ev.Package + " " + ev.Test
		switch ev.Action {
		case "output":
			out.WriteString(ev.Output)
			if ev.Test != "" && !goTestLine(ev.Output) {
				if own[key] == nil {
					own[key] = &strings.Builder{}
				}
				own[key].WriteString(ev.Output)
			}
		case "pass", "fail", "skip":
			if ev.Test != "" {
				r := testResult{name: ev.Test, action: ev.Action, elapsed: ev.Elapsed}
				if b := own[key]; b != nil {
					r.msg = strings.TrimSpace(b.String())
				}
				res = append(res, r)
			}
		}
	}
	return res, out.String()
}

// goTestLine reports whether a line of a test's output is go test's own
// bookkeeping rather than what the test said.
func goTestLine(line string) bool {
	t := strings.TrimSpace(line)
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP", "--- BENCH"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return t == "" || t == "PASS" || t == "FAIL"
}

// resultTable is the Markdown table of results: every FAIL and SKIP
// carries the test's own message (trimmed to maxMsg characters).
func resultTable(res []testResult) string {
	const maxMsg = 600
	var b strings.Builder
	b.WriteString("| test | result | seconds | message |\n| --- | --- | --- | --- |\n")
	for _, r := range res {
		msg := ""
		if r.action != "pass" {
			msg = r.msg
			if msg == "" {
				msg = "(no message)"
			}
			if len(msg) > maxMsg {
				msg = msg[:maxMsg] + "…"
			}
			msg = strings.NewReplacer("|", "\\|", "\n", "<br>", "`", "'").Replace(msg)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %.2f | %s |\n", r.name, strings.ToUpper(r.action), r.elapsed, msg)
	}
	return b.String()
}

// checkLibDir refuses, before anything runs, a library directory that
// does not exist or from which the ACL or HCCL library does not load (a
// missing file, a dependency the loader cannot find, a required symbol
// missing): the suites would otherwise spend minutes failing. from names
// the flag or variable that gave dir.
func checkLibDir(dir, from string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", from, dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s %s: not a directory (give the CANN lib64 directory)", from, dir)
	}
	a, err := aclnative.Open(aclnative.WithLibraryPath(dir))
	if err != nil {
		return fmt.Errorf("%s %s: %w", from, dir, err)
	}
	_ = a.Close()
	h, err := hcclnative.Open(hcclnative.WithLibraryPath(dir))
	if err != nil {
		return fmt.Errorf("%s %s: %w", from, dir, err)
	}
	return h.Close()
}

// benchTables turns benchmark lines into one Markdown table per benchmark
// family (the name before the first slash), a column per unit.
func benchTables(out string) string {
	type row struct {
		name string
		vals map[string]string
	}
	fams := map[string][]row{}
	units := map[string][]string{}
	var order []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		fam := strings.SplitN(f[0], "/", 2)[0]
		if _, seen := fams[fam]; !seen {
			order = append(order, fam)
		}
		r := row{name: f[0], vals: map[string]string{"iterations": f[1]}}
		for i := 2; i+1 < len(f); i += 2 {
			u := f[i+1]
			if !contains(units[fam], u) {
				units[fam] = append(units[fam], u)
			}
			r.vals[u] = f[i]
		}
		fams[fam] = append(fams[fam], r)
	}
	if len(order) == 0 {
		return "no benchmark results\n"
	}
	sort.Strings(order)
	var b strings.Builder
	for _, fam := range order {
		fmt.Fprintf(&b, "### %s\n\n| benchmark | iterations | %s |\n|%s\n", fam, strings.Join(units[fam], " | "), strings.Repeat(" --- |", len(units[fam])+2))
		for _, r := range fams[fam] {
			cells := []string{"`" + r.name + "`", r.vals["iterations"]}
			for _, u := range units[fam] {
				cells = append(cells, r.vals[u])
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// stubLibDir builds the C stubs and lays them out as a lib64 directory.
func stubLibDir(root string) (string, error) {
	dir, err := os.MkdirTemp("", "cann-real-hardware-dry-run-")
	if err != nil {
		return "", err
	}
	for _, s := range []struct{ src, name string }{
		{filepath.Join(root, "acl", "native", "testdata", "stub"), aclnative.LibACL},
		{filepath.Join(root, "hccl", "native", "testdata", "stub"), hcclnative.LibHCCL},
	} {
		p, err := stubbuild.Compile(s.src, s.name, stubbuild.Options{})
		if err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("build the %s stub: %w", s.name, err)
		}
		b, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, s.name), b, 0o755)
		}
		if err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the cann-go module")
	}
	return filepath.Dir(mod), nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
