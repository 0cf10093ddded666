// Writes the corpus's expected outputs with ONNX Runtime (onnxruntime-node).
//
//   NODE_PATH=/tmp/ort/node_modules node ge/onnx/testdata/corpus/ref.mjs
//
// A development tool only: `go test` reads the .npy files this writes and
// never runs Node. For every model of manifest.json and every input set it
// creates an InferenceSession (which validates the model: ORT refuses a
// model its checker or type inference rejects), runs it with one intra-op
// and one inter-op thread and graph optimizations disabled (so the
// reference computes exactly the nodes written, no fusions), and writes
// expected/setK/<output>.npy. As a cross-check it also runs every set with
// all graph optimizations and fails if the two disagree beyond the model's
// tolerance. It then records the runtime and its version in the manifest.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const modulesDir = process.env.ORT_NODE_MODULES || process.env.NODE_PATH || '/tmp/ort/node_modules';
const require = createRequire(path.join(modulesDir.split(path.delimiter)[0], 'noop.js'));
const ort = require('onnxruntime-node');

// .npy dtype descriptors ↔ ORT tensor types and typed arrays.
const types = {
  float32: { descr: '<f4', array: Float32Array },
  float16: { descr: '<f2', array: Uint16Array },
  int64: { descr: '<i8', array: BigInt64Array },
  int32: { descr: '<i4', array: Int32Array },
  bool: { descr: '|b1', array: Uint8Array },
};
const byDescr = Object.fromEntries(Object.entries(types).map(([k, v]) => [v.descr, k]));

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const type = byDescr[descr];
  if (!type) throw new Error(`${file}: dtype ${descr} is not in the corpus's set`);
  const off = start + hlen;
  const data = b.buffer.slice(b.byteOffset + off, b.byteOffset + b.length);
  return new ort.Tensor(type, new types[type].array(data), shape);
}

function writeNpy(file, t) {
  const ty = types[t.type];
  if (!ty) throw new Error(`${file}: output type ${t.type} is not in the corpus's set`);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${ty.descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const d = t.data;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(d.buffer, d.byteOffset, d.byteLength)]));
}

function toNumber(v, type) {
  if (type === 'float16') {
    const s = v >> 15, e = (v >> 10) & 31, f = v & 1023;
    const m = e === 0 ? f / 1024 * 2 ** -14 : e === 31 ? (f ? NaN : Infinity) : (1 + f / 1024) * 2 ** (e - 15);
    return s ? -m : m;
  }
  return Number(v);
}

// maxViolation returns the largest (|a-b| - atol - rtol|b|) over elements, ≤ 0 when they agree.
function maxViolation(a, b, tol) {
  let worst = -Infinity;
  for (let i = 0; i < b.data.length; i++) {
    const x = toNumber(a.data[i], a.type), y = toNumber(b.data[i], b.type);
    if (Number.isNaN(x) && Number.isNaN(y)) continue;
    if (x === y) { worst = Math.max(worst, -tol.atol); continue; }
    worst = Math.max(worst, Math.abs(x - y) - tol.atol - tol.rtol * Math.abs(y));
  }
  return worst;
}

const manifestPath = path.join(here, 'manifest.json');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
const base = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3 };
let failures = 0;
for (const m of manifest.models) {
  const modelPath = path.join(here, m.model);
  const dir = path.dirname(modelPath);
  fs.rmSync(path.join(dir, 'expected'), { recursive: true, force: true });
  let plain, opt;
  try {
    plain = await ort.InferenceSession.create(modelPath, { ...base, graphOptimizationLevel: 'disabled' });
    opt = await ort.InferenceSession.create(modelPath, { ...base, graphOptimizationLevel: 'all' });
  } catch (e) {
    console.error(`${m.name}: ORT refused the model: ${e.message}`);
    failures++;
    continue;
  }
  const names = m.outputs.map(o => o.name);
  for (const s of m.sets) {
    const feeds = {};
    for (const i of m.inputs) feeds[i.name] = readNpy(path.join(dir, 'inputs', s.name, i.file));
    let r, ro;
    try {
      r = await plain.run(feeds, names);
      ro = await opt.run(feeds, names);
    } catch (e) {
      console.error(`${m.name}/${s.name}: ORT run failed: ${e.message}`);
      failures++;
      continue;
    }
    const shapes = {};
    for (const o of m.outputs) {
      const t = r[o.name];
      if (t.type !== o.dtype) {
        console.error(`${m.name}/${s.name}: output ${o.name} is ${t.type}, the manifest says ${o.dtype}`);
        failures++;
      }
      const v = maxViolation(ro[o.name], t, m.tolerance);
      if (v > 0) {
        console.error(`${m.name}/${s.name}: output ${o.name}: optimized and unoptimized ORT differ by ${v} beyond tolerance`);
        failures++;
      }
      writeNpy(path.join(dir, 'expected', s.name, o.file), t);
      shapes[o.name] = t.dims;
    }
    s.output_shapes = shapes;
    console.log(`${m.name}/${s.name}: ${JSON.stringify(shapes)}`);
  }
  await plain.release();
  await opt.release();
}
manifest.reference = {
  runtime: 'onnxruntime-node',
  version: ort.env.versions.node ?? ort.env.versions.common,
  graph_optimization: 'disabled (cross-checked against all)',
  intra_op_threads: 1,
};
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
if (failures) {
  console.error(`${failures} failures`);
  process.exit(1);
}
console.log(`${manifest.models.length} models: expected outputs written`);
