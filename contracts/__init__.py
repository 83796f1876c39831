"""Contracts: the contract with the selected organizer (Art. 15.6.1), its payment milestones, the payments FIDE
records against them, reminders, disbursements, the match result and prize deductions (Art. 11.1.2, 13, 14, 15.6.2)."""
