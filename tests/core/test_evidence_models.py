"""Which columns of each evidence model are bound to the audit chain (evidence.rows) is decided column by column."""

import pytest

import app  # noqa: F401  (every model registered)
from evidence.rows import evidence_models, file_columns

MODELS = evidence_models()


def test_the_evidence_models_are_the_ones_the_flow_records():
    assert set(MODELS) == {
        "BidDocument", "BidVersion", "Vote", "Decision", "Dossier", "Scorecard", "ScorecardScore", "ScorecardVersion",
        "ConflictDeclaration", "WeightsVersion", "Contract", "Milestone", "Payment", "PrizeDeduction", "MatchResult",
        "Reminder", "Amendment"}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_column_is_evidence_or_excluded_with_its_reason(name):
    model = MODELS[name]
    columns = {c.name for c in model.__table__.columns} - {"id"}
    evidence, excluded = model.__evidence__, model.__evidence_excluded__
    assert len(set(evidence)) == len(evidence)
    assert not set(evidence) & set(excluded)
    assert set(evidence) | set(excluded) == columns, "a new column: add it at the end of __evidence__, or exclude it"
    assert all(len(reason) > 40 for reason in excluded.values())


def test_stored_files_are_bound_with_their_hash():
    assert file_columns(MODELS["Contract"]) == [("pdf_stored_name", "pdf_sha256"),
                                                ("signed_pdf_stored_name", "signed_pdf_sha256")]
    assert file_columns(MODELS["Decision"]) == [("minutes_stored_name", "minutes_sha256")]
    assert file_columns(MODELS["Dossier"]) == [("stored_name", "pdf_sha256")]
    assert file_columns(MODELS["BidDocument"]) == [("stored_name", "sha256")]
