"""API tokens in their own table: several per user, listed with their creation and last use, revoked one by one
or all at once (password change, deactivation). An existing token carries over.

Revision ID: 8d2f3b1a6c41
Revises: 7c1e2a9d4b30
Create Date: 2025-01-01 00:00:01
"""
import sqlalchemy as sa
from alembic import op

import core.db

# revision identifiers, used by Alembic.
revision = '8d2f3b1a6c41'
down_revision = '7c1e2a9d4b30'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('api_token',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', core.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_used_at', core.db.UTCDateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', core.db.UTCDateTime(timezone=True), nullable=True),
    sa.Column('revoked_reason', sa.String(length=80), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], name=op.f('fk_api_token_user_id_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_token')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_token_token_hash'))
    )
    with op.batch_alter_table('api_token', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_token_user_id'), ['user_id'], unique=False)
    op.execute("INSERT INTO api_token (user_id, token_hash, created_at, revoked_reason) "
               "SELECT id, api_token_hash, COALESCE(api_token_created_at, created_at), '' FROM \"user\" "
               "WHERE api_token_hash IS NOT NULL")
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_user_api_token_hash'), type_='unique')
        batch_op.drop_column('api_token_created_at')
        batch_op.drop_column('api_token_hash')


def downgrade():
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.add_column(sa.Column('api_token_hash', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('api_token_created_at', core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.create_unique_constraint(batch_op.f('uq_user_api_token_hash'), ['api_token_hash'])
    # Only the newest live token per user fits the old column.
    op.execute("UPDATE \"user\" SET api_token_hash = (SELECT t.token_hash FROM api_token t WHERE t.user_id = "
               "\"user\".id AND t.revoked_at IS NULL ORDER BY t.id DESC LIMIT 1), api_token_created_at = (SELECT "
               "t.created_at FROM api_token t WHERE t.user_id = \"user\".id AND t.revoked_at IS NULL ORDER BY t.id "
               "DESC LIMIT 1)")
    with op.batch_alter_table('api_token', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_token_user_id'))
    op.drop_table('api_token')
