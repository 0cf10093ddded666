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
	if hasTaps {
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
