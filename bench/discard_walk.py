"""The walk of one discard, from the `x` key to the screen, as the code runs it: the files it
passes through and the hops between them (ARCHITECTURE.md, "A discard from the key to the
screen"; issue 34's target: at most 30 hops through 18 files, each file visited once on the
way in and once on the way out).

    python bench/discard_walk.py            # the walk, its hops and files
    python bench/discard_walk.py --calls    # and each stack it is made of
    python bench/discard_walk.py --websockets   # websockets' echo, by the same rules

`--websockets` walks the anchor issue 34 names for "one sans-I/O connection per end" by the same
rules (`pip install websockets` first): one text message sent by its asyncio client, echoed by
its server's handler and read back. Its milestones are where the message changes form, as
tonk's: sent, framed, the frames' bytes, a frame parsed, the message put to the reader's queue,
taken by the handler, and the echo read by the client.

A real server (in this process, on loopback) and the real client (Textual's Pilot, 80x24)
play the stacked hand of the tests: the client draws, then `x` discards. From the key until the
hand is drawn without the card, every call is seen (`sys.setprofile`). At each stop that
carries the discard on (`MILESTONES`: where it changes form) and each hand-off between tasks
(`HAND_OFFS`: the client's outbox, a socket, the App's messages) the stack of tonk's own frames
is kept, a file's frames one after another as one. The walk goes from one stack's end back out
to where the next one parts from it, then in to the next one's end. A hop is one move between
two files; the files are the distinct ones walked. Calls that return without carrying the
discard on (a card's text, the records' machinery, drawing the other widgets) are not in it.
Only the discard's tasks are followed: the server's clock, its housekeeping and the lobby's
ticks are left out, and the bot waits 10 s before its turn.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "kit"))

import tonk.client
import tonk.server
import tonk.shared
from clientkit import at_my_turn, hand_text, joined_app, table_request, wait_for
from netclient import start_server
from tonk.shared.game.cards import format_cards

#: The files every layer asks for a value and gets it at once: not hops of the walk.
LEAVES = frozenset(
    {
        "shared/records.py",
        "shared/game/cards.py",
        "shared/game/words.py",
        "shared/game/rules.py",
        "shared/stats.py",
    }
)
#: Tasks of the server that run by the clock, not for the discard.
QUIET_TASKS = ("clock", "housekeeping", "lobby")


#: Where each of tonk's three packages is imported from, as its code objects name their files:
#: the checkout's own folders (an editable install) or a link tree of them (a strict one).
PACKAGE_FOLDERS = tuple(
    (str(Path(package.__file__).parent) + "/", name + "/")
    for name, package in (("client", tonk.client), ("server", tonk.server), ("shared", tonk.shared))
    if package.__file__ is not None
)


def tonk_file(frame: FrameType) -> str | None:
    """`client/app.py` for a frame of tonk's own code, else None."""
    path = frame.f_code.co_filename
    for folder, name in PACKAGE_FOLDERS:
        if path.startswith(folder):
            return name + path[len(folder) :]
    return None


#: Where the discard leaves one task (or one process's side) for the next: an asyncio queue, a
#: socket's transport, a Textual message posted.
HAND_OFFS = frozenset(
    {
        ("asyncio/queues.py", "Queue.put_nowait"),
        ("asyncio/selector_events.py", "_SelectorSocketTransport.write"),
        ("asyncio/selector_events.py", "_SelectorSocketTransport.writelines"),
        ("textual/message_pump.py", "MessagePump.post_message"),
    }
)
POSTED = "textual/message_pump.py"
#: The files whose Textual messages carry the discard (the App's requests, the server's news
#: as reports); the screen's messages to its other widgets (the log, the key bar) do not.
POSTERS = frozenset({"client/keys.py", "client/app.py", "client/connection.py"})
#: The stops that carry the discard on, from the key to the screen: where it changes form
#: (a key, a request, a frame, a message read, the core's move, the stored action, each seat's
#: update, the client's table, a report, the hand drawn). The walk is the code's: each stop is
#: seen as it runs, with the stack of calls that led to it.
MILESTONES = frozenset(
    {
        ("client/screens/table.py", "TableScreen.action_discard"),
        ("shared/wire/client_messages.py", "action_request"),
        ("shared/wire/link.py", "ClientLink.number"),
        ("shared/wire/protocol.py", "encode"),
        ("shared/wire/protocol.py", "decode_payload"),
        ("shared/wire/protocol.py", "validate"),
        ("shared/wire/link.py", "ServerLink.receive"),
        ("shared/wire/client_messages.py", "action_of"),
        ("shared/game/legality.py", "check"),
        ("shared/game/hand.py", "Hand._discard"),
        ("server/tables/table_store.py", "TableStore.write"),
        ("shared/game/hand.py", "Hand.view"),
        ("shared/wire/server_messages.py", "Update.from_wire"),
        ("shared/wire/link.py", "ClientLink._update"),
        ("client/model/tablelog.py", "TableLog.event"),
        ("client/model/tableseen.py", "TableSeen.state"),
        ("client/messages.py", "wrapped"),
        ("client/widgets/table.py", "HandView.watch_cards"),
        ("client/text/render.py", "hand_lines"),
    }
)


