package onnxcmp

import (
	"math"
	"runtime"
	"slices"
	"testing"
)

// bigProductFLOPs are the products' FLOPs of BenchmarkThreads' models,
// counted here from their published layer tables, independently of the
// graph builder: ResNet-18's convolutions and classifier (1.814 G
// multiply-adds, torchvision's figure), the encoder's projections,
// attention products and feed-forward layers, the MLP's layers.
var bigProductFLOPs = map[string]float64{
	"resnet18_224": func() float64 {
		macs := 0.0
		conv := func(cin, cout, k, hw int) { macs += float64(cin * cout * k * k * hw * hw) }
		conv(3, 64, 7, 112)
		for range 4 {
			conv(64, 64, 3, 56)
		}
		for i, ch := range []int{128, 256, 512} {
			hw := 28 >> i
			conv(ch/2, ch, 3, hw) // first 3×3, stride 2
			conv(ch/2, ch, 1, hw) // projection shortcut
			for range 3 {
				conv(ch, ch, 3, hw)
			}
		}
		macs += 512 * 1000
		return 2 * macs
	}(),
	"bert_seq256_d512_2layers": 2 * 2 * float64(4*256*512*512+2*256*256*512+2*256*512*2048),
	"mlp_b128_1024_2048x3":     2 * 128 * float64(1024*2048+2*2048*2048+2048*1000),
}

// Each of BenchmarkThreads' models has the products it is described by
// (and so the GFLOP the benchmark reports), is above 1 GFLOP, imports,
// and computes finite outputs of the right size, bit-identical at
// GOMAXPROCS 1 and 2.
func TestBigModels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three models of 3 GFLOP")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, m := range bigModels {
		t.Run(m.name, func(t *testing.T) {
			c, g, out, err := writeBig(m, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			want, ok := bigProductFLOPs[m.name]
			if !ok {
				t.Fatal("no reference count")
			}
			if g.prod != want {
				t.Errorf("product FLOPs %v, the layer table says %v", g.prod, want)
			}
			if g.flops <= 1e9 {
				t.Errorf("%v FLOPs, not above 1 GFLOP", g.flops)
			}
			f, err := newFbRunner(c)
			if err != nil {
				t.Fatal(err)
			}
			defer f.close()
			if err := checkThreadsAgree(f); err != nil {
				t.Fatal(err)
			}
			outs, err := f.outputs()
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != 1 || !slices.Equal(outs[0].dims, g.shape[out]) {
				t.Fatalf("outputs %d, first of dims %v; want one of %v", len(outs), outs[0].dims, g.shape[out])
			}
			vals := asFloat64(outs[0].dtype, outs[0].data)
			if len(vals) != int(numel(g.shape[out])) {
				t.Fatalf("%d output values, want %d", len(vals), numel(g.shape[out]))
			}
			for i, v := range vals {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("output %d is %v", i, v)
				}
			}
		})
	}
}
