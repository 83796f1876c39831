"""The money of a call for bids: obligations, payment schedule and prize shares (Art. 11.1.2, 13, 14, 15.6.2).

Pure arithmetic over an event's `Regulation`; no Flask, no database. `finance.money` holds the rounding
policy, `finance.rules` the rules.
"""
