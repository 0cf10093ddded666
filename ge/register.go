package ge

func init() {
	floatOnly := map[string]AttrKind{}
	registerOp(OpData, &opSpec{name: "Data", class: classBoundary, attrs: map[string]AttrKind{AttrIndex: AttrInt}})
	registerOp(OpConst, &opSpec{name: "Const", class: classBoundary})
	registerOp(OpNetOutput, &opSpec{name: "NetOutput", class: classBoundary, minIn: 1, maxIn: -1})

	registerOp(OpMatMul, &opSpec{name: "MatMul", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrTransposeA: AttrBool, AttrTransposeB: AttrBool},
		infer: inferMatMul, workspace: matmulWorkspace, kernel: matmulKernel})
	for _, op := range []struct {
		t OpType
		n string
	}{{OpAdd, "Add"}, {OpSub, "Sub"}, {OpMul, "Mul"}, {OpDiv, "Div"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 2, maxIn: 2, attrs: floatOnly, infer: inferBinary, kernel: binaryKernel})
	}
	for _, op := range []struct {
		t OpType
		n string
	}{{OpRelu, "Relu"}, {OpGelu, "Gelu"}, {OpSilu, "Silu"}} {
		registerOp(op.t, &opSpec{name: op.n, minIn: 1, maxIn: 1, attrs: floatOnly, infer: unaryInfer(op.t), kernel: unaryKernel})
	}
	registerOp(OpSoftmax, &opSpec{name: "Softmax", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrAxis: AttrInt}, infer: inferSoftmax, kernel: softmaxKernel})
	registerOp(OpLayerNorm, &opSpec{name: "LayerNorm", minIn: 3, maxIn: 3,
		attrs: map[string]AttrKind{AttrEpsilon: AttrFloat}, infer: inferNorm, kernel: normKernel})
	registerOp(OpRMSNorm, &opSpec{name: "RMSNorm", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrEpsilon: AttrFloat}, infer: inferNorm, kernel: normKernel})
	registerOp(OpGather, &opSpec{name: "Gather", minIn: 2, maxIn: 2,
		attrs: map[string]AttrKind{AttrAxis: AttrInt, AttrNegativeIndices: AttrBool}, infer: inferGather, kernel: gatherKernel})
	registerOp(OpReshape, &opSpec{name: "Reshape", class: classAlias, minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrShape: AttrInts}, infer: inferReshape})
	registerOp(OpIdentity, &opSpec{name: "Identity", class: classAlias, minIn: 1, maxIn: 1, infer: inferSame})
	registerOp(OpCast, &opSpec{name: "Cast", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrDstType: AttrInt}, infer: inferCast, kernel: castKernel})
	registerOp(OpConcat, &opSpec{name: "Concat", minIn: 1, maxIn: -1,
		attrs: map[string]AttrKind{AttrAxis: AttrInt}, infer: inferConcat, kernel: concatKernel})
	registerOp(OpSlice, &opSpec{name: "Slice", minIn: 1, maxIn: 1,
		attrs: map[string]AttrKind{AttrBegin: AttrInts, AttrSize: AttrInts}, infer: inferSlice, kernel: sliceKernel})
	registerOp(OpMemcpy, &opSpec{name: "Memcpy", minIn: 1, maxIn: 1, infer: inferSame, kernel: memcpyKernel})
}
