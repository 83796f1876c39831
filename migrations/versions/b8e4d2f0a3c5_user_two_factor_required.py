"""The secretariat can require a second factor of one person, whatever their roles (`flask users two-factor-require`,
or the person's user page): a flag on the account. Every existing account starts without it (required only by its
role, as before): nothing to bring forward.

Revision ID: b8e4d2f0a3c5
Revises: a7f3c9e1b2d4
Create Date: 2026-12-06 20:45:00
"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = 'b8e4d2f0a3c5'
down_revision = 'a7f3c9e1b2d4'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.add_column(sa.Column('two_factor_required', sa.Boolean(), server_default=sa.false(),
                                      nullable=False))


def downgrade():
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.drop_column('two_factor_required')
