"""events: whether FIDE requires the signal blocker for the call (owed only "if required by FIDE")

Revision ID: d13a1b2c3d41
Revises: c13a0b1c2d3e
Create Date: 2026-12-01 15:55:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'd13a1b2c3d41'
down_revision = 'c13a0b1c2d3e'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('event', schema=None) as batch_op:
        batch_op.add_column(sa.Column('signal_blocker_required', sa.Boolean(), server_default=sa.false(),
                                      nullable=False))


def downgrade():
    with op.batch_alter_table('event', schema=None) as batch_op:
        batch_op.drop_column('signal_blocker_required')
