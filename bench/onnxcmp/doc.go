// Package onnxcmp benchmarks the fallback running ONNX models against
// gonnx (github.com/advancedclimatesystems/gonnx), a pure-Go ONNX runtime
// a user might pick instead, on the same models and inputs. It is its own
// module so gonnx and its dependencies stay out of the cann module graph:
//
//	cd bench/onnxcmp && go test -bench . -benchtime 20x
package onnxcmp
