"""Startup hook for programs run under dyn-inspect (on PYTHONPATH of the child only).

Python imports ``sitecustomize`` at start-up in every process that inherits the
environment — the user's script, its subprocesses, torchrun's workers. Recording starts
when the program imports torch (a meta-path watcher), so processes that never use torch
pay nothing. Any other ``sitecustomize`` on the path still runs afterwards.
"""

import importlib
import importlib.abc
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _activate():
    try:
        from dyn_inspect.engine import recorder
    except ImportError as exc:
        sys.stderr.write(f"dyn-inspect: not recording this process ({exc}); is dyn-inspect installed in {sys.executable}?\n")
        return
    try:
        recorder.activate()
    except Exception as exc:  # recording must never stop the user's program
        sys.stderr.write(f"dyn-inspect: recorder failed to start, not recording ({exc!r})\n")


class _TorchWatcher(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            _activate()

        loader.exec_module = exec_module
        return spec


def _chain_next_sitecustomize():
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    mine = sys.modules.pop("sitecustomize", None)
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        sys.modules["sitecustomize"] = mine
    except Exception as exc:  # the user's own hook failing is theirs to see
        sys.stderr.write(f"sitecustomize: {exc!r}\n")
    finally:
        # Leave sys.path as plain python would have it (without our directory).
        sys.path[:] = [p for p in saved if os.path.abspath(p or ".") != _HERE]


if os.environ.get("DYN_INSPECT_RUN_DIR"):
    if "torch" in sys.modules:
        _activate()
    else:
        sys.meta_path.insert(0, _TorchWatcher())
_chain_next_sitecustomize()
