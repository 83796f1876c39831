"""decision: why no Presidential Board meeting could be held, required for the FIDE President's decision alone
(Art. 15.5: "If a Presidential Board meeting cannot be held, the FIDE President takes the decision in
consultation with the WCOC"); the day each WCOC member was consulted is kept in the consultations JSON.

Revision ID: e23b0a1b2c3d
Revises: d13d4e5f6a74
Create Date: 2026-12-02 20:30:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'e23b0a1b2c3d'
down_revision = 'd13d4e5f6a74'
branch_labels = None
depends_on = None

# A President's decision recorded before the reason was asked for says so, rather than leave the record blank.
NOT_RECORDED = ("Not recorded: this decision was recorded before Gambit asked why no Presidential Board meeting "
                "could be held.")


def upgrade():
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.add_column(sa.Column('no_meeting_reason', sa.Text(), server_default='', nullable=False))
    op.execute(sa.text("UPDATE decision SET no_meeting_reason = :text WHERE method = 'president'")
               .bindparams(text=NOT_RECORDED))
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.create_check_constraint(op.f('ck_decision_president_says_why'),
                                         "(method = 'president') = (no_meeting_reason <> '')")


def downgrade():
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_decision_president_says_why'), type_='check')
        batch_op.drop_column('no_meeting_reason')
