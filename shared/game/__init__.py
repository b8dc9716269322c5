"""The game: cards, the hand's state machine, the rules and house rules, settlement, the
ledger and a session."""
