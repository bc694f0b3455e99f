"""``python -m dyn_inspect.lsp [--stdio | --tcp HOST:PORT | --socket PORT | --pipe NAME]``: the language server."""

import sys

from dyn_inspect.lsp import main

sys.exit(main())
