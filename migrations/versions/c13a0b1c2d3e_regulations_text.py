"""events: the regulations' text stored with each regulation version (its SHA-256 is in the snapshot); a decision
records the regulation version it was taken under

Revision ID: c13a0b1c2d3e
Revises: f15a1c0e7d21
Create Date: 2026-12-01 15:40:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'c13a0b1c2d3e'
down_revision = 'f15a1c0e7d21'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('regulation_version', schema=None) as batch_op:
        batch_op.add_column(sa.Column('regulations_text', sa.Text(), nullable=True))
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.add_column(sa.Column('regulation_version_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key('fk_decision_regulation_version_id_regulation_version',
                                    'regulation_version', ['regulation_version_id'], ['id'])


def downgrade():
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.drop_constraint('fk_decision_regulation_version_id_regulation_version', type_='foreignkey')
        batch_op.drop_column('regulation_version_id')
    with op.batch_alter_table('regulation_version', schema=None) as batch_op:
        batch_op.drop_column('regulations_text')