def stop_of(frame: FrameType) -> tuple[str, str] | None:
    """The frame's (file, function) if it is a hand-off or a milestone."""
    code = frame.f_code
    where = tonk_file(frame)
    if where is not None:
        stop = (where, code.co_qualname)
        return stop if stop in MILESTONES else None
    path = code.co_filename
    for place, name in HAND_OFFS:
        if code.co_qualname == name and path.endswith(place):
            caller = frame.f_back
            while caller is not None and tonk_file(caller) is None:
                caller = caller.f_back
            if (caller is not None and tonk_file(caller) in POSTERS) or place != POSTED:
                return (place, name)
    return None


class Walk:
    """The stacks of tonk's frames at each hand-off while `on`: each a list of (file,
    function), outermost first, a file's consecutive frames as one."""

    def __init__(self) -> None:
        self.on = False
        self.stacks: list[list[tuple[str, str]]] = []

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.on or event != "call":
            return
        code = frame.f_code
        end = code.co_qualname == "HandView.render"
        if not end and stop_of(frame) is None:
            return
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        if task is not None and task.get_name().startswith(QUIET_TASKS):
            return
        if end and "5s" in format_cards(frame.f_locals["self"].cards):
            return
        stack: list[tuple[str, str]] = []
        at: FrameType | None = frame
        while at is not None:
            where = tonk_file(at)
            if where is not None and where not in LEAVES:
                if stack and stack[-1][0] == where:
                    stack[-1] = (where, at.f_code.co_qualname)  # (the outermost function)
                else:
                    stack.append((where, at.f_code.co_qualname))
            at = at.f_back
        if stack:
            self.stacks.append(stack[::-1])
        if end:
            self.on = False  # the hand drawn without the card: the walk's end


async def walk_a_discard() -> list[list[tuple[str, str]]]:
    walk = Walk()
    with tempfile.TemporaryDirectory() as tmp:
        async with start_server(Path(tmp), next_hand_delay=600.0) as server:
            app = joined_app(server.port, Path(tmp) / "state", table=table_request(bot_pause=10.0))
            async with at_my_turn(app) as pilot:
                await pilot.press("d")
                await wait_for(pilot, lambda: "8s" in hand_text(app), "the 8s drawn")
                await pilot.pause(0.3)  # (quiet: the draw's answers all shown)
                sys.setprofile(walk.profile)
                walk.on = True
                try:
                    await pilot.press("x")
                    await wait_for(pilot, lambda: not walk.on, "the hand drawn without the 5s")
                finally:
                    walk.on = False
                    sys.setprofile(None)
    return walk.stacks


