"""`python -m tonk.server`: the same as `tonk-server`."""

import sys

from .cli import main

sys.exit(main())
