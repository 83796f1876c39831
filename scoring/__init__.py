"""Scoring of Art. 15.5: WCOC scorecards, their aggregation, the weighted ranking and how stable it is.

The arithmetic is pure and lives in two modules, imported by name so that importing `scoring` (for its
models or pages) never loads numpy:

* `scoring.rules`: scorecard checks, the prize-fund reference score, per-criterion statistics, the weighted
  total, the ranking with ties and the red flags (exact `Decimal`/`Fraction` arithmetic);
* `scoring.sensitivity`: weight swaps, Dirichlet first-place shares, leave-one-out variations and the one-line
  verdict (numpy float64 only inside the Dirichlet sampling).

Around them, the database layer and the pages: `scoring.models` (weights versions, conflict declarations,
scorecards and their submitted versions), `scoring.services` (the only code that changes them, audited),
`scoring.queries` (what the pages read, in a fixed number of queries, and the ranking built on it),
`scoring.gates` (who reads scores, the first showing of them), `scoring.forms` and `scoring.views` (the WCOC's
and the secretariat's pages; the ranking in the API is api.ranking).
"""
