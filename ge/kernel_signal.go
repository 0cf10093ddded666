package ge

import (
	"fmt"
	"math"

	"github.com/ascend-go/cann/acl"
)

// Signal processing, as ONNX defines it (opset 17). Complex values are
// stored as a trailing dim of 2 (real, imaginary); a real signal has a
// trailing dim of 1. Transforms are computed in float64 with exact
// twiddle factors (cos/sin of 2π·(j·k mod n)/n), O(n²) per transform.
//
//   - DFT (x [..., n, ..., 1|2]): the transform along AttrAxis (not the
//     last dim) of length AttrLength (0: n; shorter truncates, longer
//     zero-pads); AttrInverse computes the inverse (sign +, scaled by
//     1/length); AttrOnesided keeps the first length/2+1 bins.
//   - STFT (signal [batch, n, 1|2] [, window [frame_length]]): frames of
//     AttrFrameLength samples every AttrFrameStep, each multiplied by the
//     window and transformed: [batch, frames, bins, 2] where frames is
//     (n - frame_length)/frame_step + 1 and bins frame_length/2+1 when
//     AttrOnesided, else frame_length.
//   - MelWeightMatrix (lower_edge_hertz, upper_edge_hertz: float scalars):
//     the [dft_length/2+1, num_mel_bins] matrix of triangular mel filters
//     (AttrNumMelBins, AttrLength as dft_length, AttrSampleRate), in the
//     type AttrDstType, following ONNX's reference construction.
const (
	OpDFT             OpType = 560
	OpSTFT            OpType = 561
	OpMelWeightMatrix OpType = 562
)

// Attributes of the signal ops.
const (
	AttrInverse     = "inverse"      // DFT: bool
	AttrOnesided    = "onesided"     // DFT, STFT: bool
	AttrLength      = "length"       // DFT: int, the transform length (0: the axis's); MelWeightMatrix: the DFT length
	AttrFrameStep   = "frame_step"   // STFT: int
	AttrFrameLength = "frame_length" // STFT: int
	AttrNumMelBins  = "num_mel_bins" // MelWeightMatrix: int
	AttrSampleRate  = "sample_rate"  // MelWeightMatrix: int
)

func init() {
	registerOp(OpDFT, &opSpec{name: "DFT", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAxis: AttrInt, AttrInverse: AttrBool, AttrOnesided: AttrBool, AttrLength: AttrInt},
		infer: inferDFT, kernel: dftKernel})
	registerOp(OpSTFT, &opSpec{name: "STFT", minIn: 1, maxIn: 2,
		attrs: map[string]AttrKind{AttrFrameStep: AttrInt, AttrFrameLength: AttrInt, AttrOnesided: AttrBool},
		infer: inferSTFT, kernel: stftKernel})
	registerOp(OpMelWeightMatrix, &opSpec{name: "MelWeightMatrix", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrNumMelBins: AttrInt, AttrLength: AttrInt, AttrSampleRate: AttrInt, AttrDstType: AttrInt},
		infer: inferMel, kernel: melKernel})
}

func signalFloat(t acl.DataType) bool { return isFloat(t) || t == acl.Float64 }

func inferDFT(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	x := in[0]
	if !signalFloat(x.DataType) {
		return nil, &dtypeError{fmt.Sprintf("input has data type %s, want a float type", x.DataType)}
	}
	r := len(x.Dims)
	if r < 2 || (x.Dims[r-1] != 1 && x.Dims[r-1] != 2) {
		return nil, fmt.Errorf("input %s must end in a dim of 1 (real) or 2 (complex)", dimsString(x.Dims))
	}
	axis, err := normAxis(a.Int(AttrAxis, 1), r)
	if err != nil || axis == r-1 {
		return nil, fmt.Errorf("axis %d must be a signal dim of %s", a.Int(AttrAxis, 1), dimsString(x.Dims))
	}
	n := a.Int(AttrLength, 0)
	if n == 0 {
		n = x.Dims[axis]
	}
	if n < 1 || n > MaxDim {
		return nil, fmt.Errorf("length %d must be positive", n)
	}
	dims := cloneDims(x.Dims)
	dims[axis], dims[r-1] = n, 2
	if a.Bool(AttrOnesided) {
		dims[axis] = n/2 + 1
	}
	return []TensorDesc{{DataType: x.DataType, Format: x.Format, Dims: dims}}, nil
}

