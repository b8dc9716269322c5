"""The doors: the SSH door and the web door, their sessions, names and limits, and the
template their session processes are forked from."""
