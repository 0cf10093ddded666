const ort = require('/tmp/ort/node_modules/onnxruntime-node');
const fs = require('fs'), path = require('path');
const root = process.env.NN_ORT_DIR || '/tmp/nncheck/cases';
// inputs are given as .npy-like raw dumps prepared by prep.py: inputs.json
(async () => {
  for (const d of fs.readdirSync(root)) {
    const dir = path.join(root, d);
    const spec = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json')));
    try {
      const sess = await ort.InferenceSession.create(path.join(dir, 'model.onnx'));
      const feeds = {};
      for (const s of spec) {
        const buf = fs.readFileSync(path.join(dir, s.file));
        const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
        const ctor = {float32: Float32Array, float16: Uint16Array, int64: BigInt64Array, int8: Int8Array, uint8: Uint8Array, float64: Float64Array}[s.type];
        feeds[s.name] = new ort.Tensor(s.type, new ctor(ab), s.dims);
      }
      const out = await sess.run(feeds);
      const res = [];
      for (const name of sess.outputNames) {
        const t = out[name];
        const f = 'ort_' + name + '.bin';
        fs.writeFileSync(path.join(dir, f), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
        res.push({name, type: t.type, dims: t.dims, file: f});
      }
      fs.writeFileSync(path.join(dir, 'ort.json'), JSON.stringify(res));
    } catch (e) {
      console.log(d, 'ORT error:', e.message.split('\n')[0]);
    }
  }
})();