// dft transforms the n complex values (re, im) into bins outputs (or,
// oi), scaled by scale, with the given sign of the exponent.
func dft(re, im, or, oi []float64, n, bins int, sign, scale float64, cosT, sinT []float64) {
	for k := range bins {
		var sr, si float64
		for j := range n {
			p := (j * k) % n
			c, s := cosT[p], sign*sinT[p]
			sr += re[j]*c - im[j]*s
			si += re[j]*s + im[j]*c
		}
		or[k], oi[k] = sr*scale, si*scale
	}
}

// twiddles returns cos and sin of 2π·p/n for p in [0, n).
func twiddles(n int) ([]float64, []float64) {
	c, s := make([]float64, n), make([]float64, n)
	for p := range n {
		c[p], s[p] = math.Cos(2*math.Pi*float64(p)/float64(n)), math.Sin(2*math.Pi*float64(p)/float64(n))
	}
	return c, s
}

func dftKernel(t *Task, args [][]byte) error {
	x, o := t.Inputs[0], t.Outputs[0]
	r := len(x.Dims)
	axis, err := normAxis(t.Attrs.Int(AttrAxis, 1), r)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	comp := int(x.Dims[r-1])
	nIn := int(x.Dims[axis])
	n := int(t.Attrs.Int(AttrLength, 0))
	if n == 0 {
		n = nIn
	}
	bins := int(o.Dims[axis])
	outer, inner := prod(x.Dims[:axis]), prod(x.Dims[axis+1:r-1])
	xv := readF64s(x, args[0])
	out := make([]float64, prod(o.Dims))
	sign, scale := -1.0, 1.0
	if t.Attrs.Bool(AttrInverse) {
		sign, scale = 1, 1/float64(n)
	}
	cosT, sinT := twiddles(n)
	re, im := make([]float64, n), make([]float64, n)
	or, oi := make([]float64, bins), make([]float64, bins)
	for a := range outer {
		for b := range inner {
			clear(re)
			clear(im)
			for j := range min(n, nIn) {
				k := ((a*nIn+j)*inner + b) * comp
				re[j] = xv[k]
				if comp == 2 {
					im[j] = xv[k+1]
				}
			}
			dft(re, im, or, oi, n, bins, sign, scale, cosT, sinT)
			for k := range bins {
				p := ((a*bins+k)*inner + b) * 2
				out[p], out[p+1] = or[k], oi[k]
			}
		}
	}
	writeFromF64(args[1], o.DataType, out)
	return nil
}

// stftGeometry returns frames and bins of an STFT.
func stftGeometry(in []TensorDesc, a Attrs) (frames, bins int64, err error) {
	x := in[0]
	if len(x.Dims) != 3 || (x.Dims[2] != 1 && x.Dims[2] != 2) {
		return 0, 0, fmt.Errorf("signal %s must be [batch, length, 1|2]", dimsString(x.Dims))
	}
	step, fl := a.Int(AttrFrameStep, 0), a.Int(AttrFrameLength, 0)
	if step < 1 || fl < 1 || fl > x.Dims[1] {
		return 0, 0, fmt.Errorf("frame_step %d and frame_length %d must be positive, the frame within the signal's %d samples", step, fl, x.Dims[1])
	}
	if len(in) == 2 && !dimsEqual(in[1].Dims, []int64{fl}) {
		return 0, 0, fmt.Errorf("window is %s, want [%d]", dimsString(in[1].Dims), fl)
	}
	bins = fl
	if a.Bool(AttrOnesided) {
		bins = fl/2 + 1
	}
	return (x.Dims[1]-fl)/step + 1, bins, nil
}

func inferSTFT(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	if !signalFloat(in[0].DataType) || (len(in) == 2 && in[1].DataType != in[0].DataType) {
		return nil, &dtypeError{fmt.Sprintf("signal and window must be one float type, not %s", in[0].DataType)}
	}
	frames, bins, err := stftGeometry(in, a)
	if err != nil {
		return nil, err
	}
	return []TensorDesc{{DataType: in[0].DataType, Format: in[0].Format, Dims: []int64{in[0].Dims[0], frames, bins, 2}}}, nil
}

