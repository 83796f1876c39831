"""Registration confirms the address by email: a self-registered account stays inactive until its owner follows
the emailed link. Accounts that exist already count as confirmed when they were made.

Revision ID: c3e8f1a2b4d5
Revises: 8d2f3b1a6c41
Create Date: 2025-01-01 00:00:02
"""
import sqlalchemy as sa
from alembic import op

import core.db

# revision identifiers, used by Alembic.
revision = 'c3e8f1a2b4d5'
down_revision = '8d2f3b1a6c41'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.add_column(sa.Column('email_confirmed_at', core.db.UTCDateTime(timezone=True), nullable=True))
    op.execute('UPDATE "user" SET email_confirmed_at = created_at')


def downgrade():
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.drop_column('email_confirmed_at')
