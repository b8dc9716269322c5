"""A door session's process: the table app on a pseudo-terminal, and the template such
processes are forked from."""
