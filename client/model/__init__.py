"""What the client knows of the server, without I/O: the lobby, the table, the ledger, the
log, and the reports the screens draw."""
