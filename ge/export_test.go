package ge

// UseLegacyKernels switches MatMul, the activations, Softmax and the norms
// to their pre-issue-16 kernels until restore is called. Benchmarks only:
// it changes a process-wide table.
func UseLegacyKernels() (restore func()) {
	saved := map[OpType]Kernel{}
	for op, k := range map[OpType]Kernel{
		OpMatMul: legacyMatmulKernel, OpRelu: legacyUnaryKernel, OpGelu: legacyUnaryKernel, OpSilu: legacyUnaryKernel,
		OpSoftmax: legacySoftmaxKernel, OpLayerNorm: legacyNormKernel, OpRMSNorm: legacyNormKernel,
	} {
		saved[op] = opSpecs[op].kernel
		opSpecs[op].kernel = k
	}
	return func() {
		for op, k := range saved {
			opSpecs[op].kernel = k
		}
	}
}
