"""The peer BM25 of `pnpm bench search` (bench/suites/search/quality.mjs): bm25s with its
Snowball English stemmer and English stop words, a well-kept library nobody here wrote, over
the same documents and questions as Kura. Reads JSON {"docs": [{"id", "text"}], "questions":
[{"id", "text"}], "k": 10} on stdin; writes {"rankings": {question id: [doc id, ...]},
"version": ...} on stdout."""
import json
import sys

import bm25s
import Stemmer

job = json.load(sys.stdin)
stemmer = Stemmer.Stemmer("english")
docs = job["docs"]
corpus = bm25s.tokenize([d["text"] for d in docs], stopwords="en", stemmer=stemmer, show_progress=False)
retriever = bm25s.BM25()
retriever.index(corpus, show_progress=False)
k = min(job.get("k", 10), len(docs))
rankings = {}
for q in job["questions"]:
    tokens = bm25s.tokenize([q["text"]], stopwords="en", stemmer=stemmer, show_progress=False)
    if not tokens.vocab:
        rankings[q["id"]] = []
        continue
    results, scores = retriever.retrieve(tokens, k=k, show_progress=False)
    rankings[q["id"]] = [docs[i]["id"] for i, s in zip(results[0], scores[0]) if s > 0]
json.dump({"rankings": rankings, "version": bm25s.__version__}, sys.stdout)
