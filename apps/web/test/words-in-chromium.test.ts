/**
 * Node and the browser index identically (decision 0054): the store's word segmentation
 * (search/words.ts: Intl.Segmenter for Chinese, Japanese, Thai…, syllable pairs for Korean) and
 * its query compilation (grammar.ts, fts.ts), loaded as built into Debian's Chromium, give
 * exactly what they give in Node for the same texts and questions. With the same SQLite FTS5
 * on both sides (store-sqlite-wasm.test.ts ranks them alike), the rankings are the same.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../../packages/store/src/search/grammar.js';
import { toMatch } from '../../../packages/store/src/search/fts.js';
import { spaceWords, wordsOf } from '../../../packages/store/src/search/words.js';
import { QUESTION_SET, RETRIEVAL_SET } from '../../../packages/store/test/fixtures/retrieval-set.js';
import { launchChromium } from '../../../packages/core/test/helpers/chromium.js';

const DIST = fileURLToPath(new URL('../../../packages/store/dist/', import.meta.url));

/** Sentences of every script the segmenter handles, words inside them, and mixed text. */
const TEXTS = [
  ...QUESTION_SET.documents.map((d) => d.text),
  ...RETRIEVAL_SET.map((d) => d.text),
  '我今天去图书馆借书，然后回家吃饭。北京是中华人民共和国的首都。',
  '東京タワーに行った。日本語の文章は単語の間に空白がありません。Wikipedia日本語版の記事',
  'ผมชอบกินข้าวผัดมาก ภาษาไทยไม่มีช่องว่างระหว่างคำ',
  'ພາສາລາວ ភាសាខ្មែរ မြန်မာဘာသာ',
  '나는 도서관에서 책을 읽었다. 서울 지하철은 새벽에 운행합니다.',
  'Café naïve e-mail 10:30 U.S.A. — plain text stays as it is.',
  // Compatibility forms (NFKC, schema 20): fullwidth, halfwidth katakana, ligatures, circled digits.
  'ＰＤＦファイルは２０２６年からＷｉｎｄｏｗｓ１０でも。ﾊﾝｶｸｶﾀｶﾅのメモ。The ﬁle, the oﬃce, ①② ㈱',
];

let server: Server;
let url: string;
let browser: Browser;

beforeAll(async () => {
  // The built store modules, served as they are (ES modules, relative imports).
  server = createServer((req, res) => {
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!)).replace(/^(\.\.[/\\])+/, '');
    if (path === '/' || path === '\\') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>words</title>');
    let body: Buffer;
    try {
      body = readFileSync(join(DIST, path));
    } catch {
      return void res.writeHead(404).end();
    }
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

describe('words in Chromium and in Node', () => {
  it('segments text and compiles questions identically', { timeout: 60_000 }, async () => {
    const questions = [...QUESTION_SET.questions.map((q) => q.q), ...RETRIEVAL_SET.flatMap((d) => [d.meaning, d.keyword]), '图书馆在哪里', '"东京 タワー" -富士山 ข้าว*'];
    const page = await browser.newPage();
    await page.goto(url);
    // A string, not a function: vitest rewrites import() in this file's functions.
    const there = await page.evaluate(`(async () => {
      const texts = ${JSON.stringify(TEXTS)};
      const questions = ${JSON.stringify(questions)};
      const words = await import('/search/words.js');
      const grammar = await import('/search/grammar.js');
      const fts = await import('/search/fts.js');
      return {
        spaced: texts.map((t) => words.spaceWords(t)),
        words: texts.map((t) => words.wordsOf(t).map((w) => w.index + ':' + w.word)),
        matches: questions.map((q) => fts.toMatch(grammar.parseQuery(q))),
      };
    })()`);
    const here = {
      spaced: TEXTS.map((t) => spaceWords(t)),
      words: TEXTS.map((t) => wordsOf(t).map((w) => `${w.index}:${w.word}`)),
      matches: questions.map((q) => toMatch(parseQuery(q))),
    };
    expect(there).toEqual(here);
    // And the words are really cut apart, in both.
    expect(here.spaced.join(' ')).toContain('图书 馆');
    expect(here.spaced.join(' ')).toContain('지하 하철');
  });
});
