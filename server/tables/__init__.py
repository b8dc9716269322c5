"""The tables: one table's seats, store, play, away seats and rematch, the frames it sends,
the lobby, and who sits where."""
