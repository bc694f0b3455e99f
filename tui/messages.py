"""Messages the background threads post to the app (the memray pattern: data arrives as
messages from workers; widgets never read files or processes themselves)."""

from __future__ import annotations

from textual.message import Message

from dyn_inspect.inspector.run import Run


class RunLoaded(Message):
    """The run's logs were read for the first time (off the UI thread)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        super().__init__()


class LoadFailed(Message):
    def __init__(self, error: str) -> None:
        self.error = error
        super().__init__()


class RunUpdated(Message):
    """New events were appended to the run's logs and applied to the model."""

    def __init__(self, new_events: int) -> None:
        self.new_events = new_events
        super().__init__()


class OutputAvailable(Message):
    """The program wrote output; the app drains the buffer (one message per burst)."""


class ChildExited(Message):
    def __init__(self, returncode: int) -> None:
        self.returncode = returncode
        super().__init__()


class LabelChanged(Message):
    """A view finished work it did in a thread (the Causes view ranks a big run's causes
    after the first paint): its tab label, and the view if it is shown, are due again."""

    def __init__(self, view_id: str) -> None:
        self.view_id = view_id
        super().__init__()
