# Builds the single-node models of TestNNAgainstONNXRuntime (with ONNX
# 1.12's helper) and their inputs; then `python3 prep.py in`, `node
# run.js` (onnxruntime-node) and `python3 prep.py out` add the expected
# outputs. NN_ORT_DIR names the output directory.
import onnx, numpy as np, os, shutil, json
from onnx import helper, TensorProto, numpy_helper
root = os.environ.get('NN_ORT_DIR', '/tmp/nncheck/cases')
shutil.rmtree(root, ignore_errors=True)
os.makedirs(root)
rng = np.random.default_rng(0)
NP2T = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.float64: TensorProto.DOUBLE, np.int64: TensorProto.INT64, np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int32: TensorProto.INT32}
def case(name, op, opset, inputs, attrs, nout=1, consts=None, outtypes=None):
    """inputs: list of (name, array) graph inputs; consts: list of (name, array) initializers (inputs in order given by 'order')"""
    consts = consts or []
    node_inputs = attrs.pop('_inputs', None) or [n for n, _ in inputs] + [n for n, _ in consts]
    outs = ['y%d' % i for i in range(nout)]
    node = helper.make_node(op, node_inputs, outs, **attrs)
    gin = [helper.make_tensor_value_info(n, NP2T[a.dtype.type], a.shape) for n, a in inputs]
    inits = [numpy_helper.from_array(a, n) for n, a in consts]
    ot = outtypes or [NP2T[inputs[0][1].dtype.type]] * nout
    # Expected outputs: onnxruntime-node (run.js), converted by prep.py.
    gout = [helper.make_tensor_value_info(o, ot[i], None) for i, o in enumerate(outs)]
    g = helper.make_graph([node], name, gin, gout, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    d = os.path.join(root, 'test_' + name)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(m, os.path.join(d, 'model.onnx'))
    for i, (n, a) in enumerate(inputs):
        t = numpy_helper.from_array(a, n)
        open(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i), 'wb').write(t.SerializeToString())
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
i64 = lambda *v: np.array(v, dtype=np.int64)
fl = lambda *v: np.array(v, dtype=np.float32)
x = f32(1, 2, 9, 8)
# Resize 18/19
def resize(name, opset, attrs, roi=None, scales=None, sizes=None, X=x):
    ins = ['X', 'roi' if roi is not None else '', 'scales' if scales is not None else '', 'sizes' if sizes is not None else '']
    if opset < 11: ins = ['X', 'scales']
    while ins[-1] == '': ins.pop()
    consts = [(n, v) for n, v in [('roi', roi), ('scales', scales), ('sizes', sizes)] if v is not None]
    attrs = dict(attrs); attrs['_inputs'] = ins
    case(name, 'Resize', opset, [('X', X)], attrs, consts=consts)
resize('rs_aa_linear', 18, dict(mode='linear', antialias=1), sizes=i64(1, 2, 4, 3))
resize('rs_aa_cubic', 18, dict(mode='cubic', antialias=1), sizes=i64(1, 2, 4, 3))
resize('rs_aa_cubic_up', 18, dict(mode='cubic', antialias=1), scales=fl(1, 1, 0.5, 1.5))
resize('rs_aa_linear_excl', 18, dict(mode='linear', antialias=1, exclude_outside=1), scales=fl(1, 1, 0.4, 0.7))
resize('rs_keep_larger', 18, dict(mode='linear', axes=[2, 3], keep_aspect_ratio_policy='not_larger'), sizes=i64(5, 5))
resize('rs_keep_smaller', 18, dict(mode='nearest', axes=[2, 3], keep_aspect_ratio_policy='not_smaller'), sizes=i64(5, 5))
resize('rs_axes_scales', 18, dict(mode='cubic', axes=[3, 2]), scales=fl(1.5, 0.5))
resize('rs_axes_crop', 18, dict(mode='linear', axes=[2, 3], coordinate_transformation_mode='tf_crop_and_resize', extrapolation_value=3.0), roi=fl(0.1, -0.2, 0.8, 1.2), sizes=i64(4, 6))
resize('rs_hps', 19, dict(mode='linear', coordinate_transformation_mode='half_pixel_symmetric'), scales=fl(1, 1, 0.7, 1.3))
resize('rs_hps_nearest', 19, dict(mode='nearest', coordinate_transformation_mode='half_pixel_symmetric'), scales=fl(1, 1, 0.7, 1.3))
resize('rs10_nearest_down', 10, dict(mode='nearest'), scales=fl(1, 1, 0.6, 0.5))
resize('rs10_nearest_up', 10, dict(mode='nearest'), scales=fl(1, 1, 1.7, 2.5))
resize('rs10_linear', 10, dict(mode='linear'), scales=fl(1, 1, 1.7, 0.5))
resize('rs11_tfnn', 11, dict(mode='nearest', coordinate_transformation_mode='tf_half_pixel_for_nn'), roi=fl(0, 0, 0, 0, 1, 1, 1, 1), scales=fl(1, 1, 0.7, 1.3))
resize('rs13_u8', 13, dict(mode='nearest', nearest_mode='floor'), scales=fl(1, 1, 2.5, 0.75), X=rng.integers(0, 255, (1, 2, 4, 4)).astype(np.uint8))
# Upsample
case('up7_linear', 'Upsample', 7, [('X', x)], dict(mode='linear', scales=[1.0, 1.0, 2.0, 1.5]))
case('up9_linear', 'Upsample', 9, [('X', x)], dict(mode='linear', _inputs=['X', 'scales']), consts=[('scales', fl(1, 1, 1.5, 3))])
# GridSample 20
for mode in ['linear', 'nearest', 'cubic']:
    for pad in ['zeros', 'border', 'reflection']:
        case('gs20_%s_%s' % (mode, pad), 'GridSample', 20, [('X', f32(2, 2, 4, 5)), ('G', (rng.standard_normal((2, 3, 6, 2)) * 1.3).astype(np.float32))], dict(mode=mode, padding_mode=pad, align_corners=1 if pad == 'border' else 0))
