"""events: the WCOC recommendation a Board amendment followed (1.1) and the grounds of a President's amendment
(16)

Revision ID: e23d0a1b2c3d
Revises: d13d4e5f6a74
Create Date: 2026-12-02 20:30:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'e23d0a1b2c3d'
down_revision = 'd13d4e5f6a74'
branch_labels = None
depends_on = None


def upgrade():
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
