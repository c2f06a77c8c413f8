/**
 * The check a store makes before it trusts an object store with its log (decision 0039): the
 * log's order rests on conditional creates (If-None-Match: *), and servers that ignore the
 * header (s3proxy 2.6, some gateways: SCALEOUT.md) would let two writers both take one commit's
 * number and lose one of them silently. So: create a key, create it again with other bytes,
 * and refuse the store unless the second create was refused and the first bytes are still there.
 */
import { StorageUnavailableError } from '../errors.js';
import { randomHex } from '../hex.js';
import { ForwardingObjectStore, type ObjectOp } from './forwarding-objects.js';
import { sameBytes, type ObjectStore } from './object-store.js';

/** Where the probe's object goes (FORMAT.md's layout keeps the name free). */
export const PROBE_PREFIX = 'probe/';

export async function requireConditionalCreate(store: ObjectStore): Promise<void> {
  const nonce = randomHex(16);
  const key = `${PROBE_PREFIX}${nonce}`;
  const encoder = new TextEncoder();
  const first = encoder.encode(`kura conditional-create probe ${nonce} first`);
  const second = encoder.encode(`kura conditional-create probe ${nonce} second`);
  const refuse = (what: string) =>
    new StorageUnavailableError(
      `${store.location} does not enforce conditional creates (If-None-Match: *): ${what}. Kura orders its commits with them, so it cannot keep a store there safely (AWS S3, versitygw and MinIO enforce them)`,
    );
  if (!(await store.create(key, first))) throw refuse('a create of a fresh key was refused');
  try {
    if (await store.create(key, second)) throw refuse('a second create of one key succeeded');
    if (!sameBytes(await store.get(key), first)) throw refuse('a refused create replaced the object all the same');
  } finally {
    await store.delete(key);
  }
}

/** What a store may do before the probe has answered: nothing that writes. */
const READS: ReadonlySet<ObjectOp> = new Set(['get', 'head', 'list']);

/**
 * An object store whose writes wait for the probe (decision 0040's amendment of 2026-11-27): an
 * open reads the configuration and the log while the probe's four requests are on their way —
 * one chain of round trips instead of two, one after the other — and nothing is written before
 * the probe has passed; when it refuses the store, every write fails with its error.
 */
export class ProbedObjectStore extends ForwardingObjectStore {
  #passed = false;

  constructor(
    inner: ObjectStore,
    /** The probe (requireConditionalCreate on `inner`), started by the caller. */
    readonly probed: Promise<void>,
  ) {
    super(inner);
    probed.then(
      () => (this.#passed = true),
      () => undefined, // (the open awaits `probed` and fails with its error)
    );
  }

  protected run<T>(op: ObjectOp, _key: string, call: () => Promise<T>): Promise<T> {
    return this.#passed || READS.has(op) ? call() : this.probed.then(call);
  }
}
