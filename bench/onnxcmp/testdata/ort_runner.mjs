// ONNX Runtime side of BenchmarkVsORT (ort_test.go): a line-oriented JSON
// server on stdin/stdout that loads one model at a time into
// onnxruntime-node with one intra-op (or "threads") and one inter-op thread (sequential
// execution, default graph optimizations) and times runs with
// process.hrtime. A development tool only: the Go module never needs Node.
//
//   {"op":"load","model":PATH,"inputs":[{"name":N,"file":NPY},...],"threads":T} -> {"ok":true,"version":V}
//   {"op":"run","n":K}                                              -> {"ns":[...]}
//   {"op":"outputs","dir":DIR}                                      -> {"files":[...]} (output i as DIR/i.npy)
//
// The node_modules directory holding onnxruntime-node comes from argv[2].
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';

const require = createRequire(path.join(process.argv[2], 'noop.js'));
const ort = require('onnxruntime-node');

const types = {
  '<f4': ['float32', Float32Array], '<f2': ['float16', Uint16Array], '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array],
  '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array],
};
const descrOf = Object.fromEntries(Object.entries(types).map(([d, [t]]) => [t, d]));

function readNpy(file) {
  const b = fs.readFileSync(file);
  const hlen = b.readUInt16LE(8);
  const header = b.toString('latin1', 10, 10 + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const t = types[descr];
  if (!t) throw new Error(`${file}: dtype ${descr}`);
  const data = b.buffer.slice(b.byteOffset + 10 + hlen, b.byteOffset + b.length);
  return new ort.Tensor(t[0], new t[1](data), shape);
}

function writeNpy(file, t) {
  const descr = descrOf[t.type];
  if (!descr) throw new Error(`output type ${t.type}`);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre.writeUInt16LE(header.length, 8);
  const d = t.data;
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(d.buffer, d.byteOffset, d.byteLength)]));
}

let session = null, feeds = null;
const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3 };

async function handle(cmd) {
  switch (cmd.op) {
    case 'load': {
      if (session) await session.release();
      session = null;
      feeds = {};
      for (const i of cmd.inputs) feeds[i.name] = readNpy(i.file);
      session = await ort.InferenceSession.create(cmd.model, { ...opts, intraOpNumThreads: cmd.threads ?? 1 });
      await session.run(feeds);
      return { ok: true, version: ort.env.versions.node ?? ort.env.versions.common };
    }
    case 'run': {
      const ns = [];
      for (let k = 0; k < cmd.n; k++) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        ns.push(Number(process.hrtime.bigint() - t0));
      }
      return { ns };
    }
    case 'outputs': {
      const r = await session.run(feeds);
      const files = session.outputNames.map((n, i) => {
        const f = path.join(cmd.dir, `${i}.npy`);
        writeNpy(f, r[n]);
        return f;
      });
      return { files };
    }
  }
  throw new Error(`unknown op ${cmd.op}`);
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  let reply;
  try {
    reply = await handle(JSON.parse(line));
  } catch (e) {
    reply = { error: String(e && e.message || e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