func stftKernel(t *Task, args [][]byte) error {
	frames, bins, err := stftGeometry(t.Inputs, t.Attrs)
	if err != nil {
		return kernelError(t, "%v", err)
	}
	x := t.Inputs[0]
	batch, n, comp := int(x.Dims[0]), int(x.Dims[1]), int(x.Dims[2])
	step, fl := int(t.Attrs.Int(AttrFrameStep, 0)), int(t.Attrs.Int(AttrFrameLength, 0))
	xv := readF64s(x, args[0])
	win := make([]float64, fl)
	outArg := args[1]
	if len(t.Inputs) == 2 {
		readF64(win, t.Inputs[1].DataType, args[1])
		outArg = args[2]
	} else {
		for i := range win {
			win[i] = 1
		}
	}
	cosT, sinT := twiddles(fl)
	re, im := make([]float64, fl), make([]float64, fl)
	out := make([]float64, batch*int(frames)*int(bins)*2)
	or, oi := make([]float64, bins), make([]float64, bins)
	for b := range batch {
		for f := range int(frames) {
			for j := range fl {
				k := (b*n + f*step + j) * comp
				re[j], im[j] = xv[k]*win[j], 0
				if comp == 2 {
					im[j] = xv[k+1] * win[j]
				}
			}
			dft(re, im, or, oi, fl, int(bins), -1, 1, cosT, sinT)
			for k := range int(bins) {
				p := ((b*int(frames)+f)*int(bins) + k) * 2
				out[p], out[p+1] = or[k], oi[k]
			}
		}
	}
	writeFromF64(outArg, t.Outputs[0].DataType, out)
	return nil
}

func inferMel(in []TensorDesc, a Attrs) ([]TensorDesc, error) {
	for i, d := range in {
		if !signalFloat(d.DataType) || d.NumElements() != 1 {
			return nil, &dtypeError{fmt.Sprintf("input %d (%s %s) must be one float value", i, d.DataType, dimsString(d.Dims))}
		}
	}
	bins, n, rate := a.Int(AttrNumMelBins, 0), a.Int(AttrLength, 0), a.Int(AttrSampleRate, 0)
	if bins < 1 || bins > MaxDim || n < 1 || n > MaxDim || rate < 1 {
		return nil, fmt.Errorf("num_mel_bins %d, dft_length %d and sample_rate %d must be positive", bins, n, rate)
	}
	dt := acl.DataType(a.Int(AttrDstType, int64(acl.Float32)))
	if !signalFloat(dt) && !(isIntType(dt) && dt != acl.Bool) {
		return nil, &dtypeError{fmt.Sprintf("output type %s is not numeric", dt)}
	}
	return []TensorDesc{{DataType: dt, Format: acl.FormatND, Dims: []int64{n/2 + 1, bins}}}, nil
}

func melKernel(t *Task, args [][]byte) error {
	bins, n, rate := int(t.Attrs.Int(AttrNumMelBins, 0)), int(t.Attrs.Int(AttrLength, 0)), int(t.Attrs.Int(AttrSampleRate, 0))
	lo, hi := readF64s(t.Inputs[0], args[0])[0], readF64s(t.Inputs[1], args[1])[0]
	spec := n/2 + 1
	lowMel, highMel := 2595*math.Log10(1+lo/700), 2595*math.Log10(1+hi/700)
	step := (highMel - lowMel) / float64(bins+2)
	fb := make([]int, bins+2)
	for i := range fb {
		hz := 700 * (math.Pow(10, (float64(i)*step+lowMel)/2595) - 1)
		fb[i] = int(math.Floor(float64(n+1) * hz / float64(rate)))
		if fb[i] < 0 || fb[i] >= spec {
			return kernelError(t, "mel band edge %d falls on bin %d, outside [0, %d): the edges must lie in [0, sample_rate/2]", i, fb[i], spec)
		}
	}
	out := make([]float64, spec*bins)
	for i := range bins {
		l, c, h := fb[i], fb[i+1], fb[i+2]
		if c == l {
			out[c*bins+i] = 1
		} else {
			for j := l; j <= c; j++ {
				out[j*bins+i] = float64(j-l) / float64(c-l)
			}
		}
		for j := c; j < h; j++ {
			out[j*bins+i] = float64(h-j) / float64(h-c)
		}
	}
	writeFromF64(args[2], t.Outputs[0].DataType, out)
	return nil
}
