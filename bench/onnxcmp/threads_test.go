package onnxcmp

import (
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ascend-go/cann/internal/sgemm"
)

var (
	threadsTable = flag.String("threadstable", "", "file: BenchmarkThreads also writes its table here (Markdown)")
	threadsORT   = flag.Bool("threadsort", true, "BenchmarkThreads also times ONNX Runtime at 1 and 2 intra-op threads when it is installed")
	threadsOnly  = flag.Int("threadsonly", 0, "1 or 2: BenchmarkThreads runs the models at that GOMAXPROCS only, without probes (for a CPU profile)")
	threadsModel = flag.String("threadsmodels", "", "regexp: BenchmarkThreads runs only the models whose name matches")
)

// BenchmarkThreads is issue 25's "with two threads, models above 1 GFLOP
// run ≥ 1.6× faster than with one": it builds models of the kinds people
// export, each above 1 GFLOP (a ResNet-18 at 224×224, a BERT-style
// encoder, a wide MLP; random weights made at benchmark time), and runs
// each on the fallback (compiled plan, zero-copy binding: what acl users
// run) at GOMAXPROCS 1 and 2, alternating within every iteration (the
// order flips each iteration) so both see the same machine load.
//
// Per model it reports gflop, ms_1t and ms_2t (medians), x_2t (ms_1t over
// ms_2t), and the machine's own limit measured in the same iterations:
// xmax_sgemm, the 2-thread speedup of two independent single-threaded
// cache-resident products against one thread computing both (no sharing,
// no synchronisation: what two cores give at best), and xmax_copy, the
// same for memory copies too big for the caches. On a shared machine read
// x_2t against xmax_sgemm. Where ONNX Runtime is installed (see
// BenchmarkVsORT) it also reports ort_ms_1t, ort_ms_2t and ort_x_2t
// (intra-op threads 1 and 2, one node process each) for context. The
// probes and ONNX Runtime run after the fallback's runs in each
// iteration, after a pause: helper threads that spin after a run (the
// fallback's, ONNX Runtime's) would take a core from what follows. Both
// runtimes' runs start after the same pause (ortSettle) with the machine
// idle, so neither finds the other core warmer.
//
//	cd bench/onnxcmp && go test -run '^$' -bench Threads -benchtime 8x -threadstable /tmp/threads.md
func BenchmarkThreads(b *testing.B) {
	var ort [2]*ortServer
	if *threadsORT {
		for i := range ort {
			s, err := startORT()
			if err != nil {
				b.Logf("ONNX Runtime columns left out: %v", err)
				ort = [2]*ortServer{}
				break
			}
			defer s.close()
			ort[i] = s
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	load0 := loadAvg()
	var rows []threadsRow
	var filter *regexp.Regexp
	if *threadsModel != "" {
		filter = regexp.MustCompile(*threadsModel)
	}
	for _, m := range bigModels {
		if filter != nil && !filter.MatchString(m.name) {
			continue
		}
		r := threadsRow{name: m.name}
		b.Run(m.name, func(b *testing.B) {
			c, g, _, err := writeBig(m, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			r.gflop = g.flops / 1e9
			f, err := newFbRunner(c)
			if err != nil {
				b.Fatal(err)
			}
			defer f.close()
			if err := checkThreadsAgree(f); err != nil {
				b.Fatal(err)
			}
			withORT := ort[0] != nil
			for i, s := range ort {
				if s == nil {
					break
				}
				if err := s.loadThreads(c, i+1); err != nil {
					b.Logf("ONNX Runtime: %v", err)
					withORT = false
					break
				}
			}
			if withORT {
				if r.excess, err = ortExcess(f, ort[0], b.TempDir()); err != nil {
					b.Fatal(err)
				}
			}
			pr := newProbe()
			runtime.GC()
			debug.FreeOSMemory()
			var t [2][]time.Duration // fallback at 1 and 2 threads
			var o [2][]time.Duration // ONNX Runtime at 1 and 2 intra-op threads
			var ps, pc [2][]time.Duration
			if *threadsOnly > 0 {
				runtime.GOMAXPROCS(*threadsOnly)
				for b.Loop() {
					if err := f.run(); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			i := 0
			for b.Loop() {
				for j := range 2 {
					th := (i + j) % 2 // 0: one thread, 1: two
					runtime.GOMAXPROCS(th + 1)
					t0 := time.Now()
					if err := f.run(); err != nil {
						b.Fatal(err)
					}
					t[th] = append(t[th], time.Since(t0))
				}
				// The fallback's helper goroutines stay awake (spinning) a
				// little after a run: the probes and ONNX Runtime start
				// after they sleep, and ONNX Runtime's pool threads, which
				// spin after a run too, have stopped before the next
				// iteration.
				time.Sleep(settle)
				for j := range 2 {
					th := (i + j) % 2
					runtime.GOMAXPROCS(th + 1)
					ps[th] = append(ps[th], pr.sgemm(th+1))
					pc[th] = append(pc[th], pr.copy(th+1))
				}
				if withORT {
					// The same pause before ONNX Runtime's runs as before
					// the fallback's: both start with the machine idle.
					time.Sleep(ortSettle)
					for j := range 2 {
						th := (i + j) % 2
						d, err := ort[th].run(1)
						if err != nil {
							b.Fatal(err)
						}
						o[th] = append(o[th], d...)
					}
					time.Sleep(ortSettle)
				}
				i++
			}
			r.ms = [2]float64{ms(median(t[0])), ms(median(t[1]))}
			r.xMin = float64(slices.Min(t[0])) / float64(slices.Min(t[1]))
			r.xSgemm = float64(median(ps[0])) / float64(median(ps[1]))
			r.xCopy = float64(median(pc[0])) / float64(median(pc[1]))
			b.ReportMetric(r.gflop, "gflop")
			b.ReportMetric(r.ms[0], "ms_1t")
			b.ReportMetric(r.ms[1], "ms_2t")
			b.ReportMetric(r.ms[0]/r.ms[1], "x_2t")
			b.ReportMetric(r.xMin, "x_2t_fastest")
			b.ReportMetric(r.xSgemm, "xmax_sgemm")
			b.ReportMetric(r.xCopy, "xmax_copy")
			if withORT {
				r.ort = [2]float64{ms(median(o[0])), ms(median(o[1]))}
				b.ReportMetric(r.ort[0], "ort_ms_1t")
				b.ReportMetric(r.ort[1], "ort_ms_2t")
				b.ReportMetric(r.ort[0]/r.ort[1], "ort_x_2t")
			}
		})
		r.load = loadAvg()
		rows = append(rows, r)
	}
	table := threadsTableText(rows, load0)
	fmt.Print(table)
	if *threadsTable != "" {
		if err := os.WriteFile(*threadsTable, []byte(table), 0o644); err != nil {
			b.Error(err)
		}
	}
}

// settle is the pause after the fallback's runs in each iteration (its
// helpers spin for a millisecond), ortSettle the one after ONNX
// Runtime's (its pool threads spin longer).
const (
	settle    = 3 * time.Millisecond
	ortSettle = 100 * time.Millisecond
)

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

type threadsRow struct {
	name          string
	gflop         float64
	ms, ort       [2]float64
	xSgemm, xCopy float64
	xMin          float64 // speedup of the fastest runs, the least disturbed by other load
	excess        float64
	load          string
}

func threadsTableText(rs []threadsRow, load0 string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nfallback at GOMAXPROCS 1 and 2 (alternating runs, medians); %d CPUs; load average before %s\n\n", runtime.NumCPU(), load0)
	sb.WriteString("| model | GFLOP | 1 thread ms | 2 threads ms | speedup | fastest-run speedup | machine limit (sgemm / copy) | ORT 1t ms | ORT 2t ms | ORT speedup | note |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rs {
		if r.ms[1] == 0 {
			fmt.Fprintf(&sb, "| %s | %.2f | | | | | | | | | not timed both ways |\n", r.name, r.gflop)
			continue
		}
		ortCols := " | | "
		if r.ort[1] != 0 {
			ortCols = fmt.Sprintf("%.1f | %.1f | %.2f", r.ort[0], r.ort[1], r.ort[0]/r.ort[1])
		}
		note := "load " + r.load
		if r.excess > 0 {
			note = fmt.Sprintf("outputs differ from ORT by %.3g beyond rtol 1e-2 atol 1e-3; %s", r.excess, note)
		}
		fmt.Fprintf(&sb, "| %s | %.2f | %.1f | %.1f | %.2f | %.2f | %.2f / %.2f | %s | %s |\n",
			r.name, r.gflop, r.ms[0], r.ms[1], r.ms[0]/r.ms[1], r.xMin, r.xSgemm, r.xCopy, ortCols, note)
	}
	return sb.String()
}

// checkThreadsAgree runs f at GOMAXPROCS 1 and 2: the outputs must be
// bit-identical (the kernels split work without changing any sum's order).
func checkThreadsAgree(f *fbRunner) error {
	var outs [2][]ortInput
	for th := range 2 {
		runtime.GOMAXPROCS(th + 1)
		if err := f.run(); err != nil {
			return err
		}
		o, err := f.outputs()
		if err != nil {
			return err
		}
		outs[th] = o
	}
	for i := range outs[0] {
		if !slices.Equal(outs[0][i].data, outs[1][i].data) {
			return fmt.Errorf("output %d differs between GOMAXPROCS 1 and 2", i)
		}
	}
	return nil
}

// ortExcess is how far f's outputs are from ONNX Runtime's beyond a loose
// tolerance (≤ 0: they agree), so the benchmark times the same work.
func ortExcess(f *fbRunner, s *ortServer, dir string) (float64, error) {
	want, err := s.outputs(dir)
	if err != nil {
		return 0, err
	}
	got, err := f.outputs()
	if err != nil {
		return 0, err
	}
	ex := math.Inf(-1)
	for i := range min(len(got), len(want)) {
		ex = max(ex, maxExcess(got[i], want[i], 1e-2, 1e-3))
	}
	return ex, nil
}

// loadThreads loads c into the server's session with threads intra-op
// threads.
func (s *ortServer) loadThreads(c ortCase, threads int) error {
	type in struct {
		Name string `json:"name"`
		File string `json:"file"`
	}
	req := struct {
		Op      string `json:"op"`
		Model   string `json:"model"`
		Inputs  []in   `json:"inputs"`
		Threads int    `json:"threads"`
	}{Op: "load", Model: c.model, Threads: threads}
	for _, x := range c.inputs {
		req.Inputs = append(req.Inputs, in{x.name, x.file})
	}
	var r struct{ Version string }
	return s.call(req, &r)
}

// probe measures what two threads can give on this machine right now:
// the same work done by one goroutine, or split in halves over two
// goroutines that share nothing.
type probe struct {
	calls [2]sgemm.Call // an independent cache-resident product per thread
	src   [2][]byte     // per thread, too big for the caches
	dst   [2][]byte
}

// probeN is the probe product's size: 3 MB of operands, a few ms of FMAs.
const (
	probeN     = 384
	probeBytes = 32 << 20
)

func newProbe() *probe {
	p := &probe{}
	for i := range p.calls {
		x := input([]int64{2 * probeN * probeN})
		p.calls[i] = sgemm.Call{M: probeN, N: probeN, K: probeN, Alpha: 1,
			A: sgemm.Matrix{F32: x[:probeN*probeN], Stride: probeN}, B: sgemm.Matrix{F32: x[probeN*probeN:], Stride: probeN},
			C: make([]float32, probeN*probeN), LDC: probeN}
		p.src[i] = make([]byte, probeBytes)
		p.dst[i] = make([]byte, probeBytes)
		for j := range p.src[i] {
			p.src[i][j] = byte(j)
		}
	}
	return p
}

// both runs work(0) and work(1): one after the other on one thread, or
// at the same time on two (GOMAXPROCS is set by the caller).
func both(threads int, work func(i int)) time.Duration {
	t0 := time.Now()
	if threads == 1 {
		work(0)
		work(1)
		return time.Since(t0)
	}
	var wg sync.WaitGroup
	wg.Go(func() { work(1) })
	work(0)
	wg.Wait()
	return time.Since(t0)
}

func (p *probe) sgemm(threads int) time.Duration {
	return both(threads, func(i int) {
		if err := sgemm.GemmThreads(&p.calls[i], 1); err != nil {
			panic(err)
		}
	})
}

func (p *probe) copy(threads int) time.Duration {
	return both(threads, func(i int) { copy(p.dst[i], p.src[i]) })
}
