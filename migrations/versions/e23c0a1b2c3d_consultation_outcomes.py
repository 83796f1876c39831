"""bids: the outcomes of Art. 15.1's consultation on a sponsor's bid as written (FIDE's acceptance of the sponsor's
proposal after the federation refuses or is unable to co-operate), and the FIDE President's final decision under
Art. 16 in place of the "set aside" the regulations never gave

The set-aside columns become the Art. 16 decision's (reason, when, who) and gain its ground. A set-aside recorded
before this revision is kept, reason word for word, as a decision on "a ground not covered by the regulations": the
regulations give no waiver of the consultation, so a case decided without the federation's answer was one they do
not cover. A set-aside row missing its time or author (none should exist) is cleared, as the new constraint
requires the four together.

Revision ID: e23c0a1b2c3d
Revises: e23b0a1b2c3d
Create Date: 2026-12-02 20:30:00

"""
from alembic import op
import sqlalchemy as sa

import core.db


revision = 'e23c0a1b2c3d'
down_revision = 'e23b0a1b2c3d'
branch_labels = None
depends_on = None

ACCEPTED = ("(consultation_accepted_at IS NULL) = (consultation_accepted_by_id IS NULL) AND "
            "(consultation_accepted_at IS NULL OR consultation IN ('refused', 'unable'))")
RULING = ("(consultation_ruling_grounds IS NULL) = (consultation_ruling_reason IS NULL) AND "
          "(consultation_ruling_grounds IS NULL) = (consultation_ruling_at IS NULL) AND "
          "(consultation_ruling_grounds IS NULL) = (consultation_ruling_by_id IS NULL) AND "
          "(consultation_ruling_grounds IS NULL OR consultation_ruling_grounds IN ('not_covered', 'unforeseen'))")


def upgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_bid_consultation_set_aside_by_id_user'), type_='foreignkey')
        batch_op.alter_column('consultation_set_aside_reason', new_column_name='consultation_ruling_reason',
                              existing_type=sa.Text(), existing_nullable=True)
        batch_op.alter_column('consultation_set_aside_at', new_column_name='consultation_ruling_at',
                              existing_nullable=True)
        batch_op.alter_column('consultation_set_aside_by_id', new_column_name='consultation_ruling_by_id',
                              existing_type=sa.Integer(), existing_nullable=True)
    # A second pass: the foreign key names the column by its new name, which the first pass gave it.
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.add_column(sa.Column('consultation_ruling_grounds', sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column('consultation_accepted_at', core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('consultation_accepted_by_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_bid_consultation_ruling_by_id_user'), 'user',
                                    ['consultation_ruling_by_id'], ['id'])
        batch_op.create_foreign_key(batch_op.f('fk_bid_consultation_accepted_by_id_user'), 'user',
                                    ['consultation_accepted_by_id'], ['id'])

    bid = sa.table('bid', sa.column('consultation_ruling_grounds', sa.String), sa.column('consultation_ruling_reason', sa.Text),
                   sa.column('consultation_ruling_at'), sa.column('consultation_ruling_by_id', sa.Integer))
    complete = sa.and_(bid.c.consultation_ruling_reason.isnot(None),
                       sa.func.trim(bid.c.consultation_ruling_reason) != '',
                       bid.c.consultation_ruling_at.isnot(None), bid.c.consultation_ruling_by_id.isnot(None))
    op.execute(bid.update().where(complete).values(consultation_ruling_grounds='not_covered'))
    op.execute(bid.update().where(bid.c.consultation_ruling_grounds.is_(None)).values(
        consultation_ruling_reason=None, consultation_ruling_at=None, consultation_ruling_by_id=None))

    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.create_check_constraint('consultation_accepted', sa.text(ACCEPTED))
        batch_op.create_check_constraint('consultation_ruling', sa.text(RULING))


def downgrade():
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_bid_consultation_ruling'), type_='check')
        batch_op.drop_constraint(batch_op.f('ck_bid_consultation_accepted'), type_='check')
        batch_op.drop_constraint(batch_op.f('fk_bid_consultation_accepted_by_id_user'), type_='foreignkey')
        batch_op.drop_constraint(batch_op.f('fk_bid_consultation_ruling_by_id_user'), type_='foreignkey')
        batch_op.drop_column('consultation_accepted_by_id')
        batch_op.drop_column('consultation_accepted_at')
        batch_op.drop_column('consultation_ruling_grounds')
        batch_op.alter_column('consultation_ruling_reason', new_column_name='consultation_set_aside_reason',
                              existing_type=sa.Text(), existing_nullable=True)
        batch_op.alter_column('consultation_ruling_at', new_column_name='consultation_set_aside_at',
                              existing_nullable=True)
        batch_op.alter_column('consultation_ruling_by_id', new_column_name='consultation_set_aside_by_id',
                              existing_type=sa.Integer(), existing_nullable=True)
    with op.batch_alter_table('bid', schema=None) as batch_op:
        batch_op.create_foreign_key(batch_op.f('fk_bid_consultation_set_aside_by_id_user'), 'user',
                                    ['consultation_set_aside_by_id'], ['id'])
