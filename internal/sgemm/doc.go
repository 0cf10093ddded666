// Package sgemm is the fallback's float32 matrix multiply: C = alpha·op(A)·op(B)
// + beta·C with packed operands, L1/L2 cache blocking and register-blocked
// FMA micro-kernels (AVX-512 or AVX2 on amd64, chosen at run time; portable
// Go elsewhere), split across GOMAXPROCS cores for large products.
//
// Results are deterministic: every element of C is the same sequence of
// float32 operations whatever the number of threads, because the reduction
// dimension is always cut at the same fixed block size and work is divided
// only along M and N, at tile boundaries. Each element is, per K block of
// KC, a sequential FMA dot product acc; the block's result is folded in as
// C = alpha·acc + beta·C (beta = 1 after the first block), each product
// rounded to float32 before the add.
//
// float16 and bfloat16 operands are widened to float32 while packing; the
// product is accumulated and returned in float32, so a caller rounds once.
//
// Convolutions run on the same kernels as implicit GEMMs: an Im2col
// operand describes the receptive fields of an image, and packing reads
// them straight from the image into the kernel's panels, so the im2col
// matrix is never written (Conv2D; ge's Conv kernel for 1 to 3 spatial
// dims). The results are bit-identical to explicit im2col then Gemm.
// ConvGemm runs 2-D ones on a grid instead (convgrid.go): the image
// rearranged once into zero-padded phase planes on which every kernel tap
// is one contiguous row, so packing is a copy of 32 floats per row rather
// than a gather of short padded runs — the same bits again.
package sgemm

//go:generate go run asmgen.go
