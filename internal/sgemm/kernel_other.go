//go:build !amd64

package sgemm

func archKernels() []kernel { return nil }

// PeakLoop returns nil: there is no assembly FMA loop on this architecture.
func PeakLoop() (loop func(n int), flopsPerIter int) { return nil, 0 }
