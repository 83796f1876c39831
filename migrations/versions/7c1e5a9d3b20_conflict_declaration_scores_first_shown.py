"""conflict_declaration.scores_first_shown_at: when a WCOC member first read other members' scores

Revision ID: 7c1e5a9d3b20
Revises: a1b2c3d4e5f6
Create Date: 2026-12-01 12:50:00.000000

"""
from alembic import op
import sqlalchemy as sa

import core.db


# revision identifiers, used by Alembic.
revision = '7c1e5a9d3b20'
down_revision = 'a1b2c3d4e5f6'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('conflict_declaration', schema=None) as batch_op:
        batch_op.add_column(sa.Column('scores_first_shown_at', core.db.UTCDateTime(timezone=True), nullable=True))


def downgrade():
    with op.batch_alter_table('conflict_declaration', schema=None) as batch_op:
        batch_op.drop_column('scores_first_shown_at')
