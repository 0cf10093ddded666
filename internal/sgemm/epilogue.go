package sgemm

import (
	"github.com/ascend-go/cann/internal/vmath"
)

// Act is an activation an Epilogue applies to each element of C.
type Act uint8

// Activations. Each computes exactly what ge's stand-alone kernel
// computes (the same float32 operations or the same vmath routines), so
// a fused product is bit-identical to the product followed by the
// activation task; vmath's forms are within a few ulp of the float64
// functions.
const (
	ActNone        Act = iota
	ActRelu            // max(x, 0); NaN and -0 pass through
	ActLeakyRelu       // x ≥ 0 ? x : Alpha·x (Alpha rounded to float32)
	ActClip            // min(max(x, Alpha), Beta) in float32; NaN stays NaN
	ActSigmoid         // 1 / (1 + e^-x)
	ActTanh            // tanh x
	ActHardSigmoid     // max(0, min(1, Alpha·x + Beta))
	ActHardSwish       // x · max(0, min(1, x/6 + 1/2))
	ActGelu            // the tanh approximation (vmath.Gelu)
	ActGeluErf         // x · Φ(x)
	ActSilu            // x · sigmoid(x)
	numActs
)

// Valid reports whether a is a defined activation.
func (a Act) Valid() bool { return a < numActs }

// Epilogue is applied to each element of C once its last K block is
// stored, while the tile is still in cache: C += Bias (per row or per
// column), then C = Act(C). The product with an epilogue is the product
// without one followed by these float32 operations, element by element,
// so it does not depend on the thread count either.
type Epilogue struct {
	Bias       []float32 // nil: none; else M (BiasPerRow) or N elements
	BiasPerRow bool      // Bias[i] is added to row i (a convolution's channel), else Bias[j] to column j
	Act        Act
	Alpha      float64 // LeakyRelu slope, Clip lower bound, HardSigmoid alpha
	Beta       float64 // Clip upper bound, HardSigmoid beta
}

func (e *Epilogue) active() bool { return e.Bias != nil || e.Act != ActNone }

func (e *Epilogue) check(m, n int) bool {
	if !e.Act.Valid() {
		return false
	}
	if e.Bias == nil {
		return true
	}
	if e.BiasPerRow {
		return len(e.Bias) >= m
	}
	return len(e.Bias) >= n
}

// apply runs the epilogue on rows [i0,i0+rows) × columns [j0,j0+cols) of
// C; c starts at element (i0, j0) with rows ldc apart.
func (e *Epilogue) apply(c []float32, ldc, i0, j0, rows, cols int) {
	for r := range rows {
		seg := c[r*ldc : r*ldc+cols]
		if e.Bias != nil {
			if e.BiasPerRow {
				VecScalar(VecAdd, seg, seg, e.Bias[i0+r])
			} else {
				Vec(VecAdd, seg, seg, e.Bias[j0:j0+cols])
			}
		}
		e.act(seg)
	}
}

// applyAll runs the epilogue on the whole M×N of C.
// Apply runs the epilogue on the m×n matrix c (row stride ldc) for a
// caller that computed the product itself (ge's depthwise convolution),
// as Gemm would have after its last K block.
func (e *Epilogue) Apply(c []float32, ldc, m, n int) {
	if e.active() && m > 0 && n > 0 {
		e.apply(c, ldc, 0, 0, m, n)
	}
}

func (e *Epilogue) applyAll(c *Call) {
	if e.active() && c.M > 0 && c.N > 0 {
		e.apply(c.C, c.LDC, 0, 0, c.M, c.N)
	}
}

func (e *Epilogue) act(x []float32) {
	switch e.Act {
	case ActNone:
	case ActRelu:
		vmath.Relu(x, x)
	case ActLeakyRelu:
		alpha := float32(e.Alpha)
		for i, v := range x {
			if v < 0 {
				x[i] = v * alpha
			}
		}
	case ActClip:
		vmath.Clip(x, x, float32(e.Alpha), float32(e.Beta))
	case ActSigmoid:
		vmath.Sigmoid(x, x)
	case ActTanh:
		vmath.Tanh(x, x)
	case ActHardSigmoid:
		vmath.HardSigmoid(x, x, float32(e.Alpha), float32(e.Beta))
	case ActHardSwish:
		vmath.HardSwish(x, x)
	case ActGelu:
		vmath.Gelu(x, x)
	case ActGeluErf:
		vmath.GeluErf(x, x)
	case ActSilu:
		vmath.Silu(x, x)
	}
}
