#!/usr/bin/python3
"""Writes the models and inputs of the misc-family cases (see README.md);
the expected outputs come from onnxruntime and numpy as README.md says."""
import os, numpy as np, onnx
from onnx import helper, numpy_helper
OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)

def vi(name, arr):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype) if hasattr(helper,'np_dtype_to_tensor_dtype') else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype], list(arr.shape))

def case(name, opset, nodes, inputs, outputs, inits={}):
    d = os.path.join(OUT, name); os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph(nodes, name, [vi(k, v) for k, v in inputs.items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (k, v) in enumerate(inputs.items()):
        t = numpy_helper.from_array(v, k)
        open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb").write(t.SerializeToString())

f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
# Recurrent layers.
S, B, I, H = 5, 3, 4, 3
for op, g in [("GRU", 3), ("LSTM", 4), ("RNN", 1)]:
    for dirn, D in [("forward", 1), ("reverse", 1), ("bidirectional", 2)]:
        for layout in [0, 1]:
            X = f32(S, B, I) if layout == 0 else f32(B, S, I)
            ins = {"X": X, "W": f32(D, g*H, I)*0.5, "R": f32(D, g*H, H)*0.5, "B": f32(D, 2*g*H)*0.5,
                   "seq": np.array([5, 2, 4], np.int32)}
            hs = (D, B, H) if layout == 0 else (B, D, H)
            ins["h0"] = f32(*hs)
            names = ["X", "W", "R", "B", "seq", "h0"]
            attrs = dict(hidden_size=H, direction=dirn, layout=layout)
            if op == "LSTM":
                ins["c0"] = f32(*hs); ins["P"] = f32(D, 3*H)*0.5; names += ["c0", "P"]
                attrs["clip"] = 1.5
            if op == "GRU":
                attrs["linear_before_reset"] = 1 if dirn != "reverse" else 0
            if op == "RNN":
                attrs["activations"] = ["Relu", "Tanh"][:D] if dirn == "bidirectional" else ["Relu"]
            outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
            n = helper.make_node(op, names, outs, **attrs)
            inits = {"seq": ins.pop("seq")}
            case(f"{op.lower()}_{dirn}_l{layout}", 14, [n], ins, outs, inits)
# Reductions, opset 18 axes input and the attribute forms.
x = f32(3, 4, 5)
for op in ["ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare", "ReduceMax", "ReduceMean"]:
    case(f"{op.lower()}_18", 18, [helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)], {"x": x}, ["y"], {"axes": np.array([0, -1], np.int64)})
    case(f"{op.lower()}_18_noop", 18, [helper.make_node(op, ["x"], ["y"], noop_with_empty_axes=1)], {"x": x}, ["y"])
    case(f"{op.lower()}_11", 11, [helper.make_node(op, ["x"], ["y"], axes=[1])], {"x": x}, ["y"])
case("reducelogsum_18", 18, [helper.make_node("ReduceLogSum", ["x", "axes"], ["y"])], {"x": np.abs(x) + 0.1}, ["y"], {"axes": np.array([1], np.int64)})
case("reducesum_int64", 13, [helper.make_node("ReduceSum", ["x", "axes"], ["y"])], {"x": rng.integers(-9, 9, (3, 4)).astype(np.int64)}, ["y"], {"axes": np.array([1], np.int64)})
case("reduceprod_int32", 13, [helper.make_node("ReduceProd", ["x"], ["y"], axes=[0])], {"x": rng.integers(-5, 5, (3, 4)).astype(np.int32)}, ["y"])
# Quantization.
xq = f32(2, 3, 4) * 3
case("quantize_axis0_int8", 13, [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=0)], {"x": xq}, ["y"],
     {"s": np.array([0.02, 0.05], np.float32), "z": np.array([-3, 4], np.int8)})
case("quantize_nozp", 13, [helper.make_node("QuantizeLinear", ["x", "s"], ["y"])], {"x": xq}, ["y"], {"s": np.array(0.03, np.float32)})
case("dequantize_int32", 13, [helper.make_node("DequantizeLinear", ["x", "s"], ["y"])], {"x": rng.integers(-1000, 1000, (5,)).astype(np.int32)}, ["y"], {"s": np.array(0.01, np.float32)})
case("dequantize_axis_neg", 13, [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=-1)], {"x": rng.integers(0, 255, (3, 4)).astype(np.uint8)}, ["y"],
     {"s": np.array([0.1, 0.2, 0.3, 0.4], np.float32), "z": np.array([1, 2, 3, 4], np.uint8)})
