"""``python -m dyn_inspect.lsp [--tcp HOST:PORT]``: the language server over stdio."""

import sys

from dyn_inspect.lsp import main

sys.exit(main())
