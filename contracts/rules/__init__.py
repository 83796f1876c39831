"""The contract's pure rules, by concern: `terms` (the contract's terms and milestones), `tracker` (where each
milestone stands, payments, the bank guarantee), `result` (the match result, the prize balances and deductions),
`reminders` and `countersigning`. No Flask, no session; the contract's lifecycle is `contracts.lifecycle`."""
