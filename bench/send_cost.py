"""What one `send` of a view-sized frame costs the sender's CPU on loopback TCP, when the reader
is asleep in the kernel (as each of a table's four clients is when its view is sent) and when
it is busy reading back to back.

    python bench/send_cost.py [--bytes 360] [--sends 5000]

On loopback the kernel does the receiver's work in the sender's `send`: queueing the data on
the peer socket and waking the sleeping reader are paid by the sender.
"""

from __future__ import annotations

import argparse
import os
import socket
import time


def connected_pair() -> tuple[socket.socket, socket.socket]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    for sock in (client, server):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return client, server


def cpu_per_send(size: int, sends: int, gap: float) -> float:
    """Microseconds of this process's CPU per `send`, with `gap` seconds of spinning between
    sends (time for the reader, in another process, to fall asleep again)."""
    sender, receiver = connected_pair()
    pid = os.fork()
    if pid == 0:  # the reader: reads until it has every byte
        sender.close()
        left = size * sends
        while left > 0:
            data = receiver.recv(65536)
            if not data:
                break
            left -= len(data)
        os._exit(0)
    receiver.close()
    time.sleep(0.1)
    message = b"x" * size
    clock = time.process_time
    spent = 0.0
    for _ in range(sends):
        start = clock()
        sender.send(message)
        spent += clock() - start
        until = time.perf_counter() + gap
        while time.perf_counter() < until:
            pass
    os.waitpid(pid, 0)
    sender.close()
    overhead = 0.0  # the clock reads themselves
    for _ in range(sends):
        start = clock()
        overhead += clock() - start
    return (spent - overhead) / sends * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=360, help="frame size (tonk's mean: ~360)")
    parser.add_argument("--sends", type=int, default=5000)
    args = parser.parse_args()
    asleep = cpu_per_send(args.bytes, args.sends, 200e-6)
    busy = cpu_per_send(args.bytes, args.sends, 0.0)
    print(f"{args.bytes}-byte send, reader asleep between sends: {asleep:.1f} us of CPU")
    print(f"{args.bytes}-byte send, back to back (reader busy):   {busy:.1f} us of CPU")


if __name__ == "__main__":
    main()
