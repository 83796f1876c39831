"""bids: the FIDE President's setting aside of the consultation of the host federation on a sponsor's bid, with
its reason (without it, or the federation's answer, the bid cannot be selected)

Revision ID: d13c3d4e5f63
Revises: d13b2c3d4e52
Create Date: 2026-12-01 16:25:00

"""
from alembic import op
import sqlalchemy as sa

import core.db


revision = 'd13c3d4e5f63'
down_revision = 'd13b2c3d4e52'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.add_column(sa.Column('consultation_set_aside_reason', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('consultation_set_aside_at', core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('consultation_set_aside_by_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_bid_consultation_set_aside_by_id_user'), 'user',
                                    ['consultation_set_aside_by_id'], ['id'])


def downgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_bid_consultation_set_aside_by_id_user'), type_='foreignkey')
        batch_op.drop_column('consultation_set_aside_by_id')
        batch_op.drop_column('consultation_set_aside_at')
        batch_op.drop_column('consultation_set_aside_reason')