def walk_of(stacks: list[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """The walk through the stacks, as the code goes: from one stack's end back out to where
    the next one parts from it (out of its task altogether for a new task), then in to the
    next one's end; it ends at the last stack's end (the hand drawn). A stop is a file entered
    or gone back to, with its outermost function on that stack."""
    walk: list[tuple[str, str]] = []
    previous: list[tuple[str, str]] = []
    for stack in stacks:
        shared = 0
        while shared < min(len(stack), len(previous)) and stack[shared] == previous[shared]:
            shared += 1
        walk.extend(reversed(previous[max(shared - 1, 0) : -1]))
        walk.extend(stack[shared:])
        previous = stack
    # (a file's stops one after another are one stop)
    out: list[tuple[str, str]] = []
    for stop in walk:
        if not out or out[-1][0] != stop[0]:
            out.append(stop)
    return out


#: websockets' stops, by the same rules: where one text message changes form.
WEBSOCKETS_MILESTONES = frozenset(
    {
        ("asyncio/connection.py", "Connection.send"),
        ("protocol.py", "Protocol.send_text"),
        ("frames.py", "Frame.serialize"),
        ("protocol.py", "Protocol.data_to_send"),
        ("frames.py", "Frame.parse"),
        ("protocol.py", "Protocol.recv_frame"),
        ("asyncio/messages.py", "Assembler.put"),
        ("asyncio/messages.py", "Assembler.get"),
        ("app.py", "echoed"),
        ("app.py", "read_back"),
    }
)


def echoed(message: str) -> str:
    """The server's handler has the message (a milestone of the websockets walk)."""
    return message


def read_back(message: str) -> str:
    """The client has the echo: the websockets walk's end."""
    return message


async def walk_websockets() -> list[list[tuple[str, str]]]:
    """The stacks of one message's round trip through websockets, as `Walk` keeps tonk's: the
    library's own files by their path in it, this script's as `app.py` (the application)."""
    try:
        import websockets
        from websockets.asyncio.client import connect
        from websockets.asyncio.server import ServerConnection, serve
    except ImportError:
        raise SystemExit("--websockets needs websockets: pip install websockets") from None
    library = str(Path(websockets.__file__).parent) + "/"
    here = str(Path(__file__).resolve())
    stacks: list[list[tuple[str, str]]] = []
    on = False

    def where(frame: FrameType) -> str | None:
        path = frame.f_code.co_filename
        if path.startswith(library):
            return path[len(library) :]
        return "app.py" if path == here else None

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal on
        if not on or event != "call":
            return
        if (where(frame), frame.f_code.co_qualname) not in WEBSOCKETS_MILESTONES:
            return
        stack: list[tuple[str, str]] = []
        at: FrameType | None = frame
        while at is not None:
            file = where(at)
            if file is not None:
                if stack and stack[-1][0] == file:
                    stack[-1] = (file, at.f_code.co_qualname)
                else:
                    stack.append((file, at.f_code.co_qualname))
            at = at.f_back
        stacks.append(stack[::-1])
        if frame.f_code.co_qualname == "read_back":
            on = False

    async def echo(connection: ServerConnection) -> None:
        async for message in connection:
            await connection.send(echoed(str(message)))

    async with serve(echo, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", compression=None) as client:
            await client.send("warm up")
            await client.recv()
            sys.setprofile(profile)
            on = True
            try:
                await client.send("x")
                read_back(str(await client.recv()))
            finally:
                sys.setprofile(None)
    return stacks


def report(stacks: list[list[tuple[str, str]]], calls: bool) -> str:
    lines = []
    if calls:
        for n, stack in enumerate(stacks):
            lines.append(f"hand-off {n}: " + " > ".join(f"{w}:{f}" for w, f in stack))
    walk = walk_of(stacks)
    files = Counter(where for where, _ in walk)
    for n, (where, function) in enumerate(walk):
        lines.append(f"{n:3} {where}  {function}")
    again = {where: count for where, count in files.items() if count > 2}
    lines.append(f"{len(walk) - 1} hops through {len(files)} files")
    lines.append(
        "files visited more than once in and once out: "
        + (", ".join(f"{f} ({c} stops)" for f, c in sorted(again.items())) or "none")
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", action="store_true", help="each hand-off's stack too")
    parser.add_argument(
        "--websockets", action="store_true", help="walk websockets' echo of one message instead"
    )
    args = parser.parse_args()
    walk = walk_websockets if args.websockets else walk_a_discard
    print(report(asyncio.run(walk()), args.calls))


if __name__ == "__main__":
    main()
