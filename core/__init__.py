"""Plumbing every package uses and no rule of the regulations: the database, forms and validators, roles and
access checks, money and dates, the audit log, mail, PDFs and their signatures, storage, hashing, hooks."""
