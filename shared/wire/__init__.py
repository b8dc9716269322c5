"""The wire: frames, the messages of the protocol as typed values, and a connection's life,
sans-I/O."""
