"""Analyses over the run model (recompile suggestions, guard diffs, graphs, kernels...)."""
