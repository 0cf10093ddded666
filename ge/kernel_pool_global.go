package ge

import "math"

// globalWindow reports whether w covers each plane whole with one output
// (GlobalAveragePool and GlobalMaxPool, or a pooling written as one): no
// padding, no dilation, the kernel the size of the input.
func globalWindow(w *window) bool {
	for d := range maxSpatial {
		if w.k[d] != w.in[d] || w.out[d] != 1 || w.pb[d] != 0 || w.pe[d] != 0 || w.d[d] != 1 {
			return false
		}
	}
	return true
}

// poolGlobal sets out[p] to the maximum or the mean of plane p of x, for
// planes [lo, hi) of pin elements each. The mean sums in float32 over
// eight interleaved partial sums (independent add chains, as a vector
// unit would keep) and divides once; the maximum propagates NaN, as the
// windowed path does.
func poolGlobal(x, out []float32, pin, lo, hi int, isMax bool) {
	for p := lo; p < hi; p++ {
		plane := x[p*pin : (p+1)*pin]
		if isMax {
			acc := float32(math.Inf(-1))
			for _, v := range plane {
				if v > acc || v != v {
					acc = v
				}
			}
			out[p] = acc
			continue
		}
		var s [8]float32
		i := 0
		for ; i+8 <= len(plane); i += 8 {
			c := plane[i : i+8 : i+8]
			s[0] += c[0]
			s[1] += c[1]
			s[2] += c[2]
			s[3] += c[3]
			s[4] += c[4]
			s[5] += c[5]
			s[6] += c[6]
			s[7] += c[7]
		}
		for j := 0; i < len(plane); i, j = i+1, j+1 {
			s[j] += plane[i]
		}
		sum := ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
		if pin == 0 {
			out[p] = float32(math.NaN())
			continue
		}
		out[p] = sum / float32(pin)
	}
}
