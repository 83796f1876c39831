"""bids: the compliance of the version submitted last, as a column (lists and the compliance gate read it without
parsing the version's JSON); backfilled from bid_version

Revision ID: f15a1c0e7d21
Revises: e17a0c5d9b21
Create Date: 2026-12-01 15:40:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'f15a1c0e7d21'
down_revision = 'e17a0c5d9b21'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.add_column(sa.Column('submitted_compliant', sa.Boolean(), nullable=True))
    op.execute("UPDATE bid SET submitted_compliant = (SELECT v.compliant FROM bid_version v "
               "WHERE v.bid_id = bid.id AND v.number = bid.version) WHERE version > 0")


def downgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.drop_column('submitted_compliant')
