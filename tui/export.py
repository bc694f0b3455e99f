"""The bug-report zip (``e``; ``ExportMixin``, a part of ``InspectorApp``): the run exported by
``dyn_inspect.inspector.export`` in a thread, the follower paused meanwhile, while the
screen stays live and says when it is done."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app_state import AppState


class ExportMixin(AppState):
    def action_export(self) -> None:
        """Write a bug-report zip of the run (``dyn_inspect.inspector.export``) in the
        background; the screen stays live and says when it is done."""
        if self.loaded_run is None:
            return
        try:
            from dyn_inspect.inspector import export
        except ImportError:
            export = None  # type: ignore[assignment]
        export_run = getattr(export, "export_run", None) if export is not None else None
        if export_run is None:
            self.notify("Export is not available in this version of dyn-inspect.", severity="warning")
            return
        if self._exporting:
            self.notify("An export is already being written.")
            return
        run = self.loaded_run
        out = Path.cwd() / f"dyn-inspect-{run.path.name}.zip"
        n = 2
        while out.exists():
            out = Path.cwd() / f"dyn-inspect-{run.path.name}-{n}.zip"
            n += 1
        self._exporting = True
        self.notify(f"Exporting a bug report to {out.name}…", timeout=3)
        self.run_worker(lambda: self._export_in_thread(export_run, run, out), thread=True, exclusive=False, group="export")

    def _export_in_thread(self, export_run: Callable[..., object], run: Run, out: Path) -> None:
        # The follower is the model's only writer: pausing it keeps the model still while
        # the export reads it, without holding the lock the screen needs.
        if self.follower is not None:
            self.follower.pause()
        try:
            result = export_run(run, out)
        except (InspectorError, OSError) as exc:
            self.call_from_thread(self.notify, f"export failed: {exc}", severity="error", timeout=10)
        else:
            path = getattr(result, "path", out)
            self.call_from_thread(self.notify, f"Bug report written: {path}", timeout=10)
        finally:
            if self.follower is not None:
                self.follower.resume()
            self._exporting = False
