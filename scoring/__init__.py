"""Scoring of Art. 15.5: WCOC declarations and scorecards (models, services), the exact aggregation, ranking and
sensitivity (rules, sensitivity), who may see what of the scores (visibility), what the pages read (queries;
gates records the first showing) and the WCOC's pages (forms, views)."""
