package sgemm

// Sum returns the float32 sum of x in a fixed order that does not depend
// on where x lies in memory: 16 lanes of partial sums (four vectors of
// them over each 64 elements), folded pairwise at the end — AVX-512
// assembly, or the same order in Go elsewhere, so every machine gives the
// same bits. Pooling sums whole planes with it (global average pooling).
func Sum(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	if hasAVX512F {
		return sum512(&x[0], len(x))
	}
	var acc [4][16]float32
	i := 0
	for ; i+64 <= len(x); i += 64 {
		for v := range 4 {
			for l := range 16 {
				acc[v][l] += x[i+16*v+l]
			}
		}
	}
	for ; i+16 <= len(x); i += 16 {
		for l := range 16 {
			acc[0][l] += x[i+l]
		}
	}
	if i < len(x) { // the tail, as the masked vector add: +0 in the other lanes
		var t [16]float32
		copy(t[:], x[i:])
		for l := range 16 {
			acc[1][l] += t[l]
		}
	}
	// (a0+a1) + (a2+a3), lane by lane, then halves: lanes l and l+8, l and
	// l+4, l and l+2, l and l+1 — the assembly's folding order.
	var r [16]float32
	for l := range 16 {
		r[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
	}
	for w := 8; w >= 1; w /= 2 {
		for l := range w {
			r[l] += r[l+w]
		}
	}
	return r[0]
}

// MaxPairs sets dst[i] to the max of r0[2i], r0[2i+1], r1[2i] and
// r1[2i+1] (a row of 2×2 max pooling, stride 2) for i < len(dst), as
// Go's builtin max computes it: NaN if any is NaN, +0 over -0, so the
// order of the four does not matter. r0 and r1 hold at least 2·len(dst).
func MaxPairs(dst, r0, r1 []float32) {
	n := len(dst)
	r0, r1 = r0[:2*n], r1[:2*n]
	vec := 0
	if hasAVX512F && n >= 16 {
		vec = n &^ 15
		maxPairs512(&dst[0], &r0[0], &r1[0], vec)
	}
	for i := vec; i < n; i++ {
		dst[i] = max(r0[2*i], r0[2*i+1], r1[2*i], r1[2*i+1])
	}
}
