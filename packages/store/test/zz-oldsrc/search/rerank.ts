/**
 * Optional reranking (decision 0054, amended): the first hits of a search scored again by a
 * reranker behind the `/rerank` HTTP API that Cohere, Jina, Hugging Face
 * text-embeddings-inference, llama.cpp's server and vLLM serve — `POST {url}/rerank` with
 * `{"model", "query", "documents": [texts], "top_n"}`, answered by `{"results": [{"index",
 * "relevance_score"}]}` (TEI: a bare array of `{"index", "score"}`). Off unless configured
 * (`KURA_RERANK_URL`, `KURA_RERANK_MODEL`, `KURA_RERANK_API_KEY` or the embeddings' key).
 *
 * Bounded in time: a search waits `rerankMs` at most, then answers in the fused order and says
 * so; so it does for every failure — a refusal, overload, an answer that is not one score per
 * document. Nothing is retried: a retry would only spend the budget of a person waiting.
 */
import { z } from 'zod';
import { ModelUnavailableError } from '../errors.js';

export interface Reranker {
  /** The model's name, as answers report it. */
  readonly model: string;
  /** One score per document, in the documents' order (higher: more relevant). */
  rerank(query: string, documents: readonly string[], signal: AbortSignal): Promise<number[]>;
}

export interface HttpRerankerOptions {
  /** The API's base URL (`http://127.0.0.1:8080`, `https://api.cohere.com/v2`); `/rerank` is appended. */
  url: string;
  model: string;
  apiKey?: string | undefined;
}

const Scored = z.object({ index: z.number().int().nonnegative(), relevance_score: z.number().optional(), score: z.number().optional() });
const Answer = z.union([z.object({ results: z.array(Scored) }), z.array(Scored)]);

/** Why a rerank did not apply: said in the answer, the fused order kept. */
export class RerankFailed extends Error {}

export class HttpReranker implements Reranker {
  readonly #endpoint: string;
  readonly #where: string;

  constructor(readonly options: HttpRerankerOptions) {
    if (!options.model) throw new ModelUnavailableError('the rerank endpoint needs a model name (KURA_RERANK_MODEL)', 'rerank:');
    if (!URL.canParse(options.url) || !/^https?:$/.test(new URL(options.url).protocol)) {
      throw new ModelUnavailableError(`the rerank endpoint's URL is not an http(s) URL: ${JSON.stringify(options.url.replace(/\/\/[^@/]*@/, '//'))}`, `rerank:${options.model}`);
    }
    const { username, password } = new URL(options.url);
    if (username || password) throw new ModelUnavailableError("the rerank endpoint's URL carries credentials: give the key as KURA_RERANK_API_KEY instead", `rerank:${options.model}`);
    this.#endpoint = `${options.url.replace(/\/+$/, '')}/rerank`;
    const u = new URL(this.#endpoint);
    this.#where = `${u.protocol}//${u.host}${u.pathname}`; // never user:password@, never the key
  }

  get model(): string {
    return this.options.model;
  }

  async rerank(query: string, documents: readonly string[], signal: AbortSignal): Promise<number[]> {
    let res: Response;
    try {
      res = await fetch(this.#endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.options.model, query, documents, top_n: documents.length, return_documents: false }),
        signal,
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      throw new RerankFailed(err.name === 'TimeoutError' || err.name === 'AbortError' ? 'no answer in time' : `${this.#where}: ${err.cause?.code ?? err.message}`);
    }
    const body = await res.text().catch(() => '');
    if (!res.ok) throw new RerankFailed(`${this.#where} answered HTTP ${res.status}${body ? `: ${body.replace(/\s+/g, ' ').slice(0, 160)}` : ''}`);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new RerankFailed(`${this.#where} answered with something that is not JSON`);
    }
    const parsed = Answer.safeParse(json);
    if (!parsed.success) throw new RerankFailed(`${this.#where} answered wrongly: not {"results": [{"index", "relevance_score"}]}`);
    const results = Array.isArray(parsed.data) ? parsed.data : parsed.data.results;
    if (results.length !== documents.length) throw new RerankFailed(`${this.#where} answered wrongly: ${results.length} scores for ${documents.length} documents`);
    const scores = new Array<number>(documents.length);
    for (const r of results) {
      const score = r.relevance_score ?? r.score;
      if (r.index >= documents.length || scores[r.index] !== undefined || score === undefined || !Number.isFinite(score)) {
        throw new RerankFailed(`${this.#where} answered wrongly: indexes are not each of 0..${documents.length - 1} once, with a finite score`);
      }
      scores[r.index] = score;
    }
    return scores;
  }
}

/** The reranker a process's environment configures (none unless KURA_RERANK_URL is set). */
export function configuredReranker(env: Record<string, string | undefined>): Reranker | undefined {
  if (!env.KURA_RERANK_URL) return undefined;
  return new HttpReranker({ url: env.KURA_RERANK_URL, model: env.KURA_RERANK_MODEL ?? '', apiKey: env.KURA_RERANK_API_KEY ?? env.KURA_EMBED_API_KEY });
}
