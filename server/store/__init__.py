"""The store: the SQLite database, its schema and writes, and what is read back from it
(history, standings, kept ports)."""
