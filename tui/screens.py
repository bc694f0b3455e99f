"""Modal screens: the confirmation asked before stopping the program, and search across
every view (``/``)."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList
from textual.widgets.button import ButtonVariant
from textual.widgets.option_list import Option

from dyn_inspect.tui.views.base import SearchHit

MAX_RESULTS = 300


class ConfirmScreen(ModalScreen[str]):
    """A question with a few answers; dismisses with the chosen answer's id ("cancel" on escape)."""

    BINDINGS = [Binding("escape", "dismiss('cancel')", "Cancel")]

    def __init__(self, question: str, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.question = question
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(self.question, id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                for i, (choice_id, label) in enumerate(self.choices):
                    variant: ButtonVariant = (
                        "error" if choice_id in ("kill", "quit") else ("warning" if choice_id == "interrupt" else "default")
                    )
                    yield Button(label, id=f"choice-{choice_id}", variant=variant if i < len(self.choices) - 1 else "primary")

    def on_mount(self) -> None:
        self.query(Button).last().focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "choice-cancel").removeprefix("choice-"))


class SearchScreen(ModalScreen[SearchHit | None]):
    """Type to search breaks, recompiles, frames, kernels and output; enter jumps there."""

    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close"),
        Binding("down", "focus_results", "Results", show=False),
    ]

    def __init__(self, search: Callable[[str], list[SearchHit]], query: str = "") -> None:
        super().__init__()
        self._search = search
        self._query = query
        self._hits: list[SearchHit] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="search"):
            yield Input(value=self._query, placeholder="search breaks, recompiles, frames, kernels, output, failures…", id="search-input")
            yield Label("", id="search-count")
            yield OptionList(id="search-results")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        if self._query:
            self._update(self._query)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._update(event.value)

    def _update(self, query: str) -> None:
        results = self.query_one(OptionList)
        results.clear_options()
        self._hits = self._search(query) if query.strip() else []
        shown = self._hits[:MAX_RESULTS]
        results.add_options([Option(Text(hit.label, no_wrap=True, overflow="ellipsis"), id=str(i)) for i, hit in enumerate(shown)])
        more = f" (first {MAX_RESULTS} shown)" if len(self._hits) > MAX_RESULTS else ""
        self.query_one("#search-count", Label).update(f"{len(self._hits)} matches{more}" if query.strip() else "")
        if shown:
            results.highlighted = 0

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._hits:
            results = self.query_one(OptionList)
            index = results.highlighted or 0
            self.dismiss(self._hits[index])

    def action_focus_results(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id is not None:
            self.dismiss(self._hits[int(event.option_id)])
