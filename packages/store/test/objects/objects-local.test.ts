/** The ObjectStore contract held against the in-memory store and a local directory. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryObjectStore } from '../../src/objects/memory-objects.js';
import { DirectoryObjectStore } from '../../src/node/dir-objects.js';
import { objectStoreConformance } from './conformance.js';

objectStoreConformance('memory', async () => ({ store: new MemoryObjectStore(), cleanup: async () => undefined }));

objectStoreConformance('local directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kura-objects-'));
  return { store: new DirectoryObjectStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});
