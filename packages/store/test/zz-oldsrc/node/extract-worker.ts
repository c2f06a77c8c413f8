/** The thread node/extract-away.ts extracts on: one document per message, answered with its text. */
import { parentPort } from 'node:worker_threads';
import type { ExtractCaps } from '../extract/caps.js';
import { extractText } from '../extract/extract.js';
import type { ExtractKind } from '../extract/kind.js';

parentPort!.on('message', (m: { kind: ExtractKind; bytes: Uint8Array; caps: ExtractCaps }) => {
  void extractText(m.kind, m.bytes, m.caps).then((r) => parentPort!.postMessage(r));
});
