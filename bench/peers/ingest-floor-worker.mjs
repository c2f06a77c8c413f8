/**
 * A worker of the ingest floor (ingest-floor.mjs): reads each file of a batch whole, runs
 * Kura's ingest kernel over it (chunk boundaries, BLAKE3 chunk keys, zstd frames, the document's SHA-256 by
 * node:crypto, as the store's workers do) and answers with one packed buffer:
 * u32 count, then per file: 64 hex digest, f64 size, u32 chunks, and per chunk 64 hex key,
 * u32 length, u8 codec, u32 payload length, the payload.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Ingester } from '@kura/core';

const { level } = workerData;

function readWhole(path) {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

parentPort.on('message', ({ id, paths }) => {
  const files = [];
  let total = 4;
  for (const path of paths) {
    const ingester = new Ingester({ compression: level });
    const chunks = [...ingester.update(readWhole(path)), ...ingester.finish()];
    files.push({ result: ingester.result, chunks });
    ingester.dispose();
    total += 76;
    for (const c of chunks) total += 73 + c.payload.length;
  }
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, files.length, true);
  let at = 4;
  const ascii = (s, from) => {
    for (let i = 0; i < 64; i++) out[at + i] = s.charCodeAt(from + i);
  };
  for (const { result, chunks } of files) {
    ascii(result.digest, 7);
    dv.setFloat64(at + 64, result.size, true);
    dv.setUint32(at + 72, chunks.length, true);
    at += 76;
    for (const c of chunks) {
      ascii(c.key, 0);
      dv.setUint32(at + 64, c.length, true);
      out[at + 68] = c.codec;
      dv.setUint32(at + 69, c.payload.length, true);
      out.set(c.payload, at + 73);
      at += 73 + c.payload.length;
    }
  }
  parentPort.postMessage({ id, packed: out.buffer }, [out.buffer]);
});
