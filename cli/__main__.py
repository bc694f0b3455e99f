"""``python -m dyn_inspect.cli ARGS...``: the same as the ``dyn-inspect`` console script."""

import sys

from dyn_inspect.cli import main

sys.exit(main())
