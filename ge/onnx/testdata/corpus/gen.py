#!/usr/bin/python3
"""Writes the ONNX model corpus: exporter-shaped models and their inputs.

Run from anywhere with the system Python (python3-onnx 1.12, numpy):

    /usr/bin/python3 ge/onnx/testdata/corpus/gen.py

then write the expected outputs with ONNX Runtime (see README.md):

    NODE_PATH=/tmp/ort/node_modules node ge/onnx/testdata/corpus/ref.mjs

Every model reproduces the node patterns one exporter emits (torch.onnx,
Paddle2ONNX, tf2onnx): its naming, where it puts Constant nodes rather than
initializers, the symbolic dims of its graph inputs, its attribute-vs-input
choices per opset. Weights are random from a per-model seed (crc32 of the
model name), so adding a model leaves the others' bytes unchanged. Each
model gets input sets with different concrete values for its symbolic dims.

Layout written here (ref.mjs adds expected/):

    <model>/model.onnx
    <model>/inputs/setK/<input>.npy
    manifest.json   models, inputs, outputs, symbolic dims, sets, tolerances
"""
import json
import os
import re
import shutil
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

F32, I64, I32, BOOL, F16 = (TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32,
                            TensorProto.BOOL, TensorProto.FLOAT16)
DTYPE_NAMES = {F32: "float32", I64: "int64", I32: "int32", BOOL: "bool", F16: "float16"}

# Default comparison tolerance (|got - want| <= atol + rtol*|want|).
DEFAULT_TOL = {"rtol": 1e-3, "atol": 1e-5}
# Recurrent cells, attention and loops chain many nonlinearities and long
# dot products; accumulation order alone moves float32 results by ~1e-6
# relative there, so outputs near zero get a wider absolute bound.
DEEP_TOL = {"rtol": 1e-3, "atol": 1e-4}


def safe(name):
    """A file name for a tensor name (exporters put / and : in names)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class Builder:
    """Builds one model the way an exporter lays it out.

    style picks the exporter's naming: torch ("/Conv_output_0",
    "onnx::Reshape_12"), paddle ("conv2d_0.tmp_0", "conv2d_0.w_0"),
    tf ("StatefulPartitionedCall/model/conv2d/Conv2D:0").
    """

    def __init__(self, name, opset, style, doc):
        self.name, self.opset, self.style, self.doc = name, opset, style, doc
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = {}
        self.sym_dims = []

    def _uid(self, key):
        k = self.count.get(key, 0)
        self.count[key] = k + 1
        return k

    def tname(self, op):
        k = self._uid(op)
        if self.style == "torch":
            return "/%s_%d_output_0" % (op, k) if k else "/%s_output_0" % op
        if self.style == "paddle":
            return "%s_%d.tmp_0" % (re.sub(r"(?<!^)([A-Z])", r"_\1", op).lower(), k)
        return "StatefulPartitionedCall/model/%s_%d:0" % (op.lower(), k)

    def wname(self, hint):
        k = self._uid("w:" + hint)
        if self.style == "torch":
            return "%s.%d" % (hint, k)
        if self.style == "paddle":
            return "%s_%d.w_0" % (hint, k)
        return "StatefulPartitionedCall/model/%s_%d/ReadVariableOp:0" % (hint, k)

    # --- graph pieces -----------------------------------------------------
    def input(self, name, dtype, shape):
        self.inputs.append((name, dtype, shape))
        for d in shape:
            if isinstance(d, str) and d not in self.sym_dims:
                self.sym_dims.append(d)
        return name

    def output(self, name, dtype, shape=None):
        self.outputs.append((name, dtype, shape))

    def weight(self, hint, arr):
        """An initializer (how every exporter stores learned weights)."""
        n = self.wname(hint)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), n))
        return n

    def randw(self, hint, shape, fan_in=None, dtype=np.float32):
        fan_in = fan_in or int(np.prod(shape[1:])) or 1
        return self.weight(hint, (self.rng.standard_normal(shape) / np.sqrt(fan_in)).astype(dtype))

    def const(self, arr):
        """A Constant node (how torch.onnx emits shapes, axes and scalars)."""
        arr = np.asarray(arr)
        out = ("onnx::Const_%d" % self._uid("const")) if self.style == "torch" else self.tname("Constant")
        self.nodes.append(helper.make_node("Constant", [], [out], name=out.strip("/") + "_node",
                                           value=numpy_helper.from_array(arr)))
        return out

    def op(self, op_type, inputs, n_out=1, outputs=None, **attrs):
        outs = outputs or [self.tname(op_type) if i == 0 else self.tname(op_type) + "_%d" % i
                           for i in range(n_out)]
        nm = "%s_%d" % (op_type, self._uid("node:" + op_type))
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=nm, **attrs))
        return outs[0] if len(outs) == 1 else outs

    # --- common exporter idioms ------------------------------------------
    def unsqueeze(self, x, axes, out=None):
        outs = [out] if out else None
        if self.opset >= 13:
            return self.op("Unsqueeze", [x, self.const(np.array(axes, np.int64))], outputs=outs)
        return self.op("Unsqueeze", [x], outputs=outs, axes=axes)

    def squeeze(self, x, axes, out=None):
        outs = [out] if out else None
        if self.opset >= 13:
            return self.op("Squeeze", [x, self.const(np.array(axes, np.int64))], outputs=outs)
        return self.op("Squeeze", [x], outputs=outs, axes=axes)

    def reduce_sum(self, x, axes, keepdims):
        if self.opset >= 13:
            return self.op("ReduceSum", [x, self.const(np.array(axes, np.int64))], keepdims=keepdims)
        return self.op("ReduceSum", [x], axes=axes, keepdims=keepdims)

    def dim(self, x, i):
        """torch's x.size(i): Shape → Gather(scalar index) → a 0-d int64."""
        return self.op("Gather", [self.op("Shape", [x]), self.const(np.array(i, np.int64))], axis=0)

    def conv(self, x, cin, cout, k, stride=1, pad=0, group=1, bias=True, hint="conv"):
        w = self.randw(hint, (cout, cin // group, k, k))
        ins = [x, w] + ([self.weight(hint + "_b", (self.rng.standard_normal(cout) * 0.1).astype(np.float32))]
                        if bias else [])
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                       group=group, dilations=[1, 1])

    def bn(self, x, c, momentum=True):
        r = self.rng
        ins = [x, self.weight("bn_scale", (1 + 0.1 * r.standard_normal(c)).astype(np.float32)),
               self.weight("bn_bias", (0.1 * r.standard_normal(c)).astype(np.float32)),
               self.weight("bn_mean", (0.1 * r.standard_normal(c)).astype(np.float32)),
               self.weight("bn_var", (0.5 + r.random(c)).astype(np.float32))]
        attrs = {"epsilon": 1e-5}
        if momentum and self.opset < 15:
            attrs["momentum"] = 0.9
        return self.op("BatchNormalization", ins, **attrs)

    def build(self):
        vi = lambda n, t, s: helper.make_tensor_value_info(n, t, s)
        graph = helper.make_graph(self.nodes, self.name, [vi(*i) for i in self.inputs],
                                  [vi(*o) for o in self.outputs], initializer=self.inits)
        producer = {"torch": ("pytorch", "2.1.0"), "paddle": ("PaddlePaddle", "2.5"),
                    "tf": ("tf2onnx", "1.16.1")}[self.style]
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name=producer[0], producer_version=producer[1])
        model.ir_version = 8 if self.opset <= 18 else 9
        if self.opset <= 17:  # ONNX 1.12 knows schemas up to opset 17
            if self.style == "torch":
                # torch.onnx stores ONNX shape inference's value_info (with
                # symbolic dims) for the intermediate tensors.
                model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
            onnx.checker.check_model(model, full_check=True)
        return model


