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
    """Wraps the loader of every spec found for ``torch`` until one of them has run.

    It stays on ``sys.meta_path`` until torch is really imported: an availability check
    (``importlib.util.find_spec("torch")``, as transformers, diffusers and accelerate do)
    gets a spec of its own whose loader the later ``import torch`` never uses, so removing
    ourselves at the first ``find_spec`` recorded nothing. A torch that another finder
    imported behind our back is caught at the next import once its module is complete.
    """

    def __init__(self):
        self._busy = False  # our own find_spec and activation import modules too
        self.done = False

    def find_spec(self, name, path=None, target=None):
        if self.done or self._busy:
            return None
        if name != "torch":
            torch = sys.modules.get("torch")
            if torch is not None and not getattr(getattr(torch, "__spec__", None), "_initializing", False):
                self._activate()  # torch came in through another finder: start now
            return None
        self._busy = True
        try:
            spec = importlib.util.find_spec("torch") if "torch" not in sys.modules else None
        finally:
            self._busy = False
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module
        watcher = self

        def exec_module(module):
            original(module)
            try:
                del loader.exec_module  # the loader is as torch's own import left it
            except AttributeError:
                pass
            watcher._activate()

        loader.exec_module = exec_module
        return spec

    def _activate(self):
        if self.done:
            return
        self.done = True
        self._busy = True
        try:
            _activate()
        finally:
            self._busy = False


def _check_recorded():
    """At exit: torch was imported but no recorder started; say so (once per run, through
    the launcher), never a silent "0 compiles"."""
    if "torch" not in sys.modules:
        return
    try:
        from dyn_inspect.engine import recorder
    except ImportError:
        return  # already said at start-up
    if recorder.current() is None:
        recorder.tell_not_recording(f"process {os.getpid()} imported torch but its recorder never started: nothing recorded from it")


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
    import atexit

    atexit.register(_check_recorded)
_chain_next_sitecustomize()
