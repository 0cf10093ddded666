package ge

import "fmt"

// Attributes of the spatial ops (Conv, ConvTranspose, MaxPool, AvgPool):
// per spatial dim lists, as ONNX names them. pads holds the begin pads of
// every spatial dim, then the end pads.
const (
	AttrStrides          = "strides"           // ints, default 1
	AttrPads             = "pads"              // ints [begin..., end...], default 0
	AttrDilations        = "dilations"         // ints, default 1
	AttrGroups           = "groups"            // Conv, ConvTranspose: int, default 1 (ONNX "group"; "group" names an HCCL communicator)
	AttrKernelShape      = "kernel_shape"      // pools: ints
	AttrCeilMode         = "ceil_mode"         // pools: bool
	AttrCountIncludePad  = "count_include_pad" // AvgPool: bool
	AttrOutputPadding    = "output_padding"    // ConvTranspose: ints, default 0
	maxSpatial           = 3
	spatialAttrListLimit = 2 * maxSpatial
)

// window is the geometry of a spatial op, padded to three spatial dims
// (leading dims of size 1) so the kernels run one loop nest for 1-D, 2-D
// and 3-D.
type window struct {
	in, k, s, d, pb, pe, out [maxSpatial]int
	sp                       int // real number of spatial dims
}

// spatialWindow reads the geometry of x's spatial dims (x is [N, C, ...])
// with kernel dims k from the attributes.
func spatialWindow(x []int64, k []int64, a Attrs) (window, error) {
	sp := len(x) - 2
	if sp < 1 || sp > maxSpatial {
		return window{}, fmt.Errorf("input %s must be [N, C] and 1 to %d spatial dims", dimsString(x), maxSpatial)
	}
	if len(k) != sp {
		return window{}, fmt.Errorf("kernel has %d spatial dims, input has %d", len(k), sp)
	}
	var ones, zeros [2 * maxSpatial]int64
	for i := range ones {
		ones[i] = 1
	}
	s, err := attrList(a, AttrStrides, sp, ones[:])
	if err != nil {
		return window{}, err
	}
	d, err := attrList(a, AttrDilations, sp, ones[:])
	if err != nil {
		return window{}, err
	}
	p, err := attrList(a, AttrPads, 2*sp, zeros[:])
	if err != nil {
		return window{}, err
	}
	w := window{sp: sp}
	off := maxSpatial - sp
	for i := range maxSpatial {
		w.in[i], w.k[i], w.s[i], w.d[i], w.out[i] = 1, 1, 1, 1, 1
	}
	for i := range sp {
		if k[i] < 1 || k[i] > MaxDim || s[i] < 1 || s[i] > MaxDim || d[i] < 1 || d[i] > MaxDim ||
			p[i] < 0 || p[i] > MaxDim || p[sp+i] < 0 || p[sp+i] > MaxDim {
			return window{}, fmt.Errorf("spatial dim %d: kernel %d, stride %d, dilation %d and pads %d/%d must be positive (pads >= 0)",
				i, k[i], s[i], d[i], p[i], p[sp+i])
		}
		j := off + i
		w.in[j], w.k[j], w.s[j], w.d[j] = int(x[2+i]), int(k[i]), int(s[i]), int(d[i])
		w.pb[j], w.pe[j] = int(p[i]), int(p[sp+i])
	}
	return w, nil
}

// attrList returns the n-value int list attribute key, or def[:n] when
// it is absent (def is the caller's, so nothing is allocated).
func attrList(a Attrs, key string, n int, def []int64) ([]int64, error) {
	v := a.Ints(key)
	if v == nil {
		return def[:n], nil
	}
	if len(v) != n {
		return nil, fmt.Errorf("%s %s: want %d values", key, dimsString(v), n)
	}
	return v, nil
}

// effK is the dilated kernel extent of spatial dim i.
func (w *window) effK(i int) int { return (w.k[i]-1)*w.d[i] + 1 }

// outDims computes the output extents of a sliding window (Conv, pools);
// ceil rounds the last partial window up, dropping it when it would start
// in the end padding (as ONNX's reference and PyTorch do).
func (w *window) outDims(ceil bool) error {
	for i := maxSpatial - w.sp; i < maxSpatial; i++ {
		span := w.in[i] + w.pb[i] + w.pe[i] - w.effK(i)
		if span < 0 {
			return fmt.Errorf("kernel extent %d exceeds padded input %d", w.effK(i), w.in[i]+w.pb[i]+w.pe[i])
		}
		o := span/w.s[i] + 1
		if ceil && span%w.s[i] != 0 {
			o++
			if (o-1)*w.s[i] >= w.in[i]+w.pb[i] {
				o--
			}
		}
		w.out[i] = o
	}
	return nil
}

// outShape returns [n, c, out spatial...].
func (w *window) outShape(n, c int64) []int64 {
	dims := []int64{n, c}
	for i := maxSpatial - w.sp; i < maxSpatial; i++ {
		dims = append(dims, int64(w.out[i]))
	}
	return dims
}

func (w *window) inSize() int  { return w.in[0] * w.in[1] * w.in[2] }
func (w *window) outSize() int { return w.out[0] * w.out[1] * w.out[2] }
func (w *window) kSize() int   { return w.k[0] * w.k[1] * w.k[2] }
