"""contracts: deductions from a player's prize balance (fines, forfeits, withheld protest fees), each with its
article and reason

Revision ID: d13b2c3d4e52
Revises: d13a1b2c3d41
Create Date: 2026-12-01 16:20:00

"""
from alembic import op
import sqlalchemy as sa

import core.db


revision = 'd13b2c3d4e52'
down_revision = 'd13a1b2c3d41'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'prize_deduction',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('milestone_id', sa.Integer(), nullable=False),
        sa.Column('rule_key', sa.String(length=60), nullable=False),
        sa.Column('article', sa.String(length=20), nullable=False),
        sa.Column('amount', sa.Numeric(precision=14, scale=2), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('decided_on', sa.Date(), nullable=False),
        sa.Column('recorded_at', core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('recorded_by_id', sa.Integer(), nullable=True),
        sa.CheckConstraint('amount > 0', name=op.f('ck_prize_deduction_amount')),
        sa.ForeignKeyConstraint(['milestone_id'], ['contract_milestone.id'],
                                name=op.f('fk_prize_deduction_milestone_id_contract_milestone')),
        sa.ForeignKeyConstraint(['recorded_by_id'], ['user.id'], name=op.f('fk_prize_deduction_recorded_by_id_user')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_prize_deduction')),
    )
    with op.batch_alter_table('prize_deduction', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_prize_deduction_milestone_id'), ['milestone_id'], unique=False)


def downgrade():
    with op.batch_alter_table('prize_deduction', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_prize_deduction_milestone_id'))
    op.drop_table('prize_deduction')