MANIFEST = []


def reset():
    """Removes the model directories a previous run wrote."""
    for e in os.listdir(HERE):
        if os.path.isfile(os.path.join(HERE, e, "model.onnx")):
            shutil.rmtree(os.path.join(HERE, e))


reset()


def emit(b, sets, tol=None, why_tol=None):
    """Writes b's model and input sets and records them in the manifest.

    sets: list of dicts input name → array. Their shapes must agree with
    the declared ones on fixed dims and bind each symbolic dim to one value.
    """
    model = b.build()
    d = os.path.join(HERE, b.name)
    os.makedirs(d)
    onnx.save(model, os.path.join(d, "model.onnx"))
    msets = []
    for k, s in enumerate(sets):
        bind = {}
        for (n, t, shape) in b.inputs:
            a = s[n]
            assert a.dtype == np.dtype(DTYPE_NAMES[t]), (b.name, n, a.dtype)
            assert a.ndim == len(shape), (b.name, n, a.shape, shape)
            for want, got in zip(shape, a.shape):
                if isinstance(want, str):
                    assert bind.setdefault(want, got) == got, (b.name, n, want)
                else:
                    assert want == got, (b.name, n, a.shape, shape)
            sd = os.path.join(d, "inputs", "set%d" % k)
            os.makedirs(sd, exist_ok=True)
            np.save(os.path.join(sd, safe(n) + ".npy"), a, allow_pickle=False)
        msets.append({"name": "set%d" % k, "dims": bind})
    entry = {
        "name": b.name,
        "model": b.name + "/model.onnx",
        "opset": b.opset,
        "exporter": {"torch": "torch.onnx", "paddle": "Paddle2ONNX", "tf": "tf2onnx"}[b.style],
        "description": b.doc,
        "symbolic_dims": b.sym_dims,
        "inputs": [{"name": n, "file": safe(n) + ".npy", "dtype": DTYPE_NAMES[t], "shape": s}
                   for (n, t, s) in b.inputs],
        "outputs": [{"name": n, "file": safe(n) + ".npy", "dtype": DTYPE_NAMES[t]} for (n, t, _) in b.outputs],
        "sets": msets,
        "tolerance": tol or DEFAULT_TOL,
    }
    if why_tol:
        entry["tolerance_reason"] = why_tol
    MANIFEST.append(entry)


