"""events: amendments of a call's regulation (who decided, date, reference, reason, what changed, whose findings
changed); bids: each bid's findings under each regulation version it was judged under

Revision ID: d13d4e5f6a74
Revises: d13c3d4e5f63
Create Date: 2026-12-01 16:40:00

"""
from alembic import op
import sqlalchemy as sa

import core.db


revision = 'd13d4e5f6a74'
down_revision = 'd13c3d4e5f63'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'regulation_amendment',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('event_id', sa.Integer(), nullable=False),
        sa.Column('from_version_id', sa.Integer(), nullable=False),
        sa.Column('to_version_id', sa.Integer(), nullable=False),
        sa.Column('authority', sa.String(length=20), nullable=False),
        sa.Column('authority_label', sa.String(length=300), nullable=False),
        sa.Column('article', sa.String(length=20), nullable=False),
        sa.Column('decided_on', sa.Date(), nullable=False),
        sa.Column('reference', sa.String(length=200), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('changes', sa.Text(), nullable=False),
        sa.Column('report', sa.Text(), nullable=False),
        sa.Column('recorded_at', core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('recorded_by_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['event_id'], ['event.id'], name=op.f('fk_regulation_amendment_event_id_event'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['from_version_id'], ['regulation_version.id'],
                                name=op.f('fk_regulation_amendment_from_version_id_regulation_version')),
        sa.ForeignKeyConstraint(['to_version_id'], ['regulation_version.id'],
                                name=op.f('fk_regulation_amendment_to_version_id_regulation_version')),
        sa.ForeignKeyConstraint(['recorded_by_id'], ['user.id'],
                                name=op.f('fk_regulation_amendment_recorded_by_id_user')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_regulation_amendment')),
    )
    with op.batch_alter_table('regulation_amendment', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_regulation_amendment_event_id'), ['event_id'], unique=False)
    op.create_table(
        'bid_judgement',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('bid_id', sa.Integer(), nullable=False),
        sa.Column('regulation_version_id', sa.Integer(), nullable=False),
        sa.Column('judged_at', core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('compliant', sa.Boolean(), nullable=False),
        sa.Column('findings', sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(['bid_id'], ['bid.id'], name=op.f('fk_bid_judgement_bid_id_bid'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['regulation_version_id'], ['regulation_version.id'],
                                name=op.f('fk_bid_judgement_regulation_version_id_regulation_version')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_bid_judgement')),
        sa.UniqueConstraint('bid_id', 'regulation_version_id', name='uq_bid_judgement_bid_version'),
    )
    with op.batch_alter_table('bid_judgement', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bid_judgement_bid_id'), ['bid_id'], unique=False)


def downgrade():
    with op.batch_alter_table('bid_judgement', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bid_judgement_bid_id'))
    op.drop_table('bid_judgement')
    with op.batch_alter_table('regulation_amendment', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_regulation_amendment_event_id'))
    op.drop_table('regulation_amendment')
