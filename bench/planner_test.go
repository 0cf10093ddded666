package bench

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/getest"
)

// plannerShapes are the four graph families the memory planner is judged on,
// at sizes of a small real model.
var plannerShapes = []struct {
	name  string
	build func() *ge.Graph
}{
	{"mlp", func() *ge.Graph {
		return getest.MLP(rand.New(rand.NewPCG(1, 1)), acl.Float16, 32, 256, 1024, 1024, 512, 128)
	}},
	{"residual", func() *ge.Graph {
		return getest.Residual(rand.New(rand.NewPCG(2, 2)), acl.Float16, 32, 256, 1024, 8)
	}},
	{"branch_concat", func() *ge.Graph {
		return getest.BranchConcat(rand.New(rand.NewPCG(3, 3)), acl.Float16, 32, 256, 6)
	}},
	{"transformer", func() *ge.Graph {
		return getest.TransformerBlock(rand.New(rand.NewPCG(4, 4)), acl.Float16, 4, 128, 256, 8)
	}},
}

// BenchmarkPlanner compiles each graph shape and reports:
//   - fm_ratio: feature-map bytes ÷ the lower bound (peak of simultaneously
//     live bytes); the target is ≤ 1.10;
//   - fm_vs_noreuse: feature-map bytes ÷ those of a compile without lifetime
//     reuse (every tensor its own block);
//   - x_noreuse: compile time ÷ the compile time without reuse, both measured
//     in this run, i.e. what the planner costs on top of the rest of Compile.
func BenchmarkPlanner(b *testing.B) {
	for _, s := range plannerShapes {
		b.Run(s.name, func(b *testing.B) {
			g := s.build()
			if err := g.Err(); err != nil {
				b.Fatal(err)
			}
			flat, err := ge.Compile(g, ge.WithoutMemoryReuse())
			if err != nil {
				b.Fatal(err)
			}
			const baseRuns = 20
			start := time.Now()
			for range baseRuns {
				if _, err := ge.Compile(g, ge.WithoutMemoryReuse()); err != nil {
					b.Fatal(err)
				}
			}
			base := float64(time.Since(start).Nanoseconds()) / baseRuns

			var m *ge.CompiledModel
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if m, err = ge.Compile(g); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			fm, lb := m.FeatureMapSize(), m.FeatureMapLowerBound()
			b.ReportMetric(float64(fm)/float64(lb), "fm_ratio")
			b.ReportMetric(float64(fm)/float64(flat.FeatureMapSize()), "fm_vs_noreuse")
			b.ReportMetric(perOp/base, "x_noreuse")
			b.ReportMetric(float64(len(m.Tasks)), "tasks")
		})
	}
}

// TestPlannerTarget holds the benchmark's graphs to the fm_ratio target and
// proves their plans with the brute-force checker.
func TestPlannerTarget(t *testing.T) {
	for _, s := range plannerShapes {
		m, err := ge.Compile(s.build())
		if err != nil {
			t.Fatal(err)
		}
		if err := getest.CheckModel(m); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		ratio := float64(m.FeatureMapSize()) / float64(m.FeatureMapLowerBound())
		t.Logf("%s: fm %d B, lower bound %d B, ratio %.3f, %d tasks", s.name, m.FeatureMapSize(), m.FeatureMapLowerBound(), ratio, len(m.Tasks))
		if ratio > 1.10 {
			t.Errorf("%s: fm_ratio %.3f above 1.10", s.name, ratio)
		}
	}
}