for mode in ['linear', 'nearest']:
    case('gs20_3d_%s' % mode, 'GridSample', 20, [('X', f32(1, 2, 3, 4, 5)), ('G', (rng.standard_normal((1, 2, 3, 4, 3)) * 1.2).astype(np.float32))], dict(mode=mode, padding_mode='reflection'))
# AffineGrid
for al in [0, 1]:
    case('ag2d_%d' % al, 'AffineGrid', 20, [('T', f32(2, 2, 3))], dict(align_corners=al, _inputs=['T', 'S']), consts=[('S', i64(2, 3, 4, 5))])
    case('ag3d_%d' % al, 'AffineGrid', 20, [('T', f32(2, 3, 4))], dict(align_corners=al, _inputs=['T', 'S']), consts=[('S', i64(2, 3, 2, 4, 5))])
# LpPool
case('lppool18', 'LpPool', 18, [('X', f32(1, 2, 9, 8))], dict(kernel_shape=[3, 2], p=3, strides=[2, 2], pads=[1, 0, 1, 1], dilations=[2, 1], ceil_mode=1))
case('lppool11_same', 'LpPool', 11, [('X', f32(1, 2, 7, 6))], dict(kernel_shape=[3, 3], p=2, strides=[2, 2], auto_pad='SAME_UPPER'))
case('globallppool', 'GlobalLpPool', 13, [('X', f32(2, 3, 4, 5))], dict(p=3))
# GroupNorm
case('gn18', 'GroupNormalization', 18, [('X', f32(2, 6, 3, 4)), ('S', f32(6)), ('B', f32(6))], dict(num_groups=6, epsilon=1e-3))
case('gn21', 'GroupNormalization', 21, [('X', f32(2, 6, 3, 4)), ('S', f32(6)), ('B', f32(6))], dict(num_groups=3, epsilon=1e-3))
# LpNormalization
case('lpnorm1', 'LpNormalization', 13, [('X', f32(3, 4, 5))], dict(p=1, axis=0))
case('lpnorm2', 'LpNormalization', 13, [('X', f32(3, 4, 5))], dict(p=2, axis=-1))
# RoiAlign
rois = fl(0.5, 1, 6.2, 5.5, 0, 0, 8, 8, 3, 2.5, 3.2, 2.6).reshape(3, 4)
bidx = i64(1, 0, 1)
case('roi16_max', 'RoiAlign', 16, [('X', f32(2, 3, 7, 8)), ('R', rois), ('I', bidx)], dict(mode='max', output_height=3, output_width=2, spatial_scale=0.75))
case('roi10_avg', 'RoiAlign', 10, [('X', f32(2, 3, 7, 8)), ('R', rois), ('I', bidx)], dict(output_height=2, output_width=3, sampling_ratio=2))
# Pools
case('maxpool_i8_dil', 'MaxPool', 12, [('X', rng.integers(-100, 100, (1, 2, 7, 8)).astype(np.int8))], dict(kernel_shape=[3, 2], dilations=[2, 2], strides=[1, 2], ceil_mode=1))
case('maxpool_idx_pads', 'MaxPool', 12, [('X', f32(2, 2, 7, 8))], dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]), nout=2, outtypes=[1, 7])
case('maxpool_idx_so', 'MaxPool', 12, [('X', f32(1, 2, 5, 6))], dict(kernel_shape=[2, 3], strides=[1, 2], storage_order=1), nout=2, outtypes=[1, 7])
case('avgpool19_dil', 'AveragePool', 19, [('X', f32(1, 2, 9, 8))], dict(kernel_shape=[3, 2], dilations=[2, 2], strides=[2, 1], pads=[1, 1, 1, 0], ceil_mode=1, count_include_pad=1))
case('avgpool_3d', 'AveragePool', 11, [('X', f32(1, 2, 5, 6, 4))], dict(kernel_shape=[2, 3, 2], strides=[2, 2, 1], auto_pad='SAME_LOWER'))
# BatchNorm training
case('bn_train', 'BatchNormalization', 15, [('X', f32(3, 4, 2, 5)), ('S', f32(4)), ('B', f32(4)), ('M', f32(4)), ('V', np.abs(f32(4)) + 0.5)], dict(training_mode=1, momentum=0.7, epsilon=1e-3), nout=3)
case('bn_train_f16', 'BatchNormalization', 15, [('X', f32(3, 4, 2, 5).astype(np.float16)), ('S', f32(4).astype(np.float16)), ('B', f32(4).astype(np.float16)), ('M', f32(4).astype(np.float16)), ('V', (np.abs(f32(4)) + 0.5).astype(np.float16))], dict(training_mode=1), nout=3)
# LayerNorm with stash outputs
case('ln_stash', 'LayerNormalization', 17, [('X', f32(2, 3, 4)), ('S', f32(3, 4)), ('B', f32(3, 4))], dict(axis=1, epsilon=1e-3), nout=3)
case('ln_f16', 'LayerNormalization', 17, [('X', f32(2, 3, 4).astype(np.float16)), ('S', f32(4).astype(np.float16))], dict(axis=-1), nout=1)
# Conv / ConvTranspose
case('conv1d_dil_group', 'Conv', 11, [('X', f32(2, 4, 11)), ('W', f32(6, 2, 3)), ('B', f32(6))], dict(group=2, dilations=[2], strides=[2], pads=[2, 1]))
case('conv3d', 'Conv', 11, [('X', f32(1, 2, 5, 6, 4)), ('W', f32(3, 2, 2, 3, 2))], dict(pads=[1, 0, 1, 0, 1, 1], strides=[1, 2, 1]))
case('convt_outshape', 'ConvTranspose', 11, [('X', f32(1, 2, 3, 4)), ('W', f32(2, 3, 3, 3))], dict(strides=[2, 3], output_shape=[8, 12]))
case('convt_same_lower_group', 'ConvTranspose', 11, [('X', f32(1, 4, 3, 4)), ('W', f32(4, 2, 3, 2))], dict(strides=[2, 2], group=2, auto_pad='SAME_LOWER', dilations=[1, 2]))
case('convt_1d_opad', 'ConvTranspose', 11, [('X', f32(2, 3, 5)), ('W', f32(3, 2, 4))], dict(strides=[3], output_padding=[2], pads=[1, 2]))
# MaxUnpool with pads
case('unpool_pads', 'MaxUnpool', 11, [('X', f32(1, 1, 2, 2)), ('I', i64(0, 4, 5, 8).reshape(1, 1, 2, 2))], dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 0, 0]))
# Instance norm / LRN / MVN
case('inorm_f16', 'InstanceNormalization', 6, [('X', f32(2, 3, 4, 5).astype(np.float16)), ('S', f32(3).astype(np.float16)), ('B', f32(3).astype(np.float16))], dict(epsilon=1e-3))
case('lrn_odd', 'LRN', 13, [('X', f32(2, 6, 3, 3))], dict(size=5, alpha=0.01, beta=0.6, bias=2.0))
case('mvn_axes', 'MeanVarianceNormalization', 13, [('X', f32(2, 3, 4, 5))], dict(axes=[1, 3]))
# NMS with score threshold + center box (constant inputs)
case('nms_score', 'NonMaxSuppression', 11, [], dict(center_point_box=1, _inputs=['B', 'S', 'M', 'T', 'U']), consts=[('B', np.abs(f32(2, 8, 4)) * 3), ('S', rng.random((2, 3, 8)).astype(np.float32)), ('M', i64(3)), ('T', fl(0.2)), ('U', fl(0.3))], outtypes=[7])

case('ln_f16_stash', 'LayerNormalization', 17, [('X', f32(2, 3, 4).astype(np.float16)), ('S', f32(3, 4).astype(np.float16)), ('B', f32(3, 4).astype(np.float16))], dict(axis=-2), nout=3, outtypes=[10, 1, 1])
case('gn18_per_group', 'GroupNormalization', 18, [('X', f32(2, 6, 3, 4)), ('S', f32(3)), ('B', f32(3))], dict(num_groups=3, epsilon=1e-3))
case('bn15_mixed', 'BatchNormalization', 15, [('X', f32(2, 3, 4).astype(np.float16)), ('S', f32(3)), ('B', f32(3)), ('M', f32(3)), ('V', np.abs(f32(3)) + 0.5)], dict(epsilon=1e-3))
case('bn15_mixed_train', 'BatchNormalization', 15, [('X', f32(2, 3, 4).astype(np.float16)), ('S', f32(3).astype(np.float16)), ('B', f32(3).astype(np.float16)), ('M', f32(3)), ('V', np.abs(f32(3)) + 0.5)], dict(training_mode=1), nout=3, outtypes=[10, 1, 1])
print('ok')
