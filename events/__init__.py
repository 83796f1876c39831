"""The call for bids: its Regulation loaded from seed_data (validated, versioned, amended), the provenance of every
rule it applies, its status lifecycle and its public pages."""
