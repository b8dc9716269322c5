"""tonk-server with its SSH door, for bench/ssh_door.py: `--sessions process` is the door as
shipped (each session's app a child process on a pseudo-terminal the door feeds);
`--sessions inprocess` is the other design, measured against it: the app in the server's own
process with a Textual driver on the SSH channel (bench/door_inprocess.py). Takes
tonk-server's own options after those; prints the same two lines.

    python bench/door_server.py --sessions inprocess --host 127.0.0.1 --port 0 --ssh-port 0 ...
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tonk.server.commands import cli
from tonk.server.doors.door import SSHDoor


def main() -> int:
    argv = sys.argv[1:]
    mode = "process"
    if argv[:1] == ["--sessions"]:
        mode, argv = argv[1], argv[2:]
    if mode == "inprocess":
        from door_inprocess import InProcessSession

        original = SSHDoor.__init__

        def in_process(self: SSHDoor, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            self.session_class = InProcessSession

        SSHDoor.__init__ = in_process  # type: ignore[method-assign]
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
