package sgemm

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/ascend-go/cann/internal/par"
)

// Kind is how an operand's elements are stored.
type Kind uint8

// Element kinds.
const (
	F32  Kind = iota // float32, in Matrix.F32
	F16              // IEEE half, little-endian, in Matrix.Half
	BF16             // bfloat16, little-endian, in Matrix.Half
)

// Matrix is a GEMM operand as stored: row-major, Stride elements between
// consecutive stored rows. The operand the product uses is op(X): the
// stored matrix, or its transpose when Trans is set.
type Matrix struct {
	Kind   Kind
	F32    []float32 // elements of a F32 matrix
	Half   []byte    // elements of a F16 or BF16 matrix, 2 bytes each
	Stride int
	Trans  bool
	// Im2col, when set, makes the operand the receptive fields of an
	// image (B only, float32, not transposed): the other fields are unused.
	Im2col *Im2col
	// PackedNR, when set, makes F32 a B packed by PackB with panels of
	// PackedNR columns for a PackedK×PackedN operand (see Packed); Stride
	// is then the padded column count.
	PackedNR, PackedK, PackedN int
}

// Call is one product C = Alpha·op(A)·op(B) + Beta·C with op(A) M×K, op(B)
// K×N and C M×N row-major with LDC elements between rows. Beta = 0 means C
// is not read (NaN or Inf there do not leak into the result); Alpha = 0 or
// K = 0 leaves C = Beta·C. C must not overlap A or B.
type Call struct {
	M, N, K     int
	Alpha, Beta float32
	A, B        Matrix
	C           []float32
	LDC         int
	// Epi, when set, runs on each element of C after its last K block
	// (bias, activation): the fused epilogue of a layer.
	Epi Epilogue
}

// ErrShape reports a Call whose sizes, strides or slice lengths disagree.
var ErrShape = errors.New("sgemm: bad shape")

// Gemm computes c on up to GOMAXPROCS threads.
func Gemm(c *Call) error { return GemmThreads(c, 0) }

// GemmThreads computes c on at most threads threads (≤ 0: GOMAXPROCS). The
// result does not depend on threads.
func GemmThreads(c *Call, threads int) error {
	if err := c.validate(); err != nil {
		return err
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	run(c, best, threads)
	return nil
}

// GemmBatch computes every call. A batch with too little work to be
// worth a second thread runs serially; else, when the calls share out
// evenly over the threads (or are too small to split one by one), each
// thread computes whole calls — one fork for the batch, no barriers, no A
// packed twice; else each call uses all threads. Either way each result
// is the one Gemm gives.
func GemmBatch(calls []Call) error {
	total := 0
	for i := range calls {
		if err := calls[i].validate(); err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
		total += calls[i].work()
	}
	threads := runtime.GOMAXPROCS(0)
	if threads == 1 || total < 2*parallelWork {
		for i := range calls {
			run(&calls[i], best, 1)
		}
		return nil
	}
	if l := len(calls); l == 1 || l%threads != 0 && l < 4*threads && calls[0].work() >= parallelWork*threads {
		for i := range calls {
			run(&calls[i], best, threads)
		}
		return nil
	}
	j := batchJobs.Get().(*batchJob)
	j.calls = append(j.calls[:0], calls...)
	par.ForChunks(threads, len(calls), 1, j.fn) // a thread that starts late computes fewer calls
	clear(j.calls)
	batchJobs.Put(j)
	return nil
}

// batchJob is a batch whose calls the threads compute whole. The goroutines
// get a copy of the calls, so the caller's slice (often on its stack) does
// not escape to the heap on the serial path; the job and its method value
// are pooled, so a batch allocates nothing.
type batchJob struct {
	calls []Call
	fn    func(lo, hi int)
}

var batchJobs = sync.Pool{New: func() any {
	j := new(batchJob)
	j.fn = j.run
	return j
}}

func (j *batchJob) run(lo, hi int) {
	for i := lo; i < hi; i++ {
		run(&j.calls[i], best, 1)
	}
}

func (c *Call) work() int { return c.M * c.N * c.K }

func (c *Call) validate() error {
	if c.M < 0 || c.N < 0 || c.K < 0 {
		return fmt.Errorf("%w: M=%d N=%d K=%d", ErrShape, c.M, c.N, c.K)
	}
	if err := c.A.check("A", c.M, c.K); err != nil {
		return err
	}
	if err := c.B.check("B", c.K, c.N); err != nil {
		return err
	}
	if !c.Epi.check(c.M, c.N) {
		return fmt.Errorf("%w: epilogue activation %d or bias of %d elements does not fit %d×%d", ErrShape, c.Epi.Act, len(c.Epi.Bias), c.M, c.N)
	}
	if c.M > 0 && c.N > 0 {
		if c.LDC < c.N {
			return fmt.Errorf("%w: LDC %d < N %d", ErrShape, c.LDC, c.N)
		}
		if need := (c.M-1)*c.LDC + c.N; len(c.C) < need {
			return fmt.Errorf("%w: C holds %d elements, %d×%d with LDC %d needs %d", ErrShape, len(c.C), c.M, c.N, c.LDC, need)
		}
	}
	return nil
}

// check validates an operand whose op() is rows×cols.
func (x *Matrix) check(name string, rows, cols int) error {
	if x.PackedNR != 0 {
		return x.checkPacked(name, rows, cols)
	}
	if x.Im2col != nil {
		if name != "B" || x.Trans || x.Kind != F32 {
			return fmt.Errorf("%w: an im2col operand must be B, float32, not transposed", ErrShape)
		}
		return x.Im2col.check(rows, cols)
	}
	if x.Trans {
		rows, cols = cols, rows
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	if x.Stride < cols {
		return fmt.Errorf("%w: %s stride %d < %d stored columns", ErrShape, name, x.Stride, cols)
	}
	need := (rows-1)*x.Stride + cols
	have := 0
	switch x.Kind {
	case F32:
		have = len(x.F32)
	case F16, BF16:
		have = len(x.Half) / 2
	default:
		return fmt.Errorf("%w: %s has unknown kind %d", ErrShape, name, x.Kind)
	}
	if have < need {
		return fmt.Errorf("%w: %s holds %d elements, %d×%d with stride %d needs %d", ErrShape, name, have, rows, cols, x.Stride, need)
	}
	return nil
}
