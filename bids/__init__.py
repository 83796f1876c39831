"""Bids: the Art. 15.2 proposal a federation or sponsor makes, its compliance rules and its lifecycle."""
