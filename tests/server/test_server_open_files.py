"""tonk-server raises its open-file limit so that max_connections fit (every connection is a
file), up to the hard limit."""

from __future__ import annotations

import resource
from dataclasses import replace

from tonk.server.app import Limits, ServerConfig
from tonk.server.commands.cli import raise_open_file_limit


def test_the_open_file_limit_is_raised_to_fit_max_connections(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    config = ServerConfig(db_path=tmp_path / "t.db", limits=replace(Limits(), max_connections=900))
    wanted = 900 + 256 if hard == resource.RLIM_INFINITY else min(900 + 256, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, soft), hard))
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] < wanted
        got = raise_open_file_limit(config)
        assert got == wanted
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == wanted
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_higher_limit_is_left_alone(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    config = ServerConfig(db_path=tmp_path / "t.db", limits=replace(Limits(), max_connections=10))
    level = 1024 if hard == resource.RLIM_INFINITY else min(1024, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (level, hard))
        assert raise_open_file_limit(config) == level  # 10 + 256 fit already
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (level, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
