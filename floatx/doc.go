// Package floatx converts between float32 and the narrow floating-point
// formats the NPU stores: IEEE binary16 (float16), bfloat16, and the OCP 8-bit
// formats float8 e4m3fn and e5m2. Programs use it to prepare and read tensor
// data of those types (zerocopy.WriteInput and ReadOutput convert with it);
// the fallback's kernels and the HCCL model reduce with it.
//
// Every conversion to a narrow format rounds to nearest, ties to even, and is
// exact in the sense that the result is the representable value closest to
// the input (the conversion never goes through a wider intermediate that
// could double-round). Subnormals are produced and decoded; decoding is exact
// because every narrow value is representable in float32.
//
// Special values:
//   - float16 and bfloat16: ±Inf map to ±Inf, a NaN stays a NaN with its
//     sign and the top payload bits kept and the quiet bit set; finite values
//     that round past the largest finite value become ±Inf.
//   - e5m2: like float16 (it has Inf and NaN); NaN becomes the quiet NaN
//     0x7e/0xfe.
//   - e4m3fn has no Inf and a single NaN per sign (0x7f/0xff), max 448.
//     The default conversion F32ToE4M3FN is non-saturating (as ml_dtypes and
//     PyTorch): ±Inf, NaN and finite values that round above 448 (|x| > 464)
//     become NaN with the input's sign. The ...Sat variants saturate instead:
//     finite overflow and ±Inf become ±max finite, NaN stays NaN.
//
// All functions are pure and safe for concurrent use. Byte-slice helpers use
// little-endian element order, the layout of device memory.
package floatx
