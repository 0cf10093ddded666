// Package bench holds the project's benchmarks; it has no API. Each
// benchmark reports, beside ns/op and MB/s, a ratio against a baseline
// measured in the same run (units such as x_copy), so results compare
// across machines and benchstat can track them:
//
//	go test ./bench -run '^$' -bench . -count 10 > new.txt
//	benchstat old.txt new.txt
//
// memcpy_test.go: synchronous copies of the fallback NPU (H2D, D2H) against
// Go's copy() of the same bytes; native_test.go: per-call overhead of the
// purego binding over the C stub.
package bench
