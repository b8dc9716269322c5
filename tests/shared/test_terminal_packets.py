"""The web driver's packets, written by the app and read by the door through one module: a
packet read back whole however the bytes are cut, and nothing before the prelude taken."""

from __future__ import annotations

from tonk.shared.wire.terminal_packets import DATA, META, PRELUDE, PacketReader, packet


def test_packets_are_read_back_whole_however_the_bytes_are_cut() -> None:
    stream = (
        b"noise the driver's set-up printed"
        + PRELUDE
        + packet(DATA, b"\x1b[?1049h the table")
        + packet(META, b'{"type": "exit"}')
        + packet(DATA, b"")
    )
    for step in (1, 2, 5, 7, len(stream)):
        reader = PacketReader()
        got = []
        for at in range(0, len(stream), step):
            got += reader.feed(stream[at : at + step])
        assert got == [(DATA, b"\x1b[?1049h the table"), (META, b'{"type": "exit"}'), (DATA, b"")]
        assert not reader.buffer


def test_nothing_before_the_prelude_is_a_packet() -> None:
    reader = PacketReader()
    assert reader.feed(packet(DATA, b"too early")) == []
    assert reader.feed(PRELUDE[:4]) == []
    assert reader.feed(PRELUDE[4:] + packet(DATA, b"now")) == [(DATA, b"now")]
