/**
 * What semantic search needs of a model (decision 0036): L2-normalised vectors for texts, and
 * how many tokens a text is (documents are cut into chunks of ~200 tokens for it).
 */
export interface Embedder {
  /** Recorded with every vector: vectors of different models are never compared. */
  readonly model: string;
  readonly dims: number;
  /**
   * The model reads English (and other Latin-script text) only: a question in another script
   * is noise to it, answered by keyword search instead (store-search.ts).
   */
  readonly latinOnly?: boolean;
  /** The most tokens one text may have; longer texts are cut (truncated) by the model. */
  readonly maxTokens: number;
  /** Tokens in `text`, as the model counts them (special tokens excluded). */
  countTokens(text: string): number;
  /** One L2-normalised vector of `dims` floats per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** The dot product of two vectors (their cosine similarity, both being L2-normalised). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Scales `v` to length 1 in place (a zero vector stays zero). */
export function normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  const n = Math.sqrt(s);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}
