"""The TUI's views, one module each: overview, graph breaks, recompiles, compiles tree,
kernels and the program's output. Each is a widget with ``sync(ctx)`` (bring it up to date
with the model, incrementally), ``search(query)``, ``reveal(key)`` and
``selected_location()`` (for ``o``, open in ``$EDITOR``)."""
