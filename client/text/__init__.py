"""How the table, a replay and the coach's answer read as text."""
