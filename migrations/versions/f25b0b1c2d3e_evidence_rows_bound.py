"""audit: evidence rows bound to the audit chain. Each audit entry records the digests of the evidence rows it
wrote (audit_entry.rows, under its MAC), indexed by row in audit_row; every evidence row already in the database
is marked as written before digests (audit_row with no entry), so `flask audit verify` reports it as not bound
rather than as tampering

Revision ID: f25b0b1c2d3e
Revises: f25a0b1c2d3e
Create Date: 2026-12-03 08:00:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'f25b0b1c2d3e'
down_revision = 'f25a0b1c2d3e'
branch_labels = None
depends_on = None

# The evidence models at this revision (evidence.rows: the classes declaring __evidence__) and their tables.
EVIDENCE_TABLES = {
    'BidDocument': 'bid_document', 'BidVersion': 'bid_version', 'Vote': 'vote', 'Decision': 'decision',
    'Dossier': 'dossier', 'Scorecard': 'scorecard', 'ScorecardScore': 'scorecard_score',
    'ScorecardVersion': 'scorecard_version', 'ConflictDeclaration': 'conflict_declaration', 'Contract': 'contract',
    'Milestone': 'contract_milestone', 'Payment': 'contract_payment', 'Reminder': 'contract_reminder',
    'MatchResult': 'match_result', 'PrizeDeduction': 'prize_deduction', 'WeightsVersion': 'weights_version',
    'Amendment': 'regulation_amendment',
}


def upgrade():
    with op.batch_alter_table('audit_entry', schema=None) as batch_op:
        batch_op.add_column(sa.Column('rows', sa.Text(), nullable=True))
    op.create_table(
        'audit_row',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('entry_id', sa.Integer(), nullable=True),
        sa.Column('object_type', sa.String(length=40), nullable=False),
        sa.Column('object_id', sa.String(length=64), nullable=False),
        sa.Column('digest', sa.String(length=64), nullable=False),
        sa.Column('form', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_row')),
    )
    with op.batch_alter_table('audit_row', schema=None) as batch_op:
        batch_op.create_index('ix_audit_row_object', ['object_type', 'object_id', 'entry_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_audit_row_entry_id'), ['entry_id'], unique=False)
    for object_type, table in EVIDENCE_TABLES.items():
        op.execute(sa.text(
            f"INSERT INTO audit_row (entry_id, object_type, object_id, digest, form) "
            f"SELECT NULL, '{object_type}', CAST(id AS VARCHAR(64)), '', '' FROM {table}"))


def downgrade():
    with op.batch_alter_table('audit_row', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_audit_row_entry_id'))
        batch_op.drop_index('ix_audit_row_object')
    op.drop_table('audit_row')
    with op.batch_alter_table('audit_entry', schema=None) as batch_op:
        batch_op.drop_column('rows')
