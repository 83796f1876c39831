"""signatures: the secretariat's trust list, and the signatures read from uploaded letters, guarantees and
countersigned contracts

Revision ID: e17a0c5d9b21
Revises: d4f0a1b2c3e6
Create Date: 2026-12-01 16:20:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'e17a0c5d9b21'
down_revision = 'd4f0a1b2c3e6'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'trusted_certificate',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('sha256', sa.String(length=64), nullable=False),
        sa.Column('subject', sa.String(length=500), nullable=False),
        sa.Column('der', sa.LargeBinary(), nullable=False),
        sa.Column('not_after', sa.DateTime(timezone=True), nullable=False),
        sa.Column('added_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('added_by_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['added_by_id'], ['user.id'], name=op.f('fk_trusted_certificate_added_by_id_user'),
                                ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_trusted_certificate')),
        sa.UniqueConstraint('sha256', name=op.f('uq_trusted_certificate_sha256')),
    )
    with op.batch_alter_table('bid_document', schema=None) as batch_op:
        batch_op.add_column(sa.Column('signatures', sa.Text(), nullable=True))
    with op.batch_alter_table('contract', schema=None) as batch_op:
        batch_op.add_column(sa.Column('signed_pdf_signatures', sa.Text(), nullable=True))


def downgrade():
    with op.batch_alter_table('contract', schema=None) as batch_op:
        batch_op.drop_column('signed_pdf_signatures')
    with op.batch_alter_table('bid_document', schema=None) as batch_op:
        batch_op.drop_column('signatures')
    op.drop_table('trusted_certificate')
