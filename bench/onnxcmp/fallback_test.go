package onnxcmp

import (
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"testing"
)

// BenchmarkFallbackModels runs every model BenchmarkVsORT runs on the
// fallback alone (no node needed): ns/op and allocs/op of one run after
// warm-up, the steady state the allocation target is about.
//
//	go test -run '^$' -bench FallbackModels -ortmodels corpus/ -benchmem
func BenchmarkFallbackModels(b *testing.B) {
	var filter *regexp.Regexp
	if *ortModels != "" {
		filter = regexp.MustCompile(*ortModels)
	}
	cases, err := ortCases(filepath.Join("..", "..", "ge", "onnx", "testdata"), b.TempDir(), filter)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			f, err := newFbRunner(c)
			if err != nil {
				b.Skip(err)
			}
			defer f.close()
			for range 3 {
				if err := f.run(); err != nil {
					b.Skip(err)
				}
			}
			runtime.GC()
			debug.FreeOSMemory()
			b.ReportAllocs()
			for b.Loop() {
				if err := f.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
