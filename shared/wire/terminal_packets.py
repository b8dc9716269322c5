"""The packets between a web door session's table app and the door (the protocol of Textual's
web driver, as textual-serve reads it): a kind byte (`D` the terminal's bytes, `M` JSON for the
driver, `P` a file), the payload's length in 4 bytes (big-endian), the payload. The app writes
a prelude line before its first packet. Sans I/O: bytes in, packets out."""

from __future__ import annotations

#: The terminal's bytes; JSON for the app's driver (a size, the focus) or from it (its exit).
DATA, META = b"D", b"M"
#: What the web driver writes before its first packet.
PRELUDE = b"__GANGLION__\n"
#: The kind byte and the length before each payload.
HEADER = 5


def packet(kind: bytes, payload: bytes) -> bytes:
    """One packet: its kind, its payload's length, its payload."""
    return kind + len(payload).to_bytes(4, "big") + payload


class PacketReader:
    """The app's output as packets: `feed` takes the bytes as they come and returns the
    packets now whole, as (kind, payload); anything before the prelude is dropped."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.started = False  # the prelude has come: packets follow

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        self.buffer += data
        if not self.started:
            found = self.buffer.find(PRELUDE)
            if found < 0:
                del self.buffer[: -len(PRELUDE)]  # (a part of the prelude may end it)
                return []
            del self.buffer[: found + len(PRELUDE)]
            self.started = True
        packets = []
        while len(self.buffer) >= HEADER:
            size = int.from_bytes(self.buffer[1:HEADER], "big")
            if len(self.buffer) < HEADER + size:
                break
            packets.append((bytes(self.buffer[:1]), bytes(self.buffer[HEADER : HEADER + size])))
            del self.buffer[: HEADER + size]
        return packets