def randn(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


DATA = np.random.default_rng(20261203)  # input data (weights use per-model seeds)


# ---------------------------------------------------------------------------
# MobileNetV3 block (Paddle2ONNX): 1x1 expand Conv (BN folded into the bias)
# → hard-swish → depthwise 3x3 Conv (group=C) → BatchNormalization →
# hard-swish → squeeze-excite (GlobalAveragePool, 1x1 Conv, Relu, 1x1 Conv,
# HardSigmoid(1/6, 0.5), Mul) → 1x1 project Conv → residual Add.
# Paddle2ONNX writes hard_swish as Add/Clip/Mul/Div below opset 14 (v1.0) or
# x*HardSigmoid (newer mappers), and HardSwish from opset 14.
def mobilenet(opset, hswish, name):
    b = Builder(name, opset, "paddle",
                "MobileNetV3 inverted-residual block with squeeze-excite; hard-swish as %s" % hswish)
    C, E, R = 16, 32, 8
    x = b.input("x", F32, ["N", C, "H", "W"])

    def hs(t):
        if hswish == "clip":
            a = b.op("Add", [t, b.const(np.array(3.0, np.float32))])
            c = b.op("Clip", [a, b.const(np.array(0.0, np.float32)), b.const(np.array(6.0, np.float32))])
            return b.op("Div", [b.op("Mul", [t, c]), b.const(np.array(6.0, np.float32))])
        if hswish == "hardsigmoid":
            return b.op("Mul", [t, b.op("HardSigmoid", [t], alpha=1 / 6, beta=0.5)])
        return b.op("HardSwish", [t])

    h = hs(b.conv(x, C, E, 1, hint="conv2d"))
    h = hs(b.bn(b.conv(h, E, E, 3, pad=1, group=E, bias=False, hint="depthwise_conv2d"), E))
    g = b.op("GlobalAveragePool", [h])
    s = b.op("Relu", [b.conv(g, E, R, 1, hint="conv2d")])
    s = b.op("HardSigmoid", [b.conv(s, R, E, 1, hint="conv2d")], alpha=0.1666667, beta=0.5)
    h = b.op("Mul", [h, s])
    y = b.op("Add", [b.conv(h, E, C, 1, hint="conv2d"), x], outputs=["save_infer_model/scale_0.tmp_0"])
    b.output(y, F32, ["N", C, "H", "W"])
    emit(b, [{"x": randn(DATA, 1, C, 8, 8)}, {"x": randn(DATA, 2, C, 12, 10)}, {"x": randn(DATA, 3, C, 5, 7)}])


mobilenet(11, "clip", "mobilenetv3_block_op11")
mobilenet(13, "hardsigmoid", "mobilenetv3_block_op13")
mobilenet(14, "hardswish", "mobilenetv3_block_op14")


# ---------------------------------------------------------------------------
# Resize as exporters write it. torch.onnx opset 11: Resize(X, roi=Constant
# empty, scales=Constant) or, for size=, scales empty and sizes =
# Concat(Slice(Shape(X), 0, 2), Constant). Opset 13: unused roi/scales are ""
# input names. Opset 18: axes=[2, 3] with 2-element scales or sizes.
def resize(name, opset, mode, ctm, how, hw, nearest=None, cubic_a=None, style="torch"):
    b = Builder(name, opset, style, "Resize mode=%s coordinate_transformation_mode=%s%s, %s %s" % (
        mode, ctm, " nearest_mode=%s" % nearest if nearest else "", how, hw))
    x = b.input("input", F32, ["N", 3, "H", "W"])
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
    if nearest:
        attrs["nearest_mode"] = nearest
    if cubic_a is not None:
        attrs["cubic_coeff_a"] = cubic_a
    empty = lambda: b.const(np.zeros(0, np.float32)) if opset < 13 else ""
    if how == "scales":
        ins = [x, empty(), b.const(np.array([1, 1] + list(hw), np.float32))]
    elif how == "sizes":  # torch F.interpolate(size=hw): N, C from the input's shape
        nc = b.op("Slice", [b.op("Shape", [x]), b.const(np.array([0], np.int64)), b.const(np.array([2], np.int64)),
                            b.const(np.array([0], np.int64))])
        sizes = b.op("Concat", [nc, b.const(np.array(hw, np.int64))], axis=0)
        ins = [x, empty(), empty(), sizes]
    elif how == "axes_scales":
        ins = [x, "", b.const(np.array(hw, np.float32))]
        attrs["axes"] = [2, 3]
    elif how == "axes_sizes":
        ins = [x, "", "", b.const(np.array(hw, np.int64))]
        attrs["axes"] = [2, 3]
    y = b.op("Resize", ins, outputs=["output"], **attrs)
    b.output(y, F32, ["N", 3, "Resize_output_dim_2", "Resize_output_dim_3"])
    emit(b, [{"input": randn(DATA, 1, 3, 4, 5)}, {"input": randn(DATA, 2, 3, 7, 6)}])


resize("resize_nearest_asymmetric_floor_op11", 11, "nearest", "asymmetric", "scales", (2.0, 2.0), nearest="floor")
resize("resize_nearest_asymmetric_floor_op13", 13, "nearest", "asymmetric", "scales", (2.0, 3.0), nearest="floor")
resize("resize_nearest_halfpixel_rpf_op13", 13, "nearest", "half_pixel", "sizes", (7, 9), nearest="round_prefer_floor")
resize("resize_nearest_halfpixel_floor_op13", 13, "nearest", "half_pixel", "scales", (1.5, 2.5), nearest="floor")
resize("resize_nearest_aligncorners_rpf_op11", 11, "nearest", "align_corners", "sizes", (6, 11),
       nearest="round_prefer_floor")
resize("resize_nearest_aligncorners_floor_op13", 13, "nearest", "align_corners", "sizes", (5, 8), nearest="floor")
resize("resize_linear_halfpixel_op13", 13, "linear", "half_pixel", "scales", (2.0, 2.0))
resize("resize_linear_pytorch_half_pixel_op11", 11, "linear", "pytorch_half_pixel", "sizes", (1, 9))
resize("resize_linear_aligncorners_op11", 11, "linear", "align_corners", "sizes", (7, 9))
resize("resize_cubic_halfpixel_op13", 13, "cubic", "half_pixel", "scales", (2.0, 2.0), cubic_a=-0.75)
resize("resize_cubic_aligncorners_op11", 11, "cubic", "align_corners", "sizes", (6, 7), cubic_a=-0.5)
resize("resize_nearest_axes_op18", 18, "nearest", "asymmetric", "axes_scales", (2.0, 2.0), nearest="floor")
resize("resize_linear_axes_sizes_op18", 18, "linear", "half_pixel", "axes_sizes", (6, 10))


# FPN top-down path: upsample the coarser map to the finer one and add.
# torch: F.interpolate(p5, size=p4.shape[-2:]) → sizes from both Shapes.
# Paddle: nearest interp with scale 2 → scales constant.
def fpn(opset, style, name):
    b = Builder(name, opset, style, "FPN top-down: nearest upsample of p5 to p4's size, then Add and a 3x3 Conv")
    p4 = b.input("p4", F32, ["N", 8, "H", "W"])
    p5 = b.input("p5", F32, ["N", 8, "H_2", "W_2"])
    if style == "torch":
        nc = b.op("Slice", [b.op("Shape", [p5]), b.const(np.array([0], np.int64)), b.const(np.array([2], np.int64))])
        hw = b.op("Slice", [b.op("Shape", [p4]), b.const(np.array([2], np.int64)), b.const(np.array([4], np.int64))])
        up = b.op("Resize", [p5, "", "", b.op("Concat", [nc, hw], axis=0)], mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    else:
        up = b.op("Resize", [p5, b.const(np.zeros(0, np.float32)), b.const(np.array([1, 1, 2, 2], np.float32))],
                  mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    s = b.op("Add", [p4, up])
    y = b.op("Identity", [b.conv(s, 8, 4, 3, pad=1)], outputs=["fpn_out"])
    b.output(y, F32, ["N", 4, "H", "W"])
    sets = []
    for n, h, w in [(1, 8, 8), (2, 6, 10)]:
        sets.append({"p4": randn(DATA, n, 8, h, w), "p5": randn(DATA, n, 8, h // 2, w // 2)})
    emit(b, sets)


fpn(13, "torch", "resize_fpn_add_op13")
fpn(11, "paddle", "resize_fpn_add_op11")


# ---------------------------------------------------------------------------
# ConvTranspose decoder (torch nn.ConvTranspose2d(stride=2, padding=1,
# output_padding=1) doubles H and W), grouped second stage, a kernel-2
# stride-2 stage, then Relu and Sigmoid.
def convtranspose_decoder():
    b = Builder("convtranspose_decoder", 13, "torch",
                "ConvTranspose k3 s2 p1 output_padding 1, Relu, grouped ConvTranspose, ConvTranspose k2 s2, Sigmoid")
    x = b.input("z", F32, ["batch_size", 8, "H", "W"])
    h = b.op("ConvTranspose", [x, b.randw("deconv1.weight", (8, 4, 3, 3), 8 * 9 // 4),
                               b.randw("deconv1.bias", (4,), 4)],
             kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1], dilations=[1, 1], group=1)
    h = b.op("Relu", [h])
    h = b.op("ConvTranspose", [h, b.randw("deconv2.weight", (4, 2, 3, 3), 9)], kernel_shape=[3, 3], strides=[1, 1],
             pads=[1, 1, 1, 1], dilations=[1, 1], group=2)
    h = b.op("Relu", [h])
    h = b.op("ConvTranspose", [h, b.randw("deconv3.weight", (4, 1, 2, 2), 4), b.randw("deconv3.bias", (1,), 1)],
             kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], dilations=[1, 1], group=1)
    y = b.op("Sigmoid", [h], outputs=["recon"])
    b.output(y, F32, ["batch_size", 1, "ConvTranspose_output_dim_2", "ConvTranspose_output_dim_3"])
    emit(b, [{"z": randn(DATA, 1, 8, 3, 4)}, {"z": randn(DATA, 2, 8, 5, 5)}])


convtranspose_decoder()


# ---------------------------------------------------------------------------
# torch.onnx's dynamic shape arithmetic on x[batch, seq, 12]:
#   x.view(x.size(0), x.size(1), 3, 4): Shape → Gather → Unsqueeze → Concat
#     with constants → Reshape
#   torch.ones(x.shape[:2]) * 0.5: Shape → Slice → ConstantOfShape
#   w.expand_as(x): Expand to Shape(x)
#   torch.arange(x.size(1)): Range(0, Gather(Shape), 1)
#   x.numel(): Size → Cast
def shape_arith(opset):
    b = Builder("shape_arith_op%d" % opset, opset, "torch",
                "dynamic reshape via Shape/Gather/Unsqueeze/Concat, ConstantOfShape, Expand, Range, Size")
    x = b.input("x", F32, ["batch_size", "seq", 12])
    n, t = b.dim(x, 0), b.dim(x, 1)
    shp = b.op("Concat", [b.unsqueeze(n, [0]), b.unsqueeze(t, [0]), b.const(np.array([3], np.int64)),
                          b.const(np.array([4], np.int64))], axis=0)
    y1 = b.op("Reshape", [x, shp])
    y1 = b.op("Transpose", [y1], perm=[0, 2, 1, 3], outputs=["heads"])
    b.output(y1, F32, ["batch_size", 3, "seq", 4])
    nt = b.op("Slice", [b.op("Shape", [x]), b.const(np.array([0], np.int64)), b.const(np.array([2], np.int64)),
                        b.const(np.array([0], np.int64)), b.const(np.array([1], np.int64))])
    half = b.op("ConstantOfShape", [nt], value=numpy_helper.from_array(np.array([0.5], np.float32)))
    y2 = b.op("Add", [half, b.reduce_sum(x, [2], 0)], outputs=["row_sum"])
    b.output(y2, F32, ["batch_size", "seq"])
    w = b.randw("scale", (12,), 1)
    y3 = b.op("Mul", [x, b.op("Expand", [w, b.op("Shape", [x])])], outputs=["scaled"])
    b.output(y3, F32, ["batch_size", "seq", 12])
    pos = b.op("Range", [b.const(np.array(0, np.int64)), t, b.const(np.array(1, np.int64))])
    y4 = b.op("Add", [x, b.unsqueeze(b.op("Cast", [pos], to=F32), [1])], outputs=["with_pos"])
    b.output(y4, F32, ["batch_size", "seq", 12])
    b.output(pos, I64, ["seq"])
    numel = b.op("Cast", [b.op("Size", [x])], to=F32)
    y5 = b.op("Div", [b.reduce_sum(x, [0, 1, 2], 0), numel], outputs=["mean"])
    b.output(y5, F32, [])
    emit(b, [{"x": randn(DATA, 1, 5, 12)}, {"x": randn(DATA, 3, 17, 12)}])


shape_arith(11)
shape_arith(13)


# ---------------------------------------------------------------------------
# If on a scalar condition computed at run time.
def if_reducesum():
    b = Builder("if_reducesum", 13, "torch",
                "If(ReduceSum(x) > 0): then Relu(x*w+b), else Abs(x-b)*w; branches read outer-scope x, w, b")
    x = b.input("x", F32, ["batch_size", 4])
    w = b.randw("w", (4,), 1)
    bb = b.randw("b", (4,), 1)
    cond = b.op("Greater", [b.op("ReduceSum", [x], keepdims=0), b.const(np.array(0.0, np.float32))])

    def branch(nm, nodes, out):
        return helper.make_graph(nodes, nm, [], [helper.make_tensor_value_info(out, F32, None)])

    then_g = branch("then_branch", [
        helper.make_node("Mul", [x, w], ["then_mul"]),
        helper.make_node("Add", ["then_mul", bb], ["then_add"]),
        helper.make_node("Relu", ["then_add"], ["then_out"])], "then_out")
    else_g = branch("else_branch", [
        helper.make_node("Sub", [x, bb], ["else_sub"]),
        helper.make_node("Abs", ["else_sub"], ["else_abs"]),
        helper.make_node("Mul", ["else_abs", w], ["else_out"])], "else_out")
    y = b.op("If", [cond], outputs=["y"], then_branch=then_g, else_branch=else_g)
    b.output(y, F32, ["batch_size", 4])
    pos = np.abs(randn(DATA, 2, 4)) + 0.1
    neg = -np.abs(randn(DATA, 5, 4)) - 0.1
    emit(b, [{"x": pos.astype(np.float32)}, {"x": neg.astype(np.float32)}])


# Silero-VAD-like: a separate int64 scalar "sr" picks the branch
# (sr == 16000 or 8000); the branches use different ops on the outer x.
def if_vad_sr():
    b = Builder("if_vad_sr", 16, "torch", "If(Equal(sr, 16000)) on a scalar int64 input, as Silero VAD checks sr")
    x = b.input("input", F32, ["batch_size", "seq"])
    sr = b.input("sr", I64, [])
    w = b.randw("proj", (1,), 1)
    cond = b.op("Equal", [sr, b.const(np.array(16000, np.int64))])
    k = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    then_g = helper.make_graph([
        helper.make_node("Constant", [], ["t_two"], value=k),
        helper.make_node("Mul", [x, "t_two"], ["t_mul"]),
        helper.make_node("Tanh", ["t_mul"], ["t_out"])], "then_16k", [],
        [helper.make_tensor_value_info("t_out", F32, None)])
    else_g = helper.make_graph([
        helper.make_node("Sigmoid", [x], ["e_sig"]),
        helper.make_node("Mul", ["e_sig", w], ["e_out"])], "else_8k", [],
        [helper.make_tensor_value_info("e_out", F32, None)])
    y = b.op("If", [cond], outputs=["output"], then_branch=then_g, else_branch=else_g)
    b.output(y, F32, ["batch_size", "seq"])
    emit(b, [{"input": randn(DATA, 1, 16), "sr": np.array(16000, np.int64)},
             {"input": randn(DATA, 2, 9), "sr": np.array(8000, np.int64)}])


if_reducesum()
if_vad_sr()


# ---------------------------------------------------------------------------
# LSTM as torch.onnx exports nn.LSTM: ONNX gate order, batch_first inputs
# transposed to time-major, sequence_lens (int32) from pack_padded_sequence,
# initial states as graph inputs, the bidirectional Y [seq, 2, batch, H]
# transposed and reshaped to [seq, batch, 2H] and back to batch-first.
def lstm_bidir():
    b = Builder("lstm_seqlens_bidir_op14", 14, "torch",
                "bidirectional LSTM with sequence_lens and initial states, batch_first Transposes around it")
    I, H = 6, 5
    x = b.input("input", F32, ["batch", "seq", I])
    lens = b.input("lengths", I32, ["batch"])
    h0 = b.input("h0", F32, [2, "batch", H])
    c0 = b.input("c0", F32, [2, "batch", H])
    xt = b.op("Transpose", [x], perm=[1, 0, 2])
    y, yh, yc = b.op("LSTM", [xt, b.randw("lstm.weight_ih", (2, 4 * H, I), I), b.randw("lstm.weight_hh", (2, 4 * H, H), H),
                              b.randw("lstm.bias", (2, 8 * H), H), lens, h0, c0],
                     outputs=["/lstm/LSTM_output_0", "hn", "cn"], direction="bidirectional", hidden_size=H)
    y = b.op("Transpose", [y], perm=[0, 2, 1, 3])
    y = b.op("Reshape", [y, b.const(np.array([0, 0, -1], np.int64))])
    y = b.op("Transpose", [y], perm=[1, 0, 2], outputs=["output"])
    b.output(y, F32, ["batch", "seq", 2 * H])
    b.output(yh, F32, [2, "batch", H])
    b.output(yc, F32, [2, "batch", H])
    sets = []
    for n, t, ls in [(2, 5, [5, 3]), (3, 7, [7, 1, 4])]:
        sets.append({"input": randn(DATA, n, t, I), "lengths": np.array(ls, np.int32),
                     "h0": randn(DATA, 2, n, H, scale=0.5), "c0": randn(DATA, 2, n, H, scale=0.5)})
    emit(b, sets, DEEP_TOL, "recurrence over seq steps")


def lstm_forward():
    b = Builder("lstm_seqlens_forward_op11", 11, "torch",
                "forward LSTM (time-major) with sequence_lens and initial states, Squeeze(axes attr) of the direction dim")
    I, H = 4, 7
    x = b.input("input", F32, ["seq", "batch", I])
    lens = b.input("lengths", I32, ["batch"])
    h0 = b.input("h0", F32, [1, "batch", H])
    c0 = b.input("c0", F32, [1, "batch", H])
    y, yh, yc = b.op("LSTM", [x, b.randw("lstm.weight_ih", (1, 4 * H, I), I), b.randw("lstm.weight_hh", (1, 4 * H, H), H),
                              b.randw("lstm.bias", (1, 8 * H), H), lens, h0, c0],
                     outputs=["/lstm/LSTM_output_0", "/lstm/LSTM_output_1", "cn"], hidden_size=H)
    b.output(b.squeeze(y, [1], "output"), F32, ["seq", "batch", H])
    b.output(b.squeeze(yh, [0], "hn"), F32, ["batch", H])
    b.output(yc, F32, [1, "batch", H])
    sets = []
    for n, t, ls in [(1, 6, [6]), (3, 4, [4, 2, 3])]:
        sets.append({"input": randn(DATA, t, n, I), "lengths": np.array(ls, np.int32),
                     "h0": randn(DATA, 1, n, H, scale=0.5), "c0": randn(DATA, 1, n, H, scale=0.5)})
    emit(b, sets, DEEP_TOL, "recurrence over seq steps")


lstm_bidir()
lstm_forward()


# ---------------------------------------------------------------------------
# GRU text classifier (torch): Gather embedding of int64 tokens, GRU with
# linear_before_reset=1 (torch's cell), last hidden state through Gemm.
def gru_model():
    b = Builder("gru_model", 13, "torch", "Gather embedding, GRU linear_before_reset=1, Squeeze, Gemm(transB=1)")
    V, E, H, K = 50, 8, 6, 4
    tok = b.input("tokens", I64, ["batch", "seq"])
    emb = b.op("Gather", [b.randw("embedding.weight", (V, E), 1), tok], axis=0)
    xt = b.op("Transpose", [emb], perm=[1, 0, 2])
    y, yh = b.op("GRU", [xt, b.randw("gru.weight_ih", (1, 3 * H, E), E), b.randw("gru.weight_hh", (1, 3 * H, H), H),
                         b.randw("gru.bias", (1, 6 * H), H)], n_out=2, hidden_size=H, linear_before_reset=1)
    seq_out = b.op("Transpose", [b.squeeze(y, [1])], perm=[1, 0, 2], outputs=["states"])
    logits = b.op("Gemm", [b.squeeze(yh, [0]), b.randw("fc.weight", (K, H), H), b.randw("fc.bias", (K,), H)],
                  alpha=1.0, beta=1.0, transB=1, outputs=["logits"])
    b.output(logits, F32, ["batch", K])
    b.output(seq_out, F32, ["batch", "seq", H])
    emit(b, [{"tokens": DATA.integers(0, V, (1, 5)).astype(np.int64)},
             {"tokens": DATA.integers(0, V, (3, 17)).astype(np.int64)}], DEEP_TOL, "recurrence over seq steps")


gru_model()


# ---------------------------------------------------------------------------
# Transformer block with a dynamic sequence length (torch.onnx): pre-norm,
# Q/K/V MatMul+Add, heads split with Shape/Gather/Unsqueeze/Concat/Reshape,
# Transpose, scaled scores, causal mask, Softmax, merge heads, output
# projection, residual, MLP with GELU, residual.
#   variant A (opset 17): LayerNormalization, Trilu mask on ConstantOfShape,
#     Where, Erf GELU.
#   variant B (opset 13): decomposed LayerNorm (ReduceMean/Sub/Pow/Sqrt/Div),
#     causal mask from Range/Unsqueeze/Less, BERT additive padding mask from
#     an int64 attention_mask input, tanh GELU.
def attention(variant):
    opset = 17 if variant == "A" else 13
    name = "attention_dynamic_op17" if variant == "A" else "attention_dynamic_op13"
    b = Builder(name, opset, "torch", "transformer block, dynamic seq; " + (
        "LayerNormalization, Trilu causal mask, Where, Erf GELU" if variant == "A" else
        "decomposed LayerNorm, Range/Less causal mask, additive padding mask, tanh GELU"))
    D, NH, HD, FF = 16, 2, 8, 32
    x = b.input("hidden_states", F32, ["batch_size", "sequence_length", D])
    if variant == "B":
        am = b.input("attention_mask", I64, ["batch_size", "sequence_length"])
    n, t = b.dim(x, 0), b.dim(x, 1)
    nu, tu = b.unsqueeze(n, [0]), b.unsqueeze(t, [0])

    def layernorm(v, hint):
        g = b.weight(hint + ".weight", (1 + 0.1 * b.rng.standard_normal(D)).astype(np.float32))
        be = b.weight(hint + ".bias", (0.1 * b.rng.standard_normal(D)).astype(np.float32))
        if variant == "A":
            return b.op("LayerNormalization", [v, g, be], axis=-1, epsilon=1e-5)
        mu = b.op("ReduceMean", [v], axes=[-1], keepdims=1)
        d = b.op("Sub", [v, mu])
        var = b.op("ReduceMean", [b.op("Pow", [d, b.const(np.array(2.0, np.float32))])], axes=[-1], keepdims=1)
        sd = b.op("Sqrt", [b.op("Add", [var, b.const(np.array(1e-5, np.float32))])])
        return b.op("Add", [b.op("Mul", [b.op("Div", [d, sd]), g]), be])

    def linear(v, din, dout, hint):
        return b.op("Add", [b.randw(hint + ".bias", (dout,), din),
                            b.op("MatMul", [v, b.randw(hint + ".weight", (din, dout), din)])])

    def heads(v, perm):
        shp = b.op("Concat", [nu, tu, b.const(np.array([NH], np.int64)), b.const(np.array([HD], np.int64))], axis=0)
        return b.op("Transpose", [b.op("Reshape", [v, shp])], perm=perm)

    h = layernorm(x, "ln1")
    q = heads(linear(h, D, D, "attn.q_proj"), [0, 2, 1, 3])
    k = heads(linear(h, D, D, "attn.k_proj"), [0, 2, 3, 1])
    v = heads(linear(h, D, D, "attn.v_proj"), [0, 2, 1, 3])
    s = b.op("Div", [b.op("MatMul", [q, k]), b.const(np.array(np.sqrt(HD), np.float32))])
    if variant == "A":
        tt = b.op("Concat", [tu, tu], axis=0)
        ones = b.op("ConstantOfShape", [tt], value=numpy_helper.from_array(np.array([1], np.int64)))
        keep = b.op("Cast", [b.op("Trilu", [ones], upper=0)], to=BOOL)
        s = b.op("Where", [keep, s, b.const(np.array(-np.inf, np.float32))])
    else:
        r = b.op("Range", [b.const(np.array(0, np.int64)), t, b.const(np.array(1, np.int64))])
        future = b.op("Less", [b.unsqueeze(r, [1]), b.unsqueeze(r, [0])])  # row < col
        s = b.op("Where", [future, b.const(np.array(-1e9, np.float32)), s])
        pad = b.op("Mul", [b.op("Sub", [b.const(np.array(1.0, np.float32)), b.op("Cast", [am], to=F32)]),
                           b.const(np.array(-10000.0, np.float32))])
        s = b.op("Add", [s, b.unsqueeze(pad, [1, 2])])
    p = b.op("Softmax", [s], axis=-1)
    o = b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    o = b.op("Reshape", [o, b.op("Concat", [nu, tu, b.const(np.array([D], np.int64))], axis=0)])
    x2 = b.op("Add", [x, linear(o, D, D, "attn.out_proj")])
    f = linear(layernorm(x2, "ln2"), D, FF, "mlp.fc1")
    if variant == "A":
        e = b.op("Erf", [b.op("Div", [f, b.const(np.array(np.sqrt(2.0), np.float32))])])
        f = b.op("Mul", [b.op("Mul", [f, b.op("Add", [e, b.const(np.array(1.0, np.float32))])]),
                         b.const(np.array(0.5, np.float32))])
    else:
        c3 = b.op("Mul", [b.op("Pow", [f, b.const(np.array(3.0, np.float32))]), b.const(np.array(0.044715, np.float32))])
        inner = b.op("Mul", [b.op("Add", [f, c3]), b.const(np.array(np.sqrt(2 / np.pi), np.float32))])
        f = b.op("Mul", [b.op("Mul", [f, b.const(np.array(0.5, np.float32))]),
                         b.op("Add", [b.op("Tanh", [inner]), b.const(np.array(1.0, np.float32))])])
    y = b.op("Add", [x2, linear(f, FF, D, "mlp.fc2")], outputs=["last_hidden_state"])
    b.output(y, F32, ["batch_size", "sequence_length", D])
    sets = []
    for bs, sl in [(1, 5), (2, 17), (3, 1)]:
        s = {"hidden_states": randn(DATA, bs, sl, D)}
        if variant == "B":
            m = np.ones((bs, sl), np.int64)
            if bs > 1:
                m[1, sl // 2:] = 0  # a padded second sequence
            s["attention_mask"] = m
        sets.append(s)
    emit(b, sets, DEEP_TOL, "softmax over dot products and two MLP layers")


attention("A")
attention("B")


# ---------------------------------------------------------------------------
# Loop with a run-time trip count and a computed cond, carrying a state and
# emitting a scan output (torch.onnx scripted for-loop); Scan (opset 9+
# semantics) computing a cumulative sum.
def loop_counter():
    b = Builder("loop_counter", 13, "torch",
                "Loop(trip count input, cond): state = tanh(state@W + 0.1*i); scan output ReduceSum(state, 1)")
    x = b.input("x", F32, ["batch", 4])
    trip = b.input("n_steps", I64, [])
    w = b.randw("W", (4, 4), 4)
    cond0 = b.const(np.array(True))
    body = helper.make_graph([
        helper.make_node("Cast", ["i"], ["i_f"], to=F32),
        helper.make_node("Constant", [], ["tenth"], value=numpy_helper.from_array(np.array(0.1, np.float32))),
        helper.make_node("Mul", ["i_f", "tenth"], ["step"]),
        helper.make_node("MatMul", ["state_in", w], ["mm"]),
        helper.make_node("Add", ["mm", "step"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["state_out"]),
        helper.make_node("Abs", ["state_out"], ["absv"]),
        helper.make_node("ReduceMax", ["absv"], ["amax"], keepdims=0),
        helper.make_node("Constant", [], ["limit"], value=numpy_helper.from_array(np.array(100.0, np.float32))),
        helper.make_node("Less", ["amax", "limit"], ["cond_out"]),
        helper.make_node("Constant", [], ["ax1"], value=numpy_helper.from_array(np.array([1], np.int64))),
        helper.make_node("ReduceSum", ["state_out", "ax1"], ["row"], keepdims=0),
    ], "loop_body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", BOOL, []),
         helper.make_tensor_value_info("state_in", F32, None)],
        [helper.make_tensor_value_info("cond_out", BOOL, []), helper.make_tensor_value_info("state_out", F32, None),
         helper.make_tensor_value_info("row", F32, None)])
    fin, rows = b.op("Loop", [trip, cond0, x], outputs=["final_state", "row_sums"], body=body)
    b.output(fin, F32, ["batch", 4])
    b.output(rows, F32, ["n_steps", "batch"])
    emit(b, [{"x": randn(DATA, 2, 4), "n_steps": np.array(3, np.int64)},
             {"x": randn(DATA, 1, 4), "n_steps": np.array(6, np.int64)}], DEEP_TOL, "iterated tanh/MatMul")


def scan_cumsum():
    b = Builder("scan_cumsum", 11, "torch",
                "Scan (opset 9+ semantics, no batch): cumulative sum over seq of x[seq, 3] plus a weighted scan output")
    s0 = b.input("init", F32, [3])
    x = b.input("x", F32, ["seq", 3])
    w = b.randw("w", (3,), 1)
    body = helper.make_graph([
        helper.make_node("Add", ["sum_in", "x_t"], ["sum_out"]),
        helper.make_node("Mul", ["sum_out", w], ["scaled"]),
    ], "scan_body",
        [helper.make_tensor_value_info("sum_in", F32, [3]), helper.make_tensor_value_info("x_t", F32, [3])],
        [helper.make_tensor_value_info("sum_out", F32, [3]), helper.make_tensor_value_info("scaled", F32, [3])])
    fin, cum = b.op("Scan", [s0, x], outputs=["total", "cumsum_scaled"], body=body, num_scan_inputs=1,
                    scan_input_directions=[0], scan_output_directions=[0])
    b.output(fin, F32, [3])
    b.output(cum, F32, ["seq", 3])
    emit(b, [{"init": randn(DATA, 3), "x": randn(DATA, 5, 3)}, {"init": randn(DATA, 3), "x": randn(DATA, 12, 3)}])


loop_counter()
scan_cumsum()


# ---------------------------------------------------------------------------
# tf2onnx conversion of a Keras NHWC model: Transpose to NCHW before the
# first Conv and back after, ZeroPadding/"REFLECT" tf.pad as Pad(mode
# reflect), MaxPool padding="same" as auto_pad SAME_UPPER, global average
# pooling as ReduceMean + Squeeze, Dense as MatMul + Add, expand_dims as
# Unsqueeze. Squeeze/Unsqueeze take axes as an attribute at opset 11 and as
# an input at opset 13. tf2onnx names unknown dims unk__N.
def tf_nhwc(opset):
    b = Builder("tf_nhwc_op%d" % opset, opset, "tf",
                "Keras NHWC via tf2onnx: Transpose, Pad reflect, Conv, MaxPool SAME_UPPER, ReduceMean, Squeeze, "
                "MatMul, Unsqueeze")
    x = b.input("input_1", F32, ["unk__12", "unk__13", "unk__14", 3])
    h = b.op("Transpose", [x], perm=[0, 3, 1, 2])
    h = b.op("Pad", [h, b.const(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)), b.const(np.array(0.0, np.float32))],
             mode="reflect")
    h = b.op("Relu", [b.conv(h, 3, 8, 3, hint="conv2d")])
    if opset >= 13:  # a strided Conv with padding="same"
        w = b.randw("conv2d_1", (8, 8, 3, 3))
        h = b.op("Relu", [b.op("Conv", [h, w], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER",
                                dilations=[1, 1], group=1)])
    h = b.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")
    o1 = b.op("Transpose", [h], perm=[0, 2, 3, 1], outputs=["features"])
    b.output(o1, F32, ["unk__15", "unk__16", "unk__17", 8])
    g = b.squeeze(b.op("ReduceMean", [o1], axes=[1, 2], keepdims=1), [1, 2])
    d = b.op("Add", [b.op("MatMul", [g, b.randw("dense", (8, 5), 8)]), b.randw("dense_bias", (5,), 5)])
    o2 = b.op("Identity", [b.unsqueeze(d, [1])], outputs=["dense"])
    b.output(o2, F32, ["unk__18", 1, 5])
    emit(b, [{"input_1": randn(DATA, 1, 8, 8, 3)}, {"input_1": randn(DATA, 2, 7, 9, 3)}])


tf_nhwc(11)
tf_nhwc(13)


# ---------------------------------------------------------------------------
# PaddleOCR-like models (Paddle2ONNX naming; dynamic dims
# p2o.DynamicDimension.K).
def ocr_det():
    b = Builder("ocr_det_db", 11, "paddle",
                "DB text detector: strided Conv/BatchNormalization/hard-swish backbone, Conv/BN/Relu head, "
                "two ConvTranspose k2 s2 with BN/Relu, Sigmoid probability map")
    x = b.input("x", F32, ["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"])

    def hsw(t):
        return b.op("Mul", [t, b.op("HardSigmoid", [t], alpha=0.1666667, beta=0.5)])

    h = hsw(b.bn(b.conv(x, 3, 8, 3, stride=2, pad=1, bias=False, hint="conv2d"), 8))
    h = b.op("Relu", [b.bn(b.conv(h, 8, 16, 3, stride=2, pad=1, bias=False, hint="conv2d"), 16)])
    h = b.op("Relu", [b.bn(b.conv(h, 16, 4, 3, pad=1, bias=False, hint="conv2d"), 4)])
    h = b.op("ConvTranspose", [h, b.randw("conv2d_transpose", (4, 4, 2, 2), 4), b.randw("conv2d_transpose_b", (4,), 4)],
             kernel_shape=[2, 2], strides=[2, 2], dilations=[1, 1], group=1, pads=[0, 0, 0, 0])
    h = b.op("Relu", [b.bn(h, 4)])
    h = b.op("ConvTranspose", [h, b.randw("conv2d_transpose", (4, 1, 2, 2), 4), b.randw("conv2d_transpose_b", (1,), 1)],
             kernel_shape=[2, 2], strides=[2, 2], dilations=[1, 1], group=1, pads=[0, 0, 0, 0])
    y = b.op("Sigmoid", [h], outputs=["sigmoid_0.tmp_0"])
    b.output(y, F32, ["p2o.DynamicDimension.3", 1, "p2o.DynamicDimension.4", "p2o.DynamicDimension.5"])
    emit(b, [{"x": randn(DATA, 1, 3, 16, 16)}, {"x": randn(DATA, 2, 3, 24, 20)}])


def ocr_rec():
    b = Builder("ocr_rec_crnn", 11, "paddle",
                "CRNN recognizer: Conv/BN/Relu/MaxPool to height 1, Squeeze, Transpose, bidirectional LSTM, "
                "Transpose/Reshape, MatMul+Add, Softmax")
    H, NC = 8, 11
    x = b.input("x", F32, ["p2o.DynamicDimension.0", 3, H, "p2o.DynamicDimension.1"])
    h = b.op("Relu", [b.bn(b.conv(x, 3, 8, 3, pad=1, bias=False, hint="conv2d"), 8)])
    h = b.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0])
    h = b.op("Relu", [b.conv(h, 8, 16, 3, pad=1, hint="conv2d")])
    h = b.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0])
    h = b.conv(h, 16, 16, 3, pad=1, hint="conv2d")
    h = b.op("Mul", [h, b.op("HardSigmoid", [h], alpha=0.1666667, beta=0.5)])
    h = b.op("MaxPool", [h], kernel_shape=[2, 1], strides=[2, 1], pads=[0, 0, 0, 0])
    h = b.squeeze(h, [2])  # [N, C, T]
    h = b.op("Transpose", [h], perm=[2, 0, 1])  # [T, N, C]
    Hd = 8
    y = b.op("LSTM", [h, b.randw("lstm_cell", (2, 4 * Hd, 16), 16), b.randw("lstm_cell", (2, 4 * Hd, Hd), Hd),
                      b.randw("lstm_cell", (2, 8 * Hd), Hd)], n_out=1, direction="bidirectional", hidden_size=Hd)
    y = b.op("Transpose", [y], perm=[0, 2, 1, 3])
    y = b.op("Reshape", [y, b.const(np.array([0, 0, -1], np.int64))])
    y = b.op("Transpose", [y], perm=[1, 0, 2])  # [N, T, 2H]
    y = b.op("Add", [b.op("MatMul", [y, b.randw("linear", (2 * Hd, NC), 2 * Hd)]), b.randw("linear_b", (NC,), NC)])
    y = b.op("Softmax", [y], axis=2, outputs=["softmax_0.tmp_0"])
    b.output(y, F32, ["p2o.DynamicDimension.2", "p2o.DynamicDimension.3", NC])
    emit(b, [{"x": randn(DATA, 1, 3, H, 16)}, {"x": randn(DATA, 2, 3, H, 40)}], DEEP_TOL,
         "bidirectional LSTM over the sequence")


