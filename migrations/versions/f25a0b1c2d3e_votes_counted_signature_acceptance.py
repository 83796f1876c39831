"""board: the votes a decision counted (ids and choices), read inside the call's lock; contracts: an organizer's
signature that is not trusted, accepted explicitly by the secretariat (why, when, who)

Revision ID: f25a0b1c2d3e
Revises: f24b0b1c2d3e
Create Date: 2026-12-03 08:00:00

"""
from alembic import op
import sqlalchemy as sa

import core.db


revision = 'f25a0b1c2d3e'
down_revision = 'f24b0b1c2d3e'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.add_column(sa.Column('votes', sa.Text(), nullable=False, server_default='[]'))
    with op.batch_alter_table('contract', schema=None) as batch_op:
        batch_op.add_column(sa.Column('signature_accepted_reason', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('signature_accepted_at', core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('signature_accepted_by_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_contract_signature_accepted_by_id_user'), 'user',
                                    ['signature_accepted_by_id'], ['id'])
        batch_op.create_check_constraint(
            batch_op.f('ck_contract_signature_acceptance_whole'),
            '(signature_accepted_reason IS NULL) = (signature_accepted_at IS NULL)')


def downgrade():
    with op.batch_alter_table('contract', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_contract_signature_acceptance_whole'), type_='check')
        batch_op.drop_constraint(batch_op.f('fk_contract_signature_accepted_by_id_user'), type_='foreignkey')
        batch_op.drop_column('signature_accepted_by_id')
        batch_op.drop_column('signature_accepted_at')
        batch_op.drop_column('signature_accepted_reason')
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.drop_column('votes')
