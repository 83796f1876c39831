"""The operations: how the app is run. Mail: its outbox (operations.outbox, the rows), their delivery
(operations.delivery, and `flask mail`) and their pages (operations.outbox_views, blueprint "outbox"); background
jobs on Redis and RQ (operations.jobs), the scheduler (operations.scheduler), backups and their restore
(operations.backup, `flask backup`), the health checks (operations.readiness, operations.health_views: /livez,
/healthz, /readyz), the logs (operations.logs) and the cache of versioned pages (operations.page_cache).

May import core and evidence (a message sent, a backup made or restored is recorded in the audit chain); it knows no
domain: a domain asks operations to send or to run, never the other way. `make lint`'s layers contract checks it."""
