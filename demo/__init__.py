"""The demo that `flask seed --demo` (and so `make run`) loads: accounts, bids, scores, the board's decision and a
contract, made through the domains' services, the guarded paths a user takes."""
