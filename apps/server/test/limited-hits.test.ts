/**
 * A token limited to prefixes gets no figure computed over the whole store (decision 0060):
 * every BM25 goes — keyword's, and the exact list's of hybrid (decision 0068) — and hybrid's
 * fused score, made of BM25 among others since decision 0071; ranks and cosines stay.
 */
import { describe, expect, it } from 'vitest';
import type { SearchHits } from '@kura/store';
import { withoutStoreWideFigures } from '../src/access/limited-store.js';

const hit = { digest: `sha256:${'0'.repeat(64)}` as const, path: 'team/a', mediaType: 'text/plain', size: 1, snippet: '' };

describe('hits as a limited token gets them', () => {
  it('in hybrid mode, drops BM25 scores and the fused score, and keeps the ranks and the cosines', () => {
    const hits = Object.assign(
      [
        { ...hit, score: -3.5, matched: ['keyword'], keyword: { rank: 1, score: -3.5 } },
        { ...hit, score: 0.049, matched: ['keyword', 'semantic', 'exact'], keyword: { rank: 1, score: -3.5 }, semantic: { rank: 2, score: 0.61 }, exact: { rank: 1, score: -7.25 } },
        { ...hit, score: 0.016, matched: ['exact'], exact: { rank: 2, score: -1.5 } },
        { ...hit, score: 0.7, matched: ['semantic'], semantic: { rank: 1, score: 0.7 } },
      ],
      { parsedAs: 'x', mode: 'hybrid' },
    ) as unknown as SearchHits;
    const out = withoutStoreWideFigures(hits);
    expect(out.map((h) => ({ ...h }))).toEqual([
      { ...hit, matched: ['keyword'], keyword: { rank: 1 } },
      { ...hit, matched: ['keyword', 'semantic', 'exact'], keyword: { rank: 1 }, semantic: { rank: 2, score: 0.61 }, exact: { rank: 1 } },
      { ...hit, matched: ['exact'], exact: { rank: 2 } },
      { ...hit, matched: ['semantic'], semantic: { rank: 1, score: 0.7 } },
    ]);
    expect(out.mode).toBe('hybrid');
  });

  it('in keyword mode drops the BM25; in semantic mode keeps the cosine', () => {
    const keyword = Object.assign([{ ...hit, score: -3.5, matched: ['keyword'], keyword: { rank: 1, score: -3.5 } }], { parsedAs: 'x', mode: 'keyword' }) as unknown as SearchHits;
    expect(withoutStoreWideFigures(keyword).map((h) => ({ ...h }))).toEqual([{ ...hit, matched: ['keyword'], keyword: { rank: 1 } }]);
    const semantic = Object.assign([{ ...hit, score: 0.7, matched: ['semantic'], semantic: { rank: 1, score: 0.7 } }], { parsedAs: 'x', mode: 'semantic' }) as unknown as SearchHits;
    expect(withoutStoreWideFigures(semantic).map((h) => ({ ...h }))).toEqual([{ ...hit, score: 0.7, matched: ['semantic'], semantic: { rank: 1, score: 0.7 } }]);
  });
});
