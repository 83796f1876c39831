"""Every signed-in browser is a row (user_session): listed on the account page, ended one by one, all but the current
one, or all at once. A session begun before this revision names no row, so it is refused and its person logs in
again (the page says why): nothing to bring forward.

Revision ID: f26a0b1c2d3e
Revises: f25b0b1c2d3e
Create Date: 2026-12-06 20:00:00
"""
import sqlalchemy as sa
from alembic import op

import core.db

# revision identifiers, used by Alembic.
revision = 'f26a0b1c2d3e'
down_revision = 'f25b0b1c2d3e'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('user_session',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('ref_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', core.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', core.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('browser', sa.String(length=80), nullable=False),
    sa.Column('address', sa.String(length=64), nullable=False),
    sa.Column('ended_at', core.db.UTCDateTime(timezone=True), nullable=True),
    sa.Column('ended_reason', sa.String(length=80), nullable=False),
    sa.CheckConstraint("(ended_at IS NULL) = (ended_reason = '')",
                       name=op.f('ck_user_session_ended_with_reason')),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], name=op.f('fk_user_session_user_id_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_user_session')),
    sa.UniqueConstraint('ref_hash', name=op.f('uq_user_session_ref_hash'))
    )
    with op.batch_alter_table('user_session', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_user_session_user_id'), ['user_id'], unique=False)


def downgrade():
    with op.batch_alter_table('user_session', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_user_session_user_id'))
    op.drop_table('user_session')
