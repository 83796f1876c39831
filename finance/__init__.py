"""The money of a call: obligations, the payment schedule and prize shares (Art. 11.1.2, 13, 14, 15.6.2), as pure
arithmetic over the call's Regulation - no Flask, no database (`finance.money` rounds, `finance.rules` decides)."""
