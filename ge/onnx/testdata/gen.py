#!/usr/bin/python3
"""Writes the ONNX test models and their expected outputs.

Run with the system Python that has python3-onnx and python3-numpy
(/usr/bin/python3 ge/onnx/testdata/gen.py from the repository root). The
expected outputs are computed with NumPy straight from the models'
weights, independently of the Go importer and kernels.
"""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261201)


def save(arr, name, path):
    t = numpy_helper.from_array(np.ascontiguousarray(arr), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def inits(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


# gonnx sample models: mlp (Gemm, Relu, Gemm) and scaler (ai.onnx.ml Scaler).
m = onnx.load(os.path.join(HERE, "gonnx", "mlp.onnx"))
w = inits(m)
x = rng.standard_normal((4, 3)).astype(np.float32)
h = np.maximum(x.astype(np.float64) @ w["layer1.weight"].T + w["layer1.bias"], 0)
y = h @ w["layer2.weight"].T + w["layer2.bias"]
save(x, "data_input", os.path.join(HERE, "gonnx", "mlp_input_0.pb"))
save(y.astype(np.float32), "preds", os.path.join(HERE, "gonnx", "mlp_output_0.pb"))

m = onnx.load(os.path.join(HERE, "gonnx", "scaler.onnx"))
attrs = {a.name: np.array(a.floats, dtype=np.float64) for a in m.graph.node[0].attribute}
x = (rng.standard_normal((5, 3)) * 10 + 20).astype(np.float32)
y = (x.astype(np.float64) - attrs["offset"]) * attrs["scale"]
save(x, "X", os.path.join(HERE, "gonnx", "scaler_input_0.pb"))
save(y.astype(np.float32), "variable", os.path.join(HERE, "gonnx", "scaler_output_0.pb"))


# A small CNN the fallback runs from ONNX bytes: Conv, BatchNorm, Relu,
# MaxPool, Conv (stride 2), Relu, GlobalAveragePool, Flatten, Gemm, Softmax.
def conv2d(x, w, b, stride, pad):
    n, c, hh, ww = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (hh + 2 * pad - kh) // stride + 1, (ww + 2 * pad - kw) // stride + 1
    out = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    return out + b[None, :, None, None]


def cnn():
    f = lambda *s: (rng.standard_normal(s) * 0.2).astype(np.float32)
    W1, B1 = f(8, 3, 3, 3), f(8)
    sc, bi, mu = f(8) + 1, f(8), f(8)
    var = (np.abs(f(8)) + 0.5).astype(np.float32)
    W2, B2 = f(16, 8, 3, 3), f(16)
    W3, B3 = f(10, 16), f(10)
    nodes = [
        helper.make_node("Conv", ["image", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "sc", "bi", "mu", "var"], ["bn"], epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "W2", "B2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["fl"]),
        helper.make_node("Gemm", ["fl", "W3", "B3"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=1),
    ]
    inits_ = [numpy_helper.from_array(v, k) for k, v in
              dict(W1=W1, B1=B1, sc=sc, bi=bi, mu=mu, var=var, W2=W2, B2=B2, W3=W3, B3=B3).items()]
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [2, 3, 32, 32])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [2, 10])], inits_)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "cnn.onnx"))
    x = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
    d = lambda a: a.astype(np.float64)
    h = conv2d(d(x), d(W1), d(B1), 1, 1)
    h = (h - d(mu)[None, :, None, None]) / np.sqrt(d(var)[None, :, None, None] + 1e-5) * d(sc)[None, :, None, None] + d(bi)[None, :, None, None]
    h = np.maximum(h, 0)
    h = h.reshape(2, 8, 16, 2, 16, 2).max(axis=(3, 5))
    h = np.maximum(conv2d(h, d(W2), d(B2), 2, 1), 0)
    h = h.mean(axis=(2, 3))
    z = h @ d(W3).T + d(B3)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    y = z / z.sum(axis=1, keepdims=True)
    save(x, "image", os.path.join(HERE, "cnn_input_0.pb"))
    save(y.astype(np.float32), "probs", os.path.join(HERE, "cnn_output_0.pb"))


cnn()
