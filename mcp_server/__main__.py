"""``python -m dyn_inspect.mcp``: the same as ``dyn-inspect mcp``."""

from __future__ import annotations

import sys

from dyn_inspect.mcp import main

sys.exit(main())
