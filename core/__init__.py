"""Plumbing every package uses and no rule of the regulations: the database, forms and validators, roles and
access checks, money and dates, paging, templating, URLs, the small state machine of every lifecycle, hooks, rate
limits and security headers, a rule's verdict (findings), CSV cells.

Imports nothing of Gambit's but core itself: no domain, and neither of the house's two other rooms, `evidence` (what
the record is made of) and `operations` (how the app is run); `make lint`'s layers contract checks it."""
