"""A bid's compliance report as it stands is kept on its row when a service changes the bid (bid.judged_report, with
the key it was judged under and the day): the bid list and the bid's page read it instead of judging again. A row
without one (every bid before this revision) is judged as before when shown, and gets one at its next change:
nothing to bring forward, and nothing is read from the new columns unless their key matches the bid as it is.

Revision ID: f27a0b1c2d3e
Revises: b8e4d2f0a3c5
Create Date: 2026-12-07 06:30:00
"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = 'f27a0b1c2d3e'
down_revision = 'b8e4d2f0a3c5'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judged_report', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('judged_key', sa.String(length=80), nullable=True))
        batch_op.add_column(sa.Column('judged_on', sa.Date(), nullable=True))


def downgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.drop_column('judged_on')
        batch_op.drop_column('judged_key')
        batch_op.drop_column('judged_report')
