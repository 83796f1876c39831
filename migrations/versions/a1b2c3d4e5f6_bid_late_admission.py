"""bids: a late admission recorded by the secretariat, with its reason (the call's bidding procedure)

Revision ID: a1b2c3d4e5f6
Revises: 5951545ba0a7
Create Date: 2026-12-01 13:10:00

"""
from alembic import op
import sqlalchemy as sa

import core.db


revision = 'a1b2c3d4e5f6'
down_revision = '5951545ba0a7'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.add_column(sa.Column('late_admitted_at', core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('late_admitted_reason', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('late_admitted_by_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_bid_late_admitted_by_id_user'), 'user', ['late_admitted_by_id'],
                                    ['id'])
        batch_op.create_check_constraint(
            batch_op.f('ck_bid_late_admission_complete'),
            "(late_admitted_at IS NULL) = (late_admitted_reason IS NULL) AND "
            "(late_admitted_at IS NULL) = (late_admitted_by_id IS NULL)")


def downgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_bid_late_admission_complete'), type_='check')
        batch_op.drop_constraint(batch_op.f('fk_bid_late_admitted_by_id_user'), type_='foreignkey')
        batch_op.drop_column('late_admitted_by_id')
        batch_op.drop_column('late_admitted_reason')
        batch_op.drop_column('late_admitted_at')
