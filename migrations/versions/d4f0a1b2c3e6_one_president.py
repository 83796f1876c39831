"""accounts: one FIDE President at a time, kept by a partial unique index (a race of two admins meets it)

Revision ID: d4f0a1b2c3e6
Revises: c3e8f1a2b4d5
Create Date: 2026-12-01 14:10:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'd4f0a1b2c3e6'
down_revision = 'c3e8f1a2b4d5'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.create_index('uq_user_one_president', ['is_president'], unique=True,
                              sqlite_where=sa.text('is_president'), postgresql_where=sa.text('is_president'))


def downgrade():
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.drop_index('uq_user_one_president')
