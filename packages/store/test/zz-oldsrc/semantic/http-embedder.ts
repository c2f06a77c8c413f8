/**
 * An embedder behind an OpenAI-compatible HTTP endpoint (decision 0036): `POST {url}/embeddings`
 * with `{"model", "input": [texts]}`, answered by `{"data": [{"index", "embedding"}]}` — OpenAI,
 * Azure OpenAI, Ollama, llama.cpp's server, vLLM, LocalAI and others speak it. Answers are
 * checked (count, dimensions, finite numbers) and normalised; overload (429, 5xx), timeouts and
 * lost connections are retried a few times; anything else is MODEL_UNAVAILABLE with the
 * endpoint's own reason. The key is sent as a bearer token and never appears in an error.
 */
import { z } from 'zod';
import { ModelUnavailableError } from '../errors.js';
import { normalize, type Embedder } from './embedder.js';

export interface HttpEmbedderOptions {
  /** The API's base URL (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`); `/embeddings` is appended. */
  url: string;
  /** The endpoint's model name (`text-embedding-3-small`, `nomic-embed-text`). */
  model: string;
  apiKey?: string | undefined;
  /** Texts per request at most (default 32). */
  batch?: number;
  /** Milliseconds a request may take (default 30,000). */
  timeoutMs?: number;
  /** Further tries after overload, a timeout or a lost connection (default 3). */
  retries?: number;
  /** The most tokens one text may have (default 8,191, OpenAI's limit). */
  maxTokens?: number;
}

const Answer = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative().optional(), embedding: z.array(z.number()) })),
});

/** Retry-After (seconds) honoured up to this; beyond it the try counts as failed. */
const RETRY_AFTER_MAX_MS = 10_000;

/** A failure worth another try: overload, a timeout, a lost connection. */
class Transient extends Error {
  constructor(
    message: string,
    readonly waitMs?: number,
  ) {
    super(message);
  }
}

class HttpEmbedder implements Embedder {
  readonly maxTokens: number;
  readonly #endpoint: string;
  readonly #where: string;
  /** Learnt from the first answer (loadHttpEmbedder asks one before anything reads it). */
  #dims = 0;

  constructor(readonly options: HttpEmbedderOptions) {
    this.maxTokens = options.maxTokens ?? 8191;
    this.#endpoint = `${options.url.replace(/\/+$/, '')}/embeddings`;
    const u = new URL(this.#endpoint);
    this.#where = `${u.protocol}//${u.host}${u.pathname}`; // never user:password@
  }

  get dims(): number {
    return this.#dims;
  }

  /** The endpoint's model and its dimensions: vectors of another are never compared with these. */
  get model(): string {
    return `openai-compatible:${this.options.model}:${this.#dims}`;
  }

  /**
   * Without the endpoint's tokenizer: about four characters a token (OpenAI's rule of thumb for
   * English), so chunks come out near the intended size; the endpoint truncates what is over.
   */
  countTokens(text: string): number {
    return Math.ceil(text.length / 4);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    const batch = this.options.batch ?? 32;
    for (let i = 0; i < texts.length; i += batch) out.push(...(await this.#request(texts.slice(i, i + batch))));
    return out;
  }

  async close(): Promise<void> {}

  async #request(texts: readonly string[]): Promise<Float32Array[]> {
    const retries = this.options.retries ?? 3;
    for (let attempt = 0; ; attempt++) {
      try {
        return this.#vectors(await this.#post(texts), texts.length);
      } catch (e) {
        if (!(e instanceof Transient)) throw e;
        if (attempt >= retries) throw new ModelUnavailableError(`the embedding endpoint ${this.#where} failed ${attempt + 1} times: ${e.message}`, this.model);
        await new Promise((r) => setTimeout(r, e.waitMs ?? 250 * 2 ** attempt));
      }
    }
  }

  async #post(texts: readonly string[]): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(this.#endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.options.model, input: texts }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      throw new Transient(err.name === 'TimeoutError' ? 'no answer in time' : `${err.cause?.code ?? err.message}`);
    }
    const body = await res.text().catch(() => '');
    if (res.status === 429 || res.status >= 500) {
      const after = Number(res.headers.get('retry-after'));
      throw new Transient(`HTTP ${res.status}${reason(body)}`, Number.isFinite(after) && after >= 0 && after * 1000 <= RETRY_AFTER_MAX_MS ? after * 1000 : undefined);
    }
    if (!res.ok) throw new ModelUnavailableError(`the embedding endpoint ${this.#where} refused: HTTP ${res.status}${reason(body)}`, this.model);
    try {
      return JSON.parse(body) as unknown;
    } catch {
      throw new ModelUnavailableError(`the embedding endpoint ${this.#where} answered with something that is not JSON: ${JSON.stringify(body.slice(0, 80))}`, this.model);
    }
  }

  #vectors(json: unknown, count: number): Float32Array[] {
    const bad = (why: string) => new ModelUnavailableError(`the embedding endpoint ${this.#where} answered wrongly: ${why}`, this.model);
    const parsed = Answer.safeParse(json);
    if (!parsed.success) throw bad('not {"data": [{"embedding": [numbers]}]}');
    const data = parsed.data.data;
    if (data.length !== count) throw bad(`${data.length} vectors for ${count} texts`);
    const ordered = data.every((d) => d.index !== undefined) ? [...data].sort((a, b) => a.index! - b.index!) : data;
    if (this.#dims === 0 && ordered[0]) this.#dims = ordered[0].embedding.length;
    return ordered.map((d, i) => {
      if (d.index !== undefined && d.index !== i) throw bad(`indexes are not 0..${count - 1}`);
      if (d.embedding.length === 0) throw bad('an empty vector');
      if (d.embedding.length !== this.dims) throw bad(`a vector of ${d.embedding.length} dimensions, not ${this.dims}`);
      if (!d.embedding.every(Number.isFinite)) throw bad('a vector with a number that is not finite');
      return normalize(Float32Array.from(d.embedding));
    });
  }
}

/** The endpoint's own words about a refusal (OpenAI's `error.message`), shortened. */
function reason(body: string): string {
  let text = body;
  try {
    const m = (JSON.parse(body) as { error?: { message?: unknown } | string }).error;
    text = typeof m === 'string' ? m : typeof m?.message === 'string' ? m.message : body;
  } catch {
    // not JSON: the body itself
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text ? `: ${text.slice(0, 200)}` : '';
}

/**
 * The endpoint's embedder, after one request that learns its dimensions (and finds out now
 * whether it answers at all); ModelUnavailableError when it does not.
 */
export async function loadHttpEmbedder(options: HttpEmbedderOptions): Promise<Embedder> {
  const id = `openai-compatible:${options.model}`;
  if (!options.model) throw new ModelUnavailableError('the embedding endpoint needs a model name', id);
  if (!URL.canParse(options.url) || !/^https?:$/.test(new URL(options.url).protocol)) {
    throw new ModelUnavailableError(`the embedding endpoint's URL is not an http(s) URL: ${JSON.stringify(options.url.replace(/\/\/[^@/]*@/, '//'))}`, id);
  }
  const { username, password } = new URL(options.url);
  if (username || password) throw new ModelUnavailableError("the embedding endpoint's URL carries credentials: give the key as apiKey (KURA_EMBED_API_KEY) instead", id);
  const e = new HttpEmbedder(options);
  await e.embed(['dimensions']);
  return e;
}
