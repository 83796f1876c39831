"""Accounts: users, their roles in each call, login and registration, passwords and API tokens.
Below the domains: every step of the flow reads who acts from here; accounts reads no step of the flow."""
