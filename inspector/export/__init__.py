"""Bug-report bundles (dyn-inspect export)."""