ocr_det()
ocr_rec()


# ---------------------------------------------------------------------------
# A model exported after .half() (torch.onnx): float16 weights and input,
# MatMul/Add/Relu/Softmax in float16, plus the float32 logits an
# autocast-style Cast at the end gives.
def mlp_fp16():
    b = Builder("mlp_fp16", 13, "torch", "float16 MLP: MatMul, Add, Relu, MatMul, Add, Softmax, Cast to float32")
    x = b.input("input", F16, ["batch_size", 8])
    h = b.op("Add", [b.op("MatMul", [x, b.randw("fc1.weight", (8, 16), 8, np.float16)]),
                     b.randw("fc1.bias", (16,), 8, np.float16)])
    h = b.op("Relu", [h])
    h = b.op("Add", [b.op("MatMul", [h, b.randw("fc2.weight", (16, 5), 16, np.float16)]),
                     b.randw("fc2.bias", (5,), 16, np.float16)])
    p = b.op("Softmax", [h], axis=-1, outputs=["probs"])
    b.output(p, F16, ["batch_size", 5])
    b.output(b.op("Cast", [h], to=F32, outputs=["logits"]), F32, ["batch_size", 5])
    emit(b, [{"input": randn(DATA, 1, 8).astype(np.float16)}, {"input": randn(DATA, 4, 8).astype(np.float16)}],
         {"rtol": 1e-2, "atol": 1e-3}, "float16 arithmetic: ~1e-3 relative per rounding, accumulation order varies")


mlp_fp16()


with open(os.path.join(HERE, "manifest.json"), "w") as f:
    json.dump({"generator": "gen.py", "onnx": onnx.__version__, "numpy": np.__version__,
               "default_tolerance": DEFAULT_TOL, "models": MANIFEST}, f, indent=1)
    f.write("\n")
print("%d models written" % len(MANIFEST))
