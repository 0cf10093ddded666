// Package bench holds the project's benchmarks; it has no API (and so no
// types whose concurrency needs a word). Each
// benchmark reports, beside ns/op and MB/s, a ratio against a baseline
// measured in the same run (units such as x_copy), so results compare
// across machines and benchstat can track them:
//
//	go test ./bench -run '^$' -bench . -count 10 > new.txt
//	benchstat old.txt new.txt
//
// The files:
//
//   - memcpy_test.go: synchronous copies of the fallback NPU (H2D, D2H)
//     against Go's copy() of the same bytes (x_copy).
//   - native_test.go: per-call overhead of the purego binding over the C
//     stub against a bare purego.SyscallN on the same symbol (x_raw,
//     ffi_calls/op).
//   - model_test.go: model execution with zero-copy IO against copy-only IO
//     (copies/op, x_copyonly) and the steady-state cost of a bound
//     ExecuteAsync (allocs/op, ffi_calls/op over the stub).
//   - planner_test.go: feature-map bytes over the lower bound of the memory
//     planner on four graph shapes (fm_ratio).
//   - hccl_test.go: AllReduce bus bandwidth in process and across processes
//     against a single-thread copy (x_copy), a copy in device memory
//     (x_devcopy) and the machine's limit for the same traffic
//     (xmax_copy), and one-sided BatchGet rates.
//   - engram_test.go: Engram fetches in process (W 2, 4, 8) against a
//     single-thread Go gather of the same rows (x_gather, GB/s, Mrows/s)
//     and across processes (W 2, 4; GB/s and Mrows/s per rank,
//     allocations per fetch).
//   - timing_test.go: medianTimes, the alternating timer the ratios use.
package bench
