"""The game and the protocol of Tonk, pure: no sockets, no clock, no global random."""
