/**
 * English stop words (decision 0054): left out of a question's plain words before BM25 sees
 * them — unless nothing else is left (`to be or not to be` still searches) — and never marked
 * in snippets. NLTK's English list, less its contractions' fragments. Measured on CISI's 76
 * judged questions (keyword, porter): nDCG@10 0.324 with every word, 0.334 without Lucene's 33
 * stop words, 0.360 without these.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by can could did do does ' +
    'doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself ' +
    'just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than ' +
    'that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which ' +
    'while who whom why will with would you your yours yourself yourselves'
  ).split(' '),
);
