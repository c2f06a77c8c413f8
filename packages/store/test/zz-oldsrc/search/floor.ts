/**
 * The relevance floor of semantic search (decision 0054): the least cosine similarity between a
 * query and a document's best chunk for the document to be a hit. An embedding model ranks
 * every document, however unrelated; below the floor its similarity says "unrelated", and the
 * hit is not returned (semantic mode) or not fused (hybrid keeps a document only the semantic
 * side found only above it). Calibrated per model on the labelled sets; a model not
 * calibrated here has none (0 would not do: cosines of other models spread differently), and
 * `minScore` sets one per query.
 *
 * all-MiniLM-L6-v2, measured 2026-11-28: on the project's labelled set every right answer
 * scores 0.353-0.769 and every other document at most 0.262; unrelated questions (a car's
 * tyre, cookies, C++ templates) at most 0.144. On CISI's 76 judged questions, 99.9% of the
 * judged-relevant documents in the top 100 score at least 0.30 (the lowest top hit: 0.438);
 * unrelated questions' top hits score 0.118-0.375 there (the highest: "C++ templates" near
 * abstracts on programming languages).
 */
import { MINILM } from '../semantic/minilm.js';

const FLOORS: Record<string, number> = { [MINILM.model]: 0.3 };

/** The floor for `model`: `minScore` when given, else the model's calibrated one (-1: none). */
export function semanticFloor(model: string, minScore: number | undefined): number {
  return minScore ?? FLOORS[model] ?? -1;
}
