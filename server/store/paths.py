"""Where the server's database lives unless it is told otherwise: one place for `tonk-server`,
its `audit` and `names` commands, which need the path without loading the server."""

from __future__ import annotations

from pathlib import Path


def default_db_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("tonk")) / "tonk-server.db"
