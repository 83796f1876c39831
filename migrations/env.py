import logging
from logging.config import fileConfig

from alembic import context
from flask import current_app

from operations.logs import Handler

# this is the Alembic Config object, which provides
# access to the values within the .ini file in use.
config = context.config

# Interpret the config file for Python logging, unless the app set up its own (operations.logs: JSON lines in
# production), as it has whenever `flask db` runs: alembic.ini's text handler would replace it, and the migration's
# lines would not come out like every other line. Keep the loggers that already exist (the app's own).
if not any(isinstance(handler, Handler) for handler in logging.getLogger().handlers):
    fileConfig(config.config_file_name, disable_existing_loggers=False)
logger = logging.getLogger('alembic.env')


def get_engine():
    return current_app.extensions['migrate'].db.engine


def get_engine_url():
    try:
        return get_engine().url.render_as_string(hide_password=False).replace(
            '%', '%%')
    except AttributeError:
        return str(get_engine().url).replace('%', '%%')


# add your model's MetaData object here
# for 'autogenerate' support
# from myapp import mymodel
# target_metadata = mymodel.Base.metadata
config.set_main_option('sqlalchemy.url', get_engine_url())
target_db = current_app.extensions['migrate'].db

# other values from the config, defined by the needs of env.py,
# can be acquired:
# my_important_option = config.get_main_option("my_important_option")
# ... etc.


def get_metadata():
    if hasattr(target_db, 'metadatas'):
        return target_db.metadatas[None]
    return target_db.metadata


def run_migrations_offline():
    """Run migrations in 'offline' mode.

    This configures the context with just a URL
    and not an Engine, though an Engine is acceptable
    here as well.  By skipping the Engine creation
    we don't even need a DBAPI to be available.

    Calls to context.execute() here emit the given string to the
    script output.

    """
    url = config.get_main_option("sqlalchemy.url")
    context.configure(
        url=url, target_metadata=get_metadata(), literal_binds=True
    )

    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    """Run migrations in 'online' mode.

    In this scenario we need to create an Engine
    and associate a connection with the context.

    """

    # this callback is used to prevent an auto-migration from being generated
    # when there are no changes to the schema
    # reference: http://alembic.zzzcomputing.com/en/latest/cookbook.html
    def process_revision_directives(context, revision, directives):
        if getattr(config.cmd_opts, 'autogenerate', False):
            script = directives[0]
            if script.upgrade_ops.is_empty():
                directives[:] = []
                logger.info('No changes in schema detected.')

    conf_args = current_app.extensions['migrate'].configure_args
    if conf_args.get("process_revision_directives") is None:
        conf_args["process_revision_directives"] = process_revision_directives

    connectable = get_engine()

    with connectable.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # SQLite alters a table by copying it (batch mode: a new table, the rows copied, the old one dropped,
            # the new one renamed). With foreign keys enforced (core.db turns them on for every connection), the
            # DROP of a table that other rows refer to fails ("FOREIGN KEY constraint failed"), so every such
            # migration failed on a database with data in it. They are off while the migrations run (a PRAGMA
            # that only takes effect outside a transaction: on the driver's connection, before ours begins), and
            # the rows are checked against every foreign key before the migrations' transaction commits.
            _sqlite_foreign_keys(connection, on=False)
        try:
            context.configure(
                connection=connection,
                target_metadata=get_metadata(),
                **conf_args
            )

            with context.begin_transaction():
                # Rows that broke a foreign key before (written while keys were off) are the operator's to mend;
                # the migrations must add none.
                before = _broken_keys(connection) if sqlite else set()
                context.run_migrations()
                if sqlite:
                    broken = sorted(_broken_keys(connection) - before)
                    if broken:
                        raise RuntimeError(f"the migrated rows break a foreign key (table, rowid, parent): "
                                           f"{broken[:10]}; nothing was changed")
        finally:
            if sqlite:
                _sqlite_foreign_keys(connection, on=True)
        at_head = set(context.get_context().get_current_heads()) == set(context.script.get_heads())
    if _upgrading() and at_head:
        _after_upgrade()


def _upgrading() -> bool:
    """Whether this run is an upgrade or a stamp (it names a destination), not `flask db current` or `history`."""
    try:
        return context.get_revision_argument() is not None
    except KeyError:  # no destination was given: a command that only reads
        return False


def _after_upgrade() -> None:
    """Once the schema is at its head, what the code reads from stored rows is brought forward too (app.py's
    `gambit.after_upgrade`: the stored calls given this release's call files, in the audit log), so an upgrade is
    this one command and no second step can be missed. It runs in its own transaction, after the schema's."""
    after = current_app.extensions.get("gambit.after_upgrade")
    if after is not None:
        after()


def _broken_keys(connection) -> set[tuple]:
    """SQLite's rows whose foreign key names no row: (table, rowid, parent table)."""
    return {tuple(row[:3]) for row in connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()}


def _sqlite_foreign_keys(connection, *, on: bool) -> None:
    """Turn SQLite's enforcement of foreign keys on or off for this connection, outside any transaction."""
    raw = connection.connection.driver_connection
    raw.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