case("matmulinteger_rowzp", 10, [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
     {"a": rng.integers(0, 255, (4, 6)).astype(np.uint8), "b": rng.integers(-128, 127, (6, 3)).astype(np.int8)}, ["y"],
     {"az": np.array([1, 2, 3, 4], np.uint8), "bz": np.array([5, -6, 7], np.int8)})
case("matmulinteger_batch", 10, [helper.make_node("MatMulInteger", ["a", "b"], ["y"])],
     {"a": rng.integers(0, 255, (2, 4, 6)).astype(np.uint8), "b": rng.integers(0, 255, (6, 3)).astype(np.uint8)}, ["y"])
case("qlinearconv_group", 10, [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], group=2, pads=[1, 0, 1, 1], strides=[1, 2])],
     {"x": rng.integers(0, 255, (2, 4, 6, 7)).astype(np.uint8)}, ["y"],
     {"xs": np.array(0.02, np.float32), "xz": np.array(120, np.uint8), "w": rng.integers(-100, 100, (6, 2, 3, 3)).astype(np.int8),
      "ws": (np.arange(6, dtype=np.float32) + 1) * 0.003, "wz": np.zeros(6, np.int8), "ys": np.array(0.05, np.float32), "yz": np.array(-5, np.int8),
      "b": rng.integers(-300, 300, (6,)).astype(np.int32)})
case("convinteger_wzp", 10, [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], dilations=[2, 1], auto_pad="SAME_UPPER")],
     {"x": rng.integers(0, 255, (1, 2, 7, 6)).astype(np.uint8)}, ["y"],
     {"w": rng.integers(0, 255, (3, 2, 2, 3)).astype(np.uint8), "xz": np.array(128, np.uint8), "wz": np.array(100, np.uint8)})
case("qlinearmatmul_perrow", 10, [helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])],
     {"a": rng.integers(-128, 127, (3, 5)).astype(np.int8)}, ["y"],
     {"as": np.array([0.01, 0.02, 0.03], np.float32), "az": np.array([0, 1, -1], np.int8), "b": rng.integers(-128, 127, (5, 4)).astype(np.int8),
      "bs": np.array([0.02, 0.01, 0.03, 0.04], np.float32), "bz": np.array([0, 0, 1, 2], np.int8), "ys": np.array(0.2, np.float32), "yz": np.array(3, np.int8)})
# Signal ops.
case("dft_20_axis_len_onesided", 20, [helper.make_node("DFT", ["x", "n", "ax"], ["y"], onesided=1)], {"x": f32(2, 7, 3, 1)}, ["y"],
     {"n": np.array(10, np.int64), "ax": np.array(-3, np.int64)})
case("dft_17_inverse_complex_len", 17, [helper.make_node("DFT", ["x", "n"], ["y"], axis=2, inverse=1)], {"x": f32(2, 3, 8, 2)}, ["y"], {"n": np.array(6, np.int64)})
case("stft_twosided", 17, [helper.make_node("STFT", ["x", "step", "w"], ["y"], onesided=0)], {"x": f32(2, 50, 1)}, ["y"],
     {"step": np.array(6, np.int64), "w": np.hanning(12).astype(np.float32)})
case("mel_edges", 17, [helper.make_node("MelWeightMatrix", ["n", "l", "r", "lo", "hi"], ["y"])], {"lo": np.array(100, np.float32), "hi": np.array(7000, np.float32)}, ["y"],
     {"n": np.array(10, np.int64), "l": np.array(64, np.int64), "r": np.array(16000, np.int64)})
case("hann_double", 17, [helper.make_node("HannWindow", ["n"], ["y"], output_datatype=11)], {"x": f32(1)}, ["y"], {"n": np.array(9, np.int64)})
# Losses.
case("sce_weight_ii_logprob", 13, [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y", "lp"], ignore_index=2, reduction="sum")],
     {"x": f32(4, 5, 3), "t": rng.integers(0, 5, (4, 3)).astype(np.int64)}, ["y", "lp"], {"w": np.abs(f32(5))})
case("nll_none_int32", 13, [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="none")],
     {"x": f32(3, 4), "t": np.array([0, 3, 1], np.int32)}, ["y"])
