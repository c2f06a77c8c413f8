/**
 * Grouped compression (decision 0063, FORMAT.md §6.2): the new chunks of one put (or of a
 * worker's batch of small documents) are compressed together, in runs of at least GROUP_TARGET
 * raw bytes, into one zstd frame each — so a frame sees ~1 MiB of context (restic's blob size)
 * instead of one ~16 KiB chunk — while every chunk keeps its own key and is deduplicated alone.
 *
 * The grouper takes chunks raw, in document order, and gives them back in the same order once
 * their group is closed: a chunk the store is known to hold stays raw and alone (the store
 * shares it); a group of one is compressed alone (a chunk record); a group whose frame would
 * not save 1/16 leaves its members raw and alone (`encodeChunk`'s policy, applied to the run).
 * A group's bytes gather in wasm memory (GroupBuffer); a worker's kernel hands its chunks over
 * there without copying them out (`push(chunks, from)`).
 */
import { CODEC_RAW, CODEC_ZSTD, GroupBuffer, type DeferredChunk, type IngestChunk, type Ingester } from '@kura/core';
import { GROUP_TARGET } from '../bytes/pack-record.js';

/** One zstd frame holding the raw bytes of its members, in order. */
export interface ChunkGroup {
  frame: Uint8Array;
  /** The members' raw bytes in all (the frame's content size). */
  rawLen: number;
  members: { key: string; length: number }[];
}

/**
 * A chunk of a put's stream. A member of a group has `group` and `at` (where its bytes start in
 * the group's raw bytes) and an empty payload: the group's frame holds its bytes.
 */
export interface StreamChunk extends IngestChunk {
  group?: ChunkGroup;
  at?: number;
}

const EMPTY = new Uint8Array(0);
/** Bytes held back for an open group at most, in targets: its members and the known chunks among them. */
const HELD_MAX = 4;

export class ChunkGrouper {
  /** Chunks held back since the open group's first member (known chunks among them), in order. */
  #held: StreamChunk[] = [];
  /** Bytes of the chunks held (members and the known chunks between them). */
  #heldBytes = 0;
  #members: IngestChunk[] = [];
  #raw = 0;
  /** The open group's bytes, in wasm memory (made at the first member). */
  #bytes: GroupBuffer | undefined;
  /**
   * Keys made members (of the open group, or of every group so far when `remember`): a chunk
   * seen again stays raw and alone, and its put shares the first.
   */
  readonly #grouped = new Set<string>();

  /**
   * `known`: whether the store is known to hold a chunk (a wrong "no" costs a wasted
   * compression). `remember`: keep every member's key for the whole stream — a worker's, whose
   * `known` cannot see the put's own chunks; on the store's thread `known` asks the puts in
   * progress, which hold every member of a closed group (a 2 GiB stream's keys, ~16 MB, kept
   * once, not twice).
   */
  constructor(
    readonly level: number,
    readonly known?: (key: string) => boolean,
    readonly remember = true,
    readonly target = GROUP_TARGET,
  ) {}

  /**
   * Takes raw chunks (codec raw); answers those whose place in a group is settled, in order.
   * The chunks themselves are changed (a member gets its group), so a caller that keeps its
   * own lists of them (a batch of documents) may ignore the answer and read them after `finish`.
   * `from`: the chunks are `from`'s deferred chunks of its last call, whose bytes are still in
   * its wasm memory (a member's go straight into the group; the others' are copied out here).
   */
  push(chunks: readonly IngestChunk[], from?: Ingester): StreamChunk[] {
    const out: StreamChunk[] = [];
    for (const c of chunks) {
      if (this.#grouped.has(c.key) || this.known?.(c.key)) {
        if (from) c.payload = from.payloadOf((c as DeferredChunk).record);
        // Sent raw; the store has it (or keeps it raw: known-chunks.ts).
        if (!this.#members.length) {
          out.push(c);
          continue;
        }
        this.#held.push(c);
        // Known chunks after a member wait for its group, which they do not fill: a run of
        // repeats (a disk image's zeros: one chunk, again and again) held the whole stream
        // (1 GiB of zeros, 1.2 GB of memory). Past HELD_MAX the open group closes smaller.
        if ((this.#heldBytes += c.length) >= HELD_MAX * this.target) this.#close(out);
        continue;
      }
      this.#held.push(c);
      this.#heldBytes += c.length;
      const bytes = (this.#bytes ??= new GroupBuffer());
      if (from) from.groupRecord(bytes, (c as DeferredChunk).record);
      else bytes.add(c.payload);
      c.payload = EMPTY; // (the group's bytes hold it now)
      this.#members.push(c);
      this.#grouped.add(c.key);
      this.#raw += c.length;
      if (this.#raw >= this.target) this.#close(out);
    }
    return out;
  }

  /** The document ended: the open group closes. */
  finish(): StreamChunk[] {
    const out: StreamChunk[] = [];
    this.#close(out);
    return out;
  }

  /** Frees the group's wasm memory (the grouper is done with, finished or not). */
  dispose(): void {
    this.#bytes?.dispose();
    this.#bytes = undefined;
  }

  #close(out: StreamChunk[]): void {
    const members = this.#members;
    const bytes = this.#bytes;
    const frame = members.length ? bytes!.compress(this.level) : undefined;
    if (members.length === 1) {
      // A chunk record, as encodeChunk would store it.
      const m = members[0]!;
      m.codec = frame ? CODEC_ZSTD : CODEC_RAW;
      m.payload = frame ?? bytes!.slice(0, m.length);
    } else if (members.length > 1) {
      let at = 0;
      if (frame) {
        const group: ChunkGroup = { frame, rawLen: this.#raw, members: members.map((m) => ({ key: m.key, length: m.length })) };
        for (const m of members as StreamChunk[]) {
          m.group = group;
          m.at = at;
          m.codec = CODEC_RAW;
          at += m.length;
        }
      } else {
        // Not worth a frame: each member raw and alone, its bytes (an array of its own: the
        // workers transfer each payload's buffer) from the group's.
        for (const m of members) {
          m.payload = bytes!.slice(at, m.length);
          at += m.length;
        }
      }
    }
    bytes?.clear();
    for (const c of this.#held) out.push(c);
    this.#held = [];
    this.#heldBytes = 0;
    this.#members = [];
    this.#raw = 0;
    if (!this.remember) this.#grouped.clear();
  }
}

/** The chunk stream of a put with its new chunks grouped (the store's thread; workers group in serve.ts). */
export async function* groupedStream<R>(raw: AsyncGenerator<IngestChunk, R, undefined>, level: number, known: (key: string) => boolean): AsyncGenerator<StreamChunk, R, undefined> {
  // (Each closed group is placed before the next chunk comes: `known` finds its members pending.)
  const grouper = new ChunkGrouper(level, known, false);
  try {
    for (let step = await raw.next(); ; step = await raw.next()) {
      if (step.done) {
        yield* grouper.finish();
        return step.value;
      }
      yield* grouper.push([step.value]);
    }
  } finally {
    grouper.dispose();
    await raw.return?.(undefined as never);
  }
}

/** Distinct groups of the chunks, for a message's transfer list. */
export function groupFrames(chunks: readonly StreamChunk[]): ArrayBuffer[] {
  const seen = new Set<ChunkGroup>();
  for (const c of chunks) if (c.group) seen.add(c.group);
  return [...seen].map((g) => g.frame.buffer as ArrayBuffer);
}
