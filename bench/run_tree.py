"""Run `tonk-server` from another source tree, to measure an older version against this one.

    mkdir -p /tmp/before/tonk && git archive COMMIT server shared | tar -x -C /tmp/before/tonk
    python bench/load.py flat --baseline "python bench/run_tree.py /tmp/before"

DIR holds `tonk/server` and `tonk/shared`; the rest of the arguments go to tonk-server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

cli: ModuleType

if len(sys.argv) < 2 or not (Path(sys.argv[1]) / "tonk" / "server").is_dir():
    sys.exit("usage: python bench/run_tree.py DIR [tonk-server options]  (DIR/tonk/server)")
tree = str(Path(sys.argv.pop(1)).resolve())
sys.path.insert(0, tree)

try:  # (tonk-server's command line is in server/commands/ since the sub-packages; before, server/)
    from tonk.server.commands import cli
except ImportError:
    from tonk.server import cli  # type: ignore[no-redef,attr-defined]

if not str(Path(cli.__file__).resolve()).startswith(tree):
    sys.exit(f"tonk.server was imported from {cli.__file__}, not from {tree}")
sys.exit(cli.main(sys.argv[1:]))
