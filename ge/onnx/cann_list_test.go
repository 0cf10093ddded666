package onnx_test

// cannOps is CANN's list of the standard ai.onnx operators its ONNX parser
// accepts ("支持ONNX算子清单", CANN 5.0.4 fwoperatorlist/operatorlist_0071;
// the CANN 8.5 reference keeps one page per operator), 134 names.
const cannOps = `Abs Acos Acosh Add AffineGrid And ArgMax ArgMin Asin Asinh Atan Atanh AveragePool
BatchNormalization BitShift Cast Ceil Celu Clip Compress Concat Constant
ConstantOfShape Conv ConvTranspose Cos Cosh CumSum DepthToSpace Det Div Dropout Elu
Equal Erf Exp Expand EyeLike Flatten Floor Gather GatherElements GatherND Gemm
GlobalAveragePool GlobalLpPool GlobalMaxPool Greater GreaterOrEqual HardSigmoid
Hardmax HardSwish Identity If InstanceNormalization LeakyRelu Less LessOrEqual Log
LogSoftmax LpNormalization LpPool LRN LSTM MatMul Max MaxPool MaxUnpool Mean
MeanVarianceNormalization Min Mod Mul Multinomial Neg NonMaxSuppression NonZero Not
OneHot Or Pad Pow PRelu RandomNormalLike RandomUniform RandomUniformLike Range
Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean
ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize ReverseSequence
RoiAlign Round Scatter ScatterElements ScatterND Selu Shape Shrink Sigmoid Sign Sin
Sinh Size Slice Softmax Softplus Softsign SpaceToDepth Split Sqrt Squeeze Sub Sum
Tanh TfIdfVectorizer ThresholdedRelu Tile TopK Transpose Unsqueeze Where Xor`

// exporterOps are what exporters emit beside CANN's list (the issue's
// list): GRU, RNN, LayerNormalization, Einsum, Loop, Scan, CastLike,
// Trilu, GridSample, Gelu, QuantizeLinear, DequantizeLinear.
const exporterOps = `GRU RNN LayerNormalization Einsum Loop Scan CastLike Trilu GridSample Gelu
QuantizeLinear DequantizeLinear`
