"""`python -m tonk.server`: the same as `tonk-server`."""

import sys

from .commands.cli import main

sys.exit(main())
