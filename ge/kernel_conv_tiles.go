package ge

import sg "github.com/ascend-go/cann/internal/sgemm"

// tilesOutput reports whether a transposed convolution's kernel windows
// tile its output exactly (kernel = stride, no dilation, padding or
// output padding; 2-D): every output element then gets exactly one column
// element, and col2tiles writes it instead of col2im adding it.
func tilesOutput(w *window) bool {
	return convTiles && w.in[0] == 1 && w.k[0] == 1 && w.k == w.s && w.d == [maxSpatial]int{1, 1, 1} &&
		w.pb == [maxSpatial]int{} && w.pe == [maxSpatial]int{} &&
		w.out[1] == w.in[1]*w.s[1] && w.out[2] == w.in[2]*w.s[2]
}

// convTiles switches col2tiles on; a test turns it off to compare with
// col2im.
var convTiles = true

// col2tiles is col2im followed by the bias for a transposed convolution
// whose windows tile the output (tilesOutput): each output element is its
// one column element, plus bias[channel] when bias is not nil — the
// float32 operations of adding it into a cleared output ((0 + v), which
// makes -0 +0) and then adding the bias, so the bits are the same (for
// a kernel 2 wide, sgemm.InterleaveAdd; a missing bias adds +0, which
// changes no value that 0 + v can give).
func col2tiles(w *window, m int, col, out []float32, bias []float32) {
	h, wd := w.in[1], w.in[2]
	kh, kw := w.k[1], w.k[2]
	ow := w.out[2]
	pin, pout := w.inSize(), w.outSize()
	for ch := range m {
		oc := out[ch*pout : (ch+1)*pout]
		var bv float32
		if bias != nil {
			bv = bias[ch]
		}
		if kw == 2 { // each output row is two column rows interleaved
			for r := range kh {
				c0 := col[(ch*kh+r)*2*pin:][:pin]
				c1 := col[((ch*kh+r)*2+1)*pin:][:pin]
				for iy := range h {
					sg.InterleaveAdd(oc[(iy*kh+r)*ow:][:2*wd], c0[iy*wd:(iy+1)*wd], c1[iy*wd:(iy+1)*wd], bv)
				}
			}
			continue
		}
		for r := range kh {
			for s := range kw {
				src := col[((ch*kh+r)*kw+s)*pin:][:pin]
				for iy := range h {
					crow := src[iy*wd : (iy+1)*wd]
					orow := oc[(iy*kh+r)*ow+s:]
					orow = orow[:(wd-1)*kw+1]
					for ix, v := range crow {
						if v == 0 {
							v = 0 // 0 + -0 is +0
						}
						if bias != nil {
							v += bv
						}
						orow[ix*kw] = v
					}
				}
			}
		}
	}
}
