import onnx, numpy as np, os, json, glob, sys
from onnx import numpy_helper
root = os.environ.get('NN_ORT_DIR', '/tmp/nncheck/cases')
mode = sys.argv[1]
for d in sorted(glob.glob(root + '/*')):
    if mode == 'in':
        spec = []
        for f in sorted(glob.glob(d + '/test_data_set_0/input_*.pb')):
            t = onnx.TensorProto(); t.ParseFromString(open(f, 'rb').read())
            a = numpy_helper.to_array(t)
            fn = os.path.basename(f) + '.bin'
            open(os.path.join(d, fn), 'wb').write(a.tobytes())
            spec.append(dict(name=t.name, type=str(a.dtype), dims=list(a.shape), file=fn))
        json.dump(spec, open(d + '/inputs.json', 'w'))
    else:
        if not os.path.exists(d + '/ort.json'):
            continue
        for i, o in enumerate(json.load(open(d + '/ort.json'))):
            a = np.frombuffer(open(os.path.join(d, o['file']), 'rb').read(), dtype={'float32': np.float32, 'float16': np.float16, 'int64': np.int64, 'int8': np.int8, 'uint8': np.uint8, 'float64': np.float64}[o['type']]).reshape(o['dims'])
            open(os.path.join(d, 'test_data_set_0', 'output_%d.pb' % i), 'wb').write(numpy_helper.from_array(a, o['name']).SerializeToString())
