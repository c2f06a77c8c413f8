/**
 * The local model on a worker of its own (decision 0036), both sides: the store's side
 * tokenizes (to cut chunks) and posts texts; the worker runs the model. A model run holds the
 * thread that calls it (~27 ms per 200-token text here, Node and browser alike), which on the
 * store's thread would stall every put and request while background embedding runs. The
 * worker starts on first use and goes after IDLE_MS idle; Node and the browser supply how a
 * worker is started (EmbedPort).
 */
import { KuraError } from '@kura/core';
import { ModelUnavailableError } from '../errors.js';
import type { Embedder } from './embedder.js';
import { MINILM, type MiniLmTokenizer } from './minilm.js';

const IDLE_MS = 30_000;

export interface EmbedRequest {
  id: number;
  texts: string[];
}

export type EmbedReply = { id: number; vectors: Float32Array[] } | { id: number; failed: { code?: string; message: string } };

/** What the store's side hears from a worker. */
export interface EmbedPortEvents {
  reply(m: EmbedReply): void;
  /** The worker ended or failed: every waiting request fails. */
  ended(cause: unknown): void;
}

/** A started worker, as the platform gives it. */
export interface EmbedPort {
  post(request: EmbedRequest): void;
  /** Whether requests wait (Node: keep the process alive only then). */
  hold(waiting: boolean): void;
  terminate(): Promise<void>;
}

export class RemoteEmbedder implements Embedder {
  readonly model = MINILM.model;
  readonly latinOnly = true;
  readonly dims = MINILM.dims;
  readonly maxTokens = MINILM.maxTokens - 2;
  #port: EmbedPort | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #next = 1;
  readonly #waiting = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: unknown) => void }>();

  constructor(
    readonly tokenizer: MiniLmTokenizer,
    readonly start: (events: EmbedPortEvents) => EmbedPort,
  ) {}

  countTokens(text: string): number {
    return this.tokenizer.countTokens(text);
  }

  #started(): EmbedPort {
    if (this.#port) return this.#port;
    const port = this.start({
      reply: (m) => {
        const w = this.#waiting.get(m.id);
        if (!w) return;
        this.#waiting.delete(m.id);
        if ('vectors' in m) w.resolve(m.vectors);
        else w.reject(m.failed.code === 'MODEL_UNAVAILABLE' ? new ModelUnavailableError(m.failed.message, MINILM.model) : new KuraError('INTERNAL', m.failed.message));
        this.#settle();
      },
      ended: (cause) => {
        if (this.#port === port) this.#port = undefined;
        for (const w of this.#waiting.values()) w.reject(new ModelUnavailableError(`the embedding worker ended: ${(cause as Error)?.message ?? cause}`, MINILM.model));
        this.#waiting.clear();
      },
    });
    return (this.#port = port);
  }

  /** An idle worker holds nothing, and goes after IDLE_MS. */
  #settle(): void {
    if (this.#waiting.size > 0 || !this.#port) return;
    this.#port.hold(false);
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => void this.close(), IDLE_MS);
    (this.#idle as { unref?: () => void }).unref?.();
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    clearTimeout(this.#idle);
    const port = this.#started();
    port.hold(true);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      port.post({ id, texts: [...texts] });
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.#idle);
    const port = this.#port;
    this.#port = undefined;
    await port?.terminate();
  }
}

/**
 * The worker's side: answers each request with `model`'s vectors (their buffers transferred),
 * or with why it failed — a model that did not load fails every request with its reason.
 */
export function answerEmbedRequests(model: Promise<Embedder>, send: (reply: EmbedReply, transfer: ArrayBuffer[]) => void): (request: EmbedRequest) => void {
  model.catch(() => undefined); // reported with the first request
  return (m) => {
    model
      .then((e) => e.embed(m.texts))
      .then(
        (vectors) => send({ id: m.id, vectors }, vectors.map((v) => v.buffer as ArrayBuffer)),
        (e: unknown) => {
          const err = e as { code?: unknown; message?: unknown };
          send({ id: m.id, failed: { ...(typeof err?.code === 'string' ? { code: err.code } : {}), message: String(err?.message ?? e) } }, []);
        },
      );
  };
}
