package onnx

// WithDrawnValueConverters runs f with Bernoulli and RandomUniformLike
// registered (see drawnValueConverters), for the external tests; the
// registry is restored afterwards, so the backend test, which cannot
// pass them, does not see them.
func WithDrawnValueConverters(f func()) {
	saved := map[string]converter{}
	for k := range drawnValueConverters {
		if c, ok := converters[k]; ok {
			saved[k] = c
		}
	}
	enableDrawnValueConverters()
	defer func() {
		for k := range drawnValueConverters {
			delete(converters, k)
			if c, ok := saved[k]; ok {
				converters[k] = c
			}
		}
	}()
	f()
}
