"""The Presidential Board: the dossiers and the board pack (PDF, rendered in the background when long), the votes,
the decision record and its minutes (Art. 15.5)."""
