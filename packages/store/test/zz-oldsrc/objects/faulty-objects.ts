/**
 * An object store that fails on purpose (kopia's blobtesting/faulty.go is the model): each
 * fault names an operation (and optionally keys) and fails it before the inner store runs it
 * (nothing happened) or after (it happened, and its answer was lost: what a reset connection or
 * a timeout does to a write that reached the server). For tests of everything above the
 * ObjectStore contract: nothing acknowledged may be lost, and a retried conditional write must
 * recognise its own success.
 */
import { StorageUnreachableError } from '../errors.js';
import type { ObjectStore } from './object-store.js';
import { ForwardingObjectStore, type ObjectOp } from './forwarding-objects.js';

export type { ObjectOp };

export interface Fault {
  op: ObjectOp | '*';
  /** Only keys (or list prefixes) it matches; all when not given. */
  key?: RegExp;
  /** Before: the call fails and nothing happens. After: it happens, then fails. */
  when: 'before' | 'after';
  /** How many calls it fails (then it is spent); 1 when not given. */
  times?: number;
  /** The error thrown; STORAGE_UNREACHABLE when not given. */
  error?: () => Error;
}

export class FaultyObjectStore extends ForwardingObjectStore {
  readonly #faults: (Fault & { left: number })[] = [];
  /** Faults that fired, in order (op, key, when). */
  readonly fired: { op: ObjectOp; key: string; when: 'before' | 'after' }[] = [];

  constructor(
    inner: ObjectStore,
    faults: readonly Fault[] = [],
    /** Asked on every call the listed faults spare: a random workload's faults. */
    private readonly chance?: (op: ObjectOp, key: string) => 'before' | 'after' | undefined,
  ) {
    super(inner);
    faults.forEach((f) => this.add(f));
  }

  add(fault: Fault): void {
    this.#faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /** Faults not yet spent. */
  get pending(): number {
    return this.#faults.filter((f) => f.left > 0).length;
  }

  protected async run<T>(op: ObjectOp, key: string, fn: () => Promise<T>): Promise<T> {
    const fault = this.#faults.find((f) => f.left > 0 && (f.op === '*' || f.op === op) && (!f.key || f.key.test(key)));
    let when: 'before' | 'after' | undefined;
    let error: Error | undefined;
    if (fault) {
      fault.left--;
      when = fault.when;
      error = fault.error?.();
    } else {
      when = this.chance?.(op, key);
    }
    if (when === undefined) return fn();
    this.fired.push({ op, key, when });
    const failure = error ?? new StorageUnreachableError(`injected fault: ${op} ${key} failed ${when === 'before' ? 'before it was sent' : 'after it happened (its answer was lost)'}`);
    if (when === 'after') await fn();
    throw failure;
  }
}
