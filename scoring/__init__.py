"""Scoring of Art. 15.5: WCOC declarations and scorecards (models, services), the exact aggregation, ranking and
sensitivity (rules, sensitivity), what the pages read (queries, gates) and the WCOC's pages (forms, views)."""
