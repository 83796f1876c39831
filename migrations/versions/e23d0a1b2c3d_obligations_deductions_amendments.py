"""contracts: who receives each part of a prize deduction (Art. 5.2: the Organizer and FIDE), and a withheld
protest fee returned when the protest is accepted (7.3.1); events: the WCOC recommendation a Board amendment
followed (1.1) and the grounds of a President's amendment (16)

Revision ID: e23d0a1b2c3d
Revises: e23c0a1b2c3d
Create Date: 2026-12-02 20:30:00

"""
from alembic import op
import sqlalchemy as sa

import core.db


revision = 'e23d0a1b2c3d'
down_revision = 'e23c0a1b2c3d'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('prize_deduction', schema=None) as batch_op:
        batch_op.add_column(sa.Column('parts_json', sa.Text(), nullable=False, server_default='[]'))
        batch_op.add_column(sa.Column('returned_on', sa.Date(), nullable=True))
        batch_op.add_column(sa.Column('return_reason', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('returned_at', core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('returned_by_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_prize_deduction_returned_by_id_user'), 'user',
                                    ['returned_by_id'], ['id'])
        batch_op.create_check_constraint(
            batch_op.f('ck_prize_deduction_returned_whole'),
            '(returned_on IS NULL) = (returned_at IS NULL) AND (returned_on IS NULL) = (return_reason IS NULL)')
    with op.batch_alter_table('regulation_amendment', schema=None) as batch_op:
        batch_op.add_column(sa.Column('recommended_by', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('recommended_on', sa.Date(), nullable=True))
        batch_op.add_column(sa.Column('recommendation', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('grounds', sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column('grounds_label', sa.String(length=300), nullable=True))
        batch_op.create_check_constraint(
            batch_op.f('ck_regulation_amendment_recommendation_whole'),
            '(recommended_by IS NULL) = (recommended_on IS NULL) AND '
            '(recommended_by IS NULL) = (recommendation IS NULL)')
        batch_op.create_check_constraint(batch_op.f('ck_regulation_amendment_grounds_labelled'),
                                         '(grounds IS NULL) = (grounds_label IS NULL)')


def downgrade():
    with op.batch_alter_table('regulation_amendment', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_regulation_amendment_grounds_labelled'), type_='check')
        batch_op.drop_constraint(batch_op.f('ck_regulation_amendment_recommendation_whole'), type_='check')
        batch_op.drop_column('grounds_label')
        batch_op.drop_column('grounds')
        batch_op.drop_column('recommendation')
        batch_op.drop_column('recommended_on')
        batch_op.drop_column('recommended_by')
    with op.batch_alter_table('prize_deduction', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_prize_deduction_returned_whole'), type_='check')
        batch_op.drop_constraint(batch_op.f('fk_prize_deduction_returned_by_id_user'), type_='foreignkey')
        batch_op.drop_column('returned_by_id')
        batch_op.drop_column('returned_at')
        batch_op.drop_column('return_reason')
        batch_op.drop_column('returned_on')
        batch_op.drop_column('parts_json')
