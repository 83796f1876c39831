"""One decision in force per call (status, superseded_at, a unique partial index); a contract closed by a
correction of the Board's decision (closed_at, closed_reason).

Revision ID: b0a4d1c2e7f9
Revises: 7c1e5a9d3b20
Create Date: 2025-01-01 00:00:00

"""
from alembic import op
import sqlalchemy as sa

import core.db

revision = 'b0a4d1c2e7f9'
down_revision = '7c1e5a9d3b20'
branch_labels = None
depends_on = None

OLD_STATUSES = "'draft', 'issued', 'signed', 'superseded', 'discarded'"
NEW_STATUSES = "'draft', 'issued', 'signed', 'superseded', 'discarded', 'closed'"


def upgrade():
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.add_column(sa.Column('status', sa.String(length=12), server_default='in_force', nullable=False))
        batch_op.add_column(sa.Column('superseded_at', core.db.UTCDateTime(timezone=True), nullable=True))
    # A record another one corrects is superseded, since the correction was recorded.
    op.execute("UPDATE decision SET status = 'superseded', superseded_at = (SELECT c.recorded_at FROM decision c "
               "WHERE c.corrects_id = decision.id) WHERE id IN (SELECT corrects_id FROM decision "
               "WHERE corrects_id IS NOT NULL)")
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.create_check_constraint(op.f('ck_decision_status'), "status IN ('in_force', 'superseded')")
        batch_op.create_check_constraint(op.f('ck_decision_superseded_has_time'),
                                         "(status = 'in_force') = (superseded_at IS NULL)")
        batch_op.create_index('uq_decision_one_in_force', ['event_id'], unique=True,
                              sqlite_where=sa.text("status = 'in_force'"),
                              postgresql_where=sa.text("status = 'in_force'"))
    with op.batch_alter_table('contract', schema=None) as batch_op:
        batch_op.add_column(sa.Column('closed_at', core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('closed_reason', sa.Text(), nullable=True))
        batch_op.drop_constraint(op.f('ck_contract_status'), type_='check')
        batch_op.create_check_constraint(op.f('ck_contract_status'), f"status IN ({NEW_STATUSES})")
        batch_op.create_check_constraint(op.f('ck_contract_closed_has_time_and_reason'),
                                         "status <> 'closed' OR (closed_at IS NOT NULL AND closed_reason IS NOT NULL)")


def downgrade():
    with op.batch_alter_table('contract', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_contract_closed_has_time_and_reason'), type_='check')
        batch_op.drop_constraint(op.f('ck_contract_status'), type_='check')
        batch_op.create_check_constraint(op.f('ck_contract_status'), f"status IN ({OLD_STATUSES})")
        batch_op.drop_column('closed_reason')
        batch_op.drop_column('closed_at')
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.drop_index('uq_decision_one_in_force', sqlite_where=sa.text("status = 'in_force'"),
                            postgresql_where=sa.text("status = 'in_force'"))
        batch_op.drop_constraint(op.f('ck_decision_superseded_has_time'), type_='check')
        batch_op.drop_constraint(op.f('ck_decision_status'), type_='check')
        batch_op.drop_column('superseded_at')
        batch_op.drop_column('status')
