"""The user's program as the app sees it (``ProgramMixin``, a part of ``InspectorApp``): a
live run starts it (``ChildProcess``, ``tui/child.py``), shows its output, sends it the
output pane's input, resizes its pty with the screen and says when it exits; an opened run
shows the output it recorded. (``run_live``, in ``tui/app.py``, forwards the signals sent to
dyn-inspect on to the program.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dyn_inspect.inspector.events import read_tail
from dyn_inspect.tui.app_state import AppState
from dyn_inspect.tui.messages import ChildExited, OutputAvailable

if TYPE_CHECKING:
    from dyn_inspect.tui.views.output import OutputView


class ProgramMixin(AppState):
    def _start_child(self) -> None:
        from dyn_inspect.tui.child import ChildProcess  # (only a live run has a child)

        assert self.launch is not None
        self.child = ChildProcess(self.launch, self, self.output_buffer)
        width, height = self.size
        try:
            self.child.start(columns=max(20, width - 2), rows=max(5, height - 8))
        except OSError as exc:
            command = self.launch.spec.command[0]
            self.output_view.show_notice(f"cannot start {command}: {exc.strerror or exc}")
            self.exit_code = self.child.finish(127)
            self.output_view.set_interactive(False)
        early, self.early_signals = self.early_signals, []
        for signum in early:
            self.child.signal(signum)

    def _show_stderr_tail(self) -> None:
        """An opened run without recorded output: say why, and show its stderr's tail if kept."""
        tail = read_tail(self.run_path)  # --no-tui keeps the stderr tail (engine/stderr_tail.py)
        if tail is None:
            self.output_view.show_notice("The program's output was not recorded (it ran without the live TUI).")
        else:
            self.output_view.show_notice("The program ran without the live TUI: the end of its stderr was kept.")
            self.output_view.write_bytes(tail.encode() + (b"" if tail.endswith("\n") else b"\n"))

    def on_output_available(self, _message: OutputAvailable) -> None:
        data = self.output_buffer.drain()
        if data:
            self.output_view.write_bytes(data)

    def on_child_exited(self, message: ChildExited) -> None:
        assert self.child is not None
        self.exit_code = self.child.finish(message.returncode)
        data = self.output_buffer.drain()
        if data:
            self.output_view.write_bytes(data)
        self.output_view.set_interactive(False)
        self.output_view.show_notice(f"[dyn-inspect: the program exited with code {self.exit_code} — press q to quit]")
        if self.follower is not None and self.loaded_run is not None:
            self.follower.poll()  # read run_end now rather than at the next tick
        self._sync()
        self.notify(f"Program exited with code {self.exit_code}.", severity="information" if self.exit_code == 0 else "warning")
        if self.quit_when_child_exits:
            self.exit(None)

    # (Handlers by name, not ``@on(OutputView.StdinLine)``: the output view's module is
    # imported only when the view is first needed.)
    def on_output_view_stdin_line(self, message: OutputView.StdinLine) -> None:
        if self.child is not None:
            self.child.write(message.text.encode() + b"\n")

    def on_output_view_stdin_eof(self, _message: OutputView.StdinEOF) -> None:
        if self.child is not None:
            self.child.send_eof()

    def on_resize(self, event: object) -> None:
        if self.child is not None and self.child.alive:
            width, height = self.size
            self.child.resize(max(20, width - 2), max(5, height - 8))
