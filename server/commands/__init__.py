"""`tonk-server`'s command line and its commands (ledger, audit, replay, invite, names,
standings)."""
