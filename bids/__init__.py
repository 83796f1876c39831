"""Bids: the Art. 15.2 proposal a federation or sponsor makes - its data (data, sections, shape), its compliance
checks (rules), its lifecycle (lifecycle, services) and the bidder's pages (forms, views)."""
