"""A second factor for signing in: each person's TOTP secret (sealed), its last accepted time-step, wrong codes and
the lock; one-time recovery codes (hashed); passkeys (WebAuthn credentials). Nothing existing is changed: every
account starts without a second factor and, when its role requires one, enrols at its next sign-in.

Revision ID: a7f3c9e1b2d4
Revises: f26a0b1c2d3e
Create Date: 2026-12-06 20:10:00
"""
import sqlalchemy as sa
from alembic import op

import core.db

# revision identifiers, used by Alembic.
revision = 'a7f3c9e1b2d4'
down_revision = 'f26a0b1c2d3e'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'user_second_factor',
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('totp_secret', sa.String(length=255), nullable=True),
        sa.Column('totp_enrolled_at', core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('totp_last_step', sa.Integer(), nullable=True),
        sa.Column('failures', sa.Integer(), nullable=False),
        sa.Column('locked_until', core.db.UTCDateTime(timezone=True), nullable=True),
        sa.CheckConstraint('(totp_secret IS NULL) = (totp_enrolled_at IS NULL)',
                           name=op.f('ck_user_second_factor_totp_enrolled')),
        sa.CheckConstraint('failures >= 0', name=op.f('ck_user_second_factor_failures')),
        sa.ForeignKeyConstraint(['user_id'], ['user.id'], name=op.f('fk_user_second_factor_user_id_user'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('user_id', name=op.f('pk_user_second_factor')),
    )
    op.create_table(
        'user_recovery_code',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('code_hash', sa.String(length=255), nullable=False),
        sa.Column('created_at', core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('used_at', core.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['user.id'], name=op.f('fk_user_recovery_code_user_id_user'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_user_recovery_code')),
    )
    op.create_index(op.f('ix_user_recovery_code_user_id'), 'user_recovery_code', ['user_id'], unique=False)
    op.create_table(
        'user_passkey',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=80), nullable=False),
        sa.Column('credential_id', sa.String(length=1400), nullable=False),
        sa.Column('public_key', sa.Text(), nullable=False),
        sa.Column('sign_count', sa.Integer(), nullable=False),
        sa.Column('created_at', core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('last_used_at', core.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['user.id'], name=op.f('fk_user_passkey_user_id_user'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_user_passkey')),
        sa.UniqueConstraint('credential_id', name=op.f('uq_user_passkey_credential_id')),
    )
    op.create_index(op.f('ix_user_passkey_user_id'), 'user_passkey', ['user_id'], unique=False)


def downgrade():
    op.drop_index(op.f('ix_user_passkey_user_id'), table_name='user_passkey')
    op.drop_table('user_passkey')
    op.drop_index(op.f('ix_user_recovery_code_user_id'), table_name='user_recovery_code')
    op.drop_table('user_recovery_code')
    op.drop_table('user_second_factor')
