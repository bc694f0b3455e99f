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
    """The user's own ``sitecustomize`` (the next one on the path), with python's own
    behaviour (``site.execsitecustomize``): none is no error; one that fails prints python's
    two lines (the traceback with ``-v``) and start-up goes on."""
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    mine = sys.modules.pop("sitecustomize", None)
    try:
        try:
            importlib.import_module("sitecustomize")
        except ImportError as exc:
            if exc.name != "sitecustomize":
                raise
    except Exception as err:
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        elif sys.stderr is not None:
            sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{err.__class__.__name__}: {err}\n")
    finally:
        # The import of ours finishes by taking "sitecustomize" from sys.modules: the user's
        # module when it ran, else ours again (a missing entry made python report a KeyError).
        if "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = mine
        # Leave sys.path as plain python would have it (without our directory).
        sys.path[:] = [p for p in saved if os.path.abspath(p or ".") != _HERE]


def _keep_traceback(run_dir):
    """--no-tui: the program (the launcher's direct child) keeps its uncaught exception's
    traceback in the run (engine/stderr_tail.py). Registered first, so it runs last."""
    import atexit

    def save():
        try:
            from dyn_inspect.engine.stderr_tail import save_traceback
        except ImportError:
            return
        save_traceback(run_dir)

    atexit.register(save)


_run_dir = os.environ.get("DYN_INSPECT_RUN_DIR")
if _run_dir:
    if os.environ.get("DYN_INSPECT_STDERR_TAIL") and os.environ.get("DYN_INSPECT_LAUNCHER_PID") == str(os.getppid()):
        _keep_traceback(_run_dir)
    if "torch" in sys.modules:
        _activate()
    else:
        sys.meta_path.insert(0, _TorchWatcher())
_chain_next_sitecustomize()
