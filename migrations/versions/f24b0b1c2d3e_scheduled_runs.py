"""core: scheduled_run, one row per periodic job and period (unique), claimed before the job runs, so that each
period runs once however many schedulers run

Revision ID: f24b0b1c2d3e
Revises: e23d0a1b2c3d
Create Date: 2026-12-03 08:00:00

"""
from alembic import op
import sqlalchemy as sa

import core.db


revision = 'f24b0b1c2d3e'
down_revision = 'f24a0b1c2d3e'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'scheduled_run',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('job', sa.String(length=80), nullable=False),
        sa.Column('slot', sa.String(length=40), nullable=False),
        sa.Column('claimed_at', core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('claimed_by', sa.String(length=200), nullable=False),
        sa.Column('queued', sa.Boolean(), nullable=False),
        sa.Column('started_at', core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('finished_at', core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('outcome', sa.String(length=10), nullable=True),
        sa.Column('detail', sa.Text(), nullable=True),
        sa.CheckConstraint("outcome IS NULL OR outcome IN ('ok', 'error')", name=op.f('ck_scheduled_run_outcome')),
        sa.CheckConstraint('(outcome IS NULL) = (finished_at IS NULL)',
                           name=op.f('ck_scheduled_run_finished_whole')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_scheduled_run')),
        sa.UniqueConstraint('job', 'slot', name='uq_scheduled_run_job_slot'),
    )


def downgrade():
    op.drop_table('scheduled_run')
