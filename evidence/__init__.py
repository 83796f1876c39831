"""The evidence: what Gambit's record is made of and how it is proved. The audit chain (evidence.audit) and its pages
(evidence.audit_views, blueprint "audit"), the rows bound to it (evidence.rows: a model declaring `__evidence__`),
PDFs (evidence.pdf), their signatures and the trust list (evidence.signing, evidence.trust, their pages and the
`flask pdf` commands in evidence.signature_views, blueprint "signatures"), the stored files (evidence.storage) and
their digests (evidence.hashing).

May import core only: it knows no domain and nothing of how the app is operated (`operations` records in the
evidence, never the other way); `make lint`'s layers contract checks it."""
