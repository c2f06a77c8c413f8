/**
 * The query language (search/grammar.ts, docs/HTTP.md "Query language"): known readings of
 * each operator and of each malformed form, the FTS5 expression each compiles to, and — over
 * any string — a parse that never throws and an expression FTS5 itself always accepts.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUERY_TERMS_MAX, QUESTION_TERMS, TERM_REPEATS_MAX, parseQuery, type Expr } from '../src/search/grammar.js';
import { excludedMatch, filterSql, toMatch } from '../src/search/fts.js';
import { spaceWords, wordsOf } from '../src/search/words.js';

const read = (q: string) => {
  const p = parseQuery(q);
  return { parsedAs: p.parsedAs, fallbacks: p.fallbacks, match: toMatch(p) };
};

describe('the query language', () => {
  it('reads plain words as words, any of them, stop words left out of a question', () => {
    expect(read('harbour boats')).toEqual({ parsedAs: 'harbour OR boats', fallbacks: [], match: '("harbour" OR "boats")' });
    expect(read('what is the revenue (quarterly)?').parsedAs).toBe('revenue OR (quarterly)?');
    expect(read('what is the revenue (quarterly)?').match).toBe('("revenue" OR "(quarterly)?")');
    // Only stop words: they are the question.
    expect(read('to be or not to be').parsedAs).toBe('to OR be OR or OR not OR to OR be');
    // A word with marks inside is no stop word: `O(n)` is not "on", `I.T.` not "it" (a trial).
    expect(read('O(n) sorting').parsedAs).toBe('O(n) OR sorting');
    expect(read('I.T. budget').parsedAs).toBe('I.T. OR budget');
    expect(read("it's the budget").parsedAs).toBe('budget'); // (an apostrophe folds away: its)
    // Words inside punctuation stay one term: the index reads `e-mail` as the phrase "e mail".
    expect(read('e-mail 10:30 http://x.org').match).toBe('("e-mail" OR "10:30" OR "http://x.org")');
  });

  it(`reads a question (${QUESTION_TERMS} words or more) as the reference BM25s tokenize it`, () => {
    // Hyphenated and apostrophised words are their words (one-letter pieces and stop words out);
    // a negated auxiliary is a stop word; identifiers keep their punctuation.
    expect(read("why doesn't the user's high-speed backup finish on x.org").parsedAs).toBe('user OR high OR speed OR backup OR finish OR x.org');
    expect(read('state-of-the-art e-mail filters for spam').parsedAs).toBe('state OR art OR mail OR filters OR spam');
    // No piece of two characters or more: the word as typed (`I/O` is not an `i` and an `o`).
    expect(read("I'm after I/O schedulers in kernels").match).toBe('("I\'m" OR "I/O" OR "schedulers" OR "kernels")');
    // A quoted phrase in a question counts its words too: a near miss of a title still scores.
    expect(read('articles citing "programming liberated from the von Neumann style" by Backus').parsedAs).toBe(
      'articles OR citing OR "programming liberated from the von Neumann style" OR programming OR liberated OR von OR Neumann OR style OR Backus',
    );
    // Shorter queries, and terms next to an operator, stay as typed.
    expect(read('e-mail alerts').match).toBe('("e-mail" OR "alerts")');
    expect(read('high-speed AND aircraft wing flutter tests').match).toBe('(("high-speed" AND "aircraft") OR "wing" OR "flutter" OR "tests")');
    // What a question adds stays within the terms searched.
    const quoted = `"${Array.from({ length: 600 }, (_, i) => `q${i}`).join(' ')}" a b c d`;
    const p = parseQuery(quoted);
    expect(p.expr && 'items' in p.expr ? p.expr.items.length : 0).toBeLessThanOrEqual(QUERY_TERMS_MAX);
  });

  it('found in review: operands as typed, long unspaced paragraphs cut not dropped, repeats and exclusions bounded', () => {
    const terms = (e: Expr | null): number => (!e ? 0 : 'text' in e ? 1 : e.kind === 'not' ? terms(e.left) + terms(e.right) : e.items.reduce((n, x) => n + terms(x), 0));
    // An operator's operand is the word as typed: 图书馆 is the phrase of its words, not either.
    expect(read('图书馆 AND 文化').match).toBe('("图书 馆" AND "文化")');
    expect(read('NOT 图书馆 文化').match).toBe('"文化" NOT ("图书 馆")');
    expect(read('文化 图书馆').match).toBe('("文化" OR "图书 馆")'); // juxtaposed: a compound of two segments is one word (a trial: 馆 alone found museums)
    expect(read('文化 图书馆在哪里').match).toBe('("文化" OR "图书" OR "馆" OR "在" OR "哪里")'); // a longer run: its words, any of them
    // A `-` before a quote that never closes still excludes the word after it.
    expect(read('boats -"harbour master').match).toBe('("boats" OR "master") NOT ("harbour")');
    // A paragraph without spaces is one unit of hundreds of words: cut to the terms searched, not dropped.
    const zh = Array.from({ length: 700 }, (_, i) => String.fromCodePoint(0x4e00 + i * 7)).join('');
    const p = parseQuery(zh);
    expect(terms(p.expr)).toBe(QUERY_TERMS_MAX);
    expect(p.fallbacks).toEqual([`only the first ${QUERY_TERMS_MAX} terms were searched`]);
    // Everything a question adds counts against the cap, AND groups included.
    const big = parseQuery(`${Array.from({ length: 253 }, (_, i) => `w${i}`).join(' AND ')} alpha beta "${Array.from({ length: 300 }, (_, i) => `p${i}`).join(' ')}"`);
    expect(terms(big.expr)).toBeLessThanOrEqual(QUERY_TERMS_MAX);
    // A word pasted again and again counts TERM_REPEATS_MAX times (bm25()'s work grows with the copies).
    expect(parseQuery('harbour '.repeat(200)).parsedAs).toBe(Array(TERM_REPEATS_MAX).fill('harbour').join(' OR '));
    expect(parseQuery('Harbour harbour HARBOUR boat harbour harbour harbour harbour').parsedAs.split(' OR ').filter((w) => /harbour/i.test(w))).toHaveLength(TERM_REPEATS_MAX);
    // Exclusions are bounded too.
    const ex = parseQuery(`boats ${Array.from({ length: 600 }, (_, i) => `-x${i}`).join(' ')}`);
    expect(ex.exclude).toHaveLength(QUERY_TERMS_MAX);
    expect(ex.fallbacks).toContain(`only the first ${QUERY_TERMS_MAX} exclusions were searched`);
  });

  it('honours each operator where it is well formed', () => {
    expect(read('"harbour master" boats')).toMatchObject({ parsedAs: '"harbour master" OR boats', match: '("harbour master" OR "boats")' });
    expect(read('harb*')).toMatchObject({ parsedAs: 'harb*', match: '"harb" *' });
    expect(read('"harbour mas"*').match).toBe('"harbour mas" *');
    expect(read('harbour AND master')).toMatchObject({ parsedAs: 'harbour AND master', match: '("harbour" AND "master")' });
    expect(read('harbour OR master').match).toBe('("harbour" OR "master")');
    expect(read('harbour NOT master')).toMatchObject({ parsedAs: 'harbour NOT master', match: '("harbour" NOT "master")' });
    // AND binds tighter than juxtaposition (OR); NOT tighter than AND.
    expect(read('x y AND z NOT w').match).toBe('("x" OR ("y" AND ("z" NOT "w")))');
    expect(read('boats -harbour -"fish market"')).toMatchObject({ parsedAs: 'boats -harbour -"fish market"', match: '"boats" NOT ("harbour" OR "fish market")' });
    expect(read('NOT harbour boats').match).toBe('"boats" NOT ("harbour")');
    // Lower-case operators are words (stop words, here).
    expect(read('harbour and master').parsedAs).toBe('harbour OR master');
    // `a AND NOT b` is `a NOT b`, as people write it (the AND was read as the word "and").
    expect(read('ferry AND NOT winter')).toMatchObject({ parsedAs: 'ferry NOT winter', match: '("ferry" NOT "winter")', fallbacks: [] });
    // What a semantic hit must not hold: exclusions and the NOTs the whole query needs — not one inside an OR.
    expect(excludedMatch(parseQuery('dogs NOT puppy -kitten'))).toBe('"kitten" OR "puppy"');
    expect(excludedMatch(parseQuery('a NOT b NOT c'))).toBe('"c" OR "b"');
    expect(excludedMatch(parseQuery('x AND y NOT z'))).toBe('"z"');
    expect(excludedMatch(parseQuery('x y NOT z'))).toBeNull();
  });

  it('takes field filters out of the words', () => {
    const p = parseQuery('revenue path:reports/ tag:finance tag:q3 type:pdf path:"my docs/"');
    expect(p.filters).toEqual({ path: ['reports/', 'my docs/'], tag: ['finance', 'q3'], type: ['pdf'] });
    expect(p.parsedAs).toBe('revenue path:reports/ path:"my docs/" tag:finance tag:q3 type:pdf');
    expect(p.text).toBe('revenue');
    // Other prefixes with a colon are words: URLs, times, `note:`.
    expect(parseQuery('note:urgent').filters).toEqual({ path: [], tag: [], type: [] });
    // (A whole type also bounds the column, for its index: the range first, then the LIKE.)
    expect(filterSql({ path: [], tag: [], type: ['text/*', 'json'] }).params).toEqual(['text/', 'text/\u{10ffff}', 'text/%', '%/json', '%+json']);
    expect(filterSql({ path: [], tag: [], type: ['50%_off'] }).params).toEqual(['%/50\\%\\_off', '%+50\\%\\_off']);
    // A common extension whose type's subtype is another word names that type (`type:docx` found nothing).
    const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    expect(filterSql({ path: [], tag: [], type: ['docx', 'MD'] }).params).toEqual([docx, `${docx}\u{10ffff}`, docx, 'text/markdown', 'text/markdown\u{10ffff}', 'text/markdown']);
  });

  it('reads malformed operator syntax as words, and says so', () => {
    const cases: [string, string, RegExp][] = [
      ['harbour AND', 'harbour', /"AND" at the end was read as a word/],
      ['OR harbour', 'harbour', /"OR" at the start/],
      ['"unbalanced quote', 'unbalanced OR quote', /unbalanced quote/],
      ['harbour -', 'harbour', /"-" not followed by a word/],
      ['*', '', /"\*" not after a word/],
      ['harbour AND OR master', 'harbour OR master', /"AND" before another operator/],
      ['harbour NOT', 'harbour', /"NOT" at the end/],
      ['tag: boats', 'tag: OR boats', /"tag:" without a value/],
      // A command's flags are words, not exclusions (grep's manual was left out of `grep -r`).
      ['grep -r recursive', 'grep OR r OR recursive', /"-r" looks like a command's flag/],
      ['rm -rf', 'rm OR rf', /"-rf" looks like a command's flag/],
    ];
    for (const [q, parsedAs, said] of cases) {
      const p = parseQuery(q);
      expect({ q, parsedAs: p.parsedAs }).toEqual({ q, parsedAs });
      expect(p.fallbacks.join('; '), q).toMatch(said);
    }
  });

  it('excludes by a filter: NOT path:P, -path:P, -tag:T, -type:M (a user trial: NOT and - before a filter did nothing, or the opposite)', () => {
    for (const q of ['TODO NOT path:src/', 'TODO -path:src/', 'TODO AND NOT path:src/', 'NOT path:src/ TODO']) {
      const p = parseQuery(q);
      expect({ q, filters: p.filters, parsedAs: p.parsedAs, fallbacks: p.fallbacks, match: toMatch(p) }).toEqual({
        q,
        filters: { path: [], tag: [], type: [], not: { path: ['src/'], tag: [], type: [] } },
        parsedAs: 'TODO -path:src/',
        fallbacks: [],
        match: '"TODO"',
      });
    }
    const p = parseQuery('TODO -tag:code NOT type:pdf -path:"my docs/" tag:notes');
    expect(p.filters).toEqual({ path: [], tag: ['notes'], type: [], not: { path: ['my docs/'], tag: ['code'], type: ['pdf'] } });
    expect(p.parsedAs).toBe('TODO tag:notes -path:"my docs/" -tag:code -type:pdf');
    expect(p.exclude).toEqual([]);
    expect(p.fallbacks).toEqual([]);
    // The filters' SQL: an entry must match none of them (an entry without a path or a type is not excluded by one).
    const sql = filterSql(p.filters);
    expect(sql.where).toHaveLength(4);
    expect(sql.where.slice(1).every((w) => w.startsWith('NOT '))).toBe(true);
    expect(sql.params).toEqual(['notes', 'my docs/', 'my docs/\u{10ffff}', 'code', '%/pdf', '%+pdf']);
    // Filters and exclusions alone: nothing to search for.
    expect(toMatch(parseQuery('-path:src/ -tag:x'))).toBeNull();
  });

  it('says where an operator beside a filter or an exclusion really is (a trial: "AND" at the end, "OR" at the start, neither true)', () => {
    // AND with a filter or an exclusion: what it means is what a filter does (every hit holds it).
    for (const q of ['TODO AND path:src/', 'path:src/ AND TODO', 'TODO AND -draft path:src/', '-draft AND TODO path:src/']) {
      const p = parseQuery(q);
      expect({ q, parsedAs: p.parsedAs.replace(' -draft', ''), fallbacks: p.fallbacks }).toEqual({ q, parsedAs: 'TODO path:src/', fallbacks: [] });
    }
    // OR cannot make a filter an alternative: left out, and said where it was.
    expect(parseQuery('path:src/ OR TODO')).toMatchObject({ parsedAs: 'TODO path:src/', fallbacks: ['"OR" after the filter path:src/ was left out: a filter holds for every hit, so it is not an alternative'] });
    expect(parseQuery('TODO OR -tag:code')).toMatchObject({ parsedAs: 'TODO -tag:code', fallbacks: ['"OR" before the exclusion -tag:code was left out: an exclusion holds for every hit, so it is not an alternative'] });
    expect(parseQuery('NOT draft OR TODO')).toMatchObject({ parsedAs: 'TODO -draft', fallbacks: ['"OR" after the exclusion NOT draft was left out: an exclusion holds for every hit, so it is not an alternative'] });
    // Where an operator really is at the start or the end, that is what is said.
    expect(parseQuery('path:src/ TODO AND').fallbacks).toEqual(['"AND" at the end was read as a word']);
    expect(parseQuery('OR TODO path:src/').fallbacks).toEqual(['"OR" at the start was read as a word']);
  });

  it('shows how parentheses were read: they do not group, and parsedAs and fallbacks say so (a trial: "harbour AND (ferry OR kayak)" was shown as if grouped)', () => {
    const p = parseQuery('harbour AND (ferry OR kayak)');
    expect(p.parsedAs).toBe('(harbour AND ferry) OR kayak');
    expect(p.fallbacks).toEqual(['parentheses do not group: they were read as part of the words beside them, and the operators bound as always (NOT, then AND, then OR)']);
    expect(toMatch(p)).toBe('(("harbour" AND "(ferry") OR "kayak)")');
    // The canonical form puts an AND or NOT among alternatives in parentheses.
    expect(parseQuery('x y AND z NOT w').parsedAs).toBe('x OR (y AND (z NOT w))');
    expect(parseQuery('("harbour master" OR ferry) boats').parsedAs).toBe('"harbour master" OR ferry OR boats');
    // Parentheses without operators are the words' own, as ever; balanced ones stay in the word shown.
    expect(parseQuery('what is the revenue (quarterly)?')).toMatchObject({ parsedAs: 'revenue OR (quarterly)?', fallbacks: [] });
    expect(parseQuery('(harbour master)')).toMatchObject({ parsedAs: 'harbour OR master', fallbacks: [] });
  });

  it('gives semantic search the words as typed, only filters, exclusions and operators taken out (a trial: a filter made it embed the terms without stop words)', () => {
    const question = 'how often should the car be serviced';
    expect(parseQuery(question).text).toBe(question);
    for (const q of [`${question} path:notes/`, `path:notes/ ${question}`, `${question} -tag:old`, `${question} NOT path:src/`, `${question} -draft`, `NOT draft ${question}`, `${question} type:"text/plain"`]) {
      expect(parseQuery(q).text, q).toBe(question);
    }
    expect(parseQuery('how often AND should the car NOT bus be serviced').text).toBe('how often should the car be serviced');
    expect(parseQuery('the "harbour master" of Kiel -ferry').text).toBe('the "harbour master" of Kiel');
    // An operator read as a word is a word.
    expect(parseQuery('what is AND').text).toBe('what is AND');
    expect(parseQuery('path:notes/').text).toBe('');
  });

  it('has nothing to search for in punctuation, emoji, a lone NOT or filters alone: no expression, not an error', () => {
    for (const q of ['', '   ', '?! …', '🙂🙂', '-', '""', '-harbour', 'NOT harbour', 'tag:finance', '()', '* * *']) {
      const p = parseQuery(q);
      expect({ q, match: toMatch(p) }).toEqual({ q, match: null });
    }
  });

  it('cuts words of unspaced scripts apart, a question in them read as its words', () => {
    expect(spaceWords('我今天去图书馆借书。')).toMatch(/图书/);
    expect(spaceWords('plain English stays the same string')).toBe('plain English stays the same string');
    const zh = parseQuery('图书馆在哪里');
    expect(zh.expr && 'items' in zh.expr ? zh.expr.items.length : 1).toBeGreaterThan(1);
    expect(toMatch(parseQuery('"图书馆"'))).toBe('"图书 馆"');
    expect(wordsOf('in 我今天去图书馆借书 now').map((w) => w.word)).toEqual(['in', '我', '今天', '去', '图书', '馆', '借书', 'now']);
  });

  it('segments a page of Chinese with no comma in pieces (a run of 300,000 characters, not one input)', () => {
    const page = `${'我今天去图书馆借书然后回家吃饭'.repeat(20_000)}北京是首都`;
    const spaced = spaceWords(page);
    expect(spaced.endsWith(' 北京 是 首都 ')).toBe(true);
    expect(spaced.split(' ').filter((w) => w === '图书').length).toBeGreaterThan(19_000);
  });

  it(`searches the first ${QUERY_TERMS_MAX} terms of a pasted page, and says so`, () => {
    const page = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ');
    const p = parseQuery(page);
    expect(p.expr && 'items' in p.expr ? p.expr.items.length : 0).toBe(QUERY_TERMS_MAX);
    expect(p.fallbacks).toEqual([`only the first ${QUERY_TERMS_MAX} terms were searched`]);
    // A word said again weighs again (BM25 sums a query's phrases).
    expect(parseQuery('boat boat harbour').parsedAs).toBe('boat OR boat OR harbour');
  });

  it('parses any string without throwing, into an expression FTS5 accepts', () => {
    const db = new Database(':memory:');
    db.exec("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2'); INSERT INTO t(body) VALUES ('harbour master and boats'), ('东京 タワー')");
    const run = db.prepare('SELECT rowid FROM t WHERE t MATCH ?');
    const check = (q: string) => {
      const match = toMatch(parseQuery(q));
      if (match !== null) run.all(match); // throws on an FTS5 syntax error
    };
    const pieces = fc.constantFrom('AND', 'OR', 'NOT', '"', '-', '*', '(', ')', ':', 'path:', 'tag:', 'type:', '^', 'NEAR', '+', '{', '}', ' ', '图书馆', 'é', '\u0000', '🙂', 'harbour');
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, fc.string({ unit: 'grapheme', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 })), { maxLength: 40 }), (parts) => check(parts.join(''))),
      { numRuns: 2000 },
    );
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 2000 }), check), { numRuns: 300 });
    db.close();
  });
});

describe('possessives', () => {
  it("a word's possessive is the word: harbour's found nothing, the index's phrase \"harbour s\" (a trial)", () => {
    expect(parseQuery("harbour's").parsedAs).toBe('harbour');
    expect(parseQuery('Harbour’s').parsedAs).toBe('Harbour');
    expect(parseQuery("harbour's?").parsedAs).toBe('harbour?');
    expect(parseQuery("-harbour's ferry").parsedAs).toBe('ferry -harbour');
    // Other apostrophes, and phrases, stay as typed.
    for (const q of ["o'clock", "rock'n'roll", "users'", '"harbour\'s master"']) expect(parseQuery(q).parsedAs, q).toBe(q);
    // Found by the index: the possessive and the plain word.
    const db = new Database(':memory:');
    db.exec("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')");
    db.prepare('INSERT INTO t(rowid, body) VALUES (1, ?), (2, ?)').run("The harbour's master", 'Harbour master meeting');
    const hits = (q: string) => (db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid').all(toMatch(parseQuery(q))!) as { rowid: number }[]).map((r) => r.rowid);
    expect(hits("harbour's")).toEqual([1, 2]);
    expect(hits('Harbour’s')).toEqual([1, 2]);
    db.close();
  });
});
