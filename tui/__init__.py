"""The terminal UI (Textual): ``dyn-inspect train.py`` live, ``dyn-inspect open [RUN]``
afterwards. Entry points: ``dyn_inspect.tui.app.run_live`` and ``run_open``; docs/tui.md."""
