"""Leaving, and stopping the program (``QuitMixin``, a part of ``InspectorApp``): ``q`` quits
(asking first while the program runs: quitting kills it), ``ctrl+c`` asks whether to
interrupt or kill the program (once it has ended, it quits). The app's exit code is the
program's."""

from __future__ import annotations

from dyn_inspect.tui.app_state import AppState


class QuitMixin(AppState):
    def action_quit(self) -> None:  # type: ignore[override]
        if self.child is not None and self.child.alive:
            from dyn_inspect.tui.screens import ConfirmScreen

            def answer(choice: str | None) -> None:
                if choice == "kill":
                    self._kill_and_quit()

            self.push_screen(
                ConfirmScreen(
                    "The program is still running. Stop it and quit?", [("kill", "Kill it and quit"), ("cancel", "Keep running")]
                ),
                answer,
            )
            return
        self.exit(self.exit_code, return_code=self.exit_code)

    def _kill_and_quit(self) -> None:
        assert self.child is not None
        self.exit_code = self.child.stop_and_wait()
        self.exit(self.exit_code, return_code=self.exit_code)

    def action_interrupt(self) -> None:
        from dyn_inspect.tui.screens import ConfirmScreen

        if isinstance(self.screen, ConfirmScreen):
            return
        if self.child is None or not self.child.alive:
            self.action_quit()
            return

        def answer(choice: str | None) -> None:
            if self.child is None:
                return
            if choice == "interrupt":
                self.child.interrupt()
                self.notify("Sent SIGINT (Ctrl-C) to the program.")
            elif choice == "kill":
                self.child.kill()
                self.notify("Killed the program.")

        self.push_screen(
            ConfirmScreen(
                "Stop the program?",
                [("interrupt", "Interrupt (Ctrl-C)"), ("kill", "Kill"), ("cancel", "Cancel")],
            ),
            answer,
        )
