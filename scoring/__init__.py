"""Scoring of Art. 15.5: WCOC scorecards, their aggregation, the weighted ranking and how stable it is.

The arithmetic is pure and lives in two modules, imported by name so that importing `scoring` (for its
models or pages) never loads numpy:

* `scoring.rules`: scorecard checks, the prize-fund reference score, per-criterion statistics, the weighted
  total, the ranking with ties and the red flags (exact `Decimal`/`Fraction` arithmetic);
* `scoring.sensitivity`: weight swaps, Dirichlet first-place shares, leave-one-out variations and the one-line
  verdict (numpy float64 only inside the Dirichlet sampling).
"""
