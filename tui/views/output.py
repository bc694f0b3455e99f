"""The program's output (ANSI colours kept, bounded scrollback) and, while it runs, a line
that sends what you type to its stdin."""

from __future__ import annotations

import codecs
from collections import deque

from rich.style import Style
from rich.text import Span, Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, RichLog, Static

from dyn_inspect.inspector.links import link_url
from dyn_inspect.inspector.reader import CONTROL, safe_text
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, View, matches

SCROLLBACK = 10_000  # lines kept in the pane (and searched)


def from_terminal(line: str) -> Text:
    """A line of terminal output as Text: its colours kept (``Text.from_ansi``), and
    nothing else that would drive the terminal. ``from_ansi`` drops the escape sequences it
    knows, but leaves the others' characters in the text — ``ESC c`` (a full reset), an
    8-bit CSI, SO/SI (another character set) — and makes an OSC 8 hyperlink of any url:
    Textual wrote those to the terminal as they were. The output.log of a run opened with
    ``dyn-inspect open`` is the run's, which anyone may have written: what is left is shown
    as escapes (``\\x1bc``), and only an https url stays a link (docs/security.md)."""
    text = Text.from_ansi(line)
    plain = text.plain
    if CONTROL.search(plain) is not None:
        out = Text(style=text.style, end=text.end)
        pos = 0
        for m in CONTROL.finditer(plain):
            out.append_text(text[pos : m.start()])
            out.append(safe_text(m[0]))
            pos = m.end()
        out.append_text(text[pos:])
        text = out
    if any(isinstance(span.style, Style) and span.style.link for span in text.spans):
        text.spans = [_safe_link(span) for span in text.spans]
    return text


def _safe_link(span: Span) -> Span:
    style = span.style
    if isinstance(style, Style) and style.link and link_url(style.link) is None:
        return Span(span.start, span.end, style.update_link(None))
    return span


class LineAssembler:
    """Bytes from a terminal → complete lines plus the line still being written.

    Decodes UTF-8 incrementally (a character split across reads survives), drops the
    ``\\r`` a pty adds before ``\\n``, and treats a lone ``\\r`` as the terminal does for a
    progress bar: the line restarts, so only the latest state is shown. Lines keep their
    ANSI escape sequences (rendered by ``Text.from_ansi``)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.partial = ""

    def feed(self, data: bytes) -> list[str]:
        text = self.partial + self._decoder.decode(data)
        text = text.replace("\r\n", "\n")
        *lines, self.partial = text.split("\n")
        out = [self._overwrite(line) for line in lines]
        # A trailing \r may be the first half of \r\n: keep it until the next read says.
        trailing = self.partial.endswith("\r")
        self.partial = self._overwrite(self.partial.rstrip("\r")) + ("\r" if trailing else "")
        return out

    @staticmethod
    def _overwrite(line: str) -> str:
        if "\r" not in line:
            return line
        parts = [p for p in line.split("\r") if p]
        return parts[-1] if parts else ""


class StdinInput(Input):
    """The line typed to the program's stdin; ctrl+d sends end-of-file (not delete-right)."""

    BINDINGS = [Binding("ctrl+d", "eof", "End of input", priority=True)]

    class EOF(Message):
        pass

    def action_eof(self) -> None:
        self.post_message(self.EOF())


class OutputView(View):
    SCOPED_CSS = False  # the rules name the view's parts by id, as the app's CSS did
    DEFAULT_CSS = """
    #output-log { height: 1fr; }
    #output-partial { height: auto; max-height: 3; }
    #stdin { height: 1; border: none; padding: 0 1; background: $boost; }
    """
    view_id = "output"
    HELP = (
        """
## Output

What the program printed (stdout and stderr, as a terminal shows them).
While it runs, type in the line at the bottom and press **enter** to send it to the
program's stdin; **ctrl+d** there sends end-of-file.
"""
        + COMMON_KEYS
    )

    class StdinLine(Message):
        def __init__(self, text: str) -> None:
            self.text = text
            super().__init__()

    class StdinEOF(Message):
        pass

    def __init__(self, *, id: str | None = None, interactive: bool = False) -> None:  # noqa: A002
        super().__init__(id=id)
        self._assembler = LineAssembler()
        self._lines: deque[str] = deque(maxlen=SCROLLBACK)  # plain text, for search
        self._first = 0  # number of lines dropped from the front (for reveal)
        self.interactive = interactive
        self._notice_shown = False
        # Lines that came before the pane was mounted (it is mounted when first shown,
        # unless the program runs live): written into it then.
        self._unshown: deque[Text] = deque(maxlen=SCROLLBACK)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield RichLog(id="output-log", max_lines=SCROLLBACK, wrap=False, markup=False, highlight=False, auto_scroll=True)
            yield Static("", id="output-partial")
            yield StdinInput(placeholder="stdin: type a line and press enter (ctrl+d: end of input)", id="stdin")

    def on_mount(self) -> None:
        self.query_one("#stdin", Input).display = self.interactive
        log = self.query_one("#output-log", RichLog)
        for text in self._unshown:
            log.write(text)
        self._unshown.clear()
        self._show_partial()

    def tab_label(self, ctx: Context) -> str:
        return "Output"

    def write_bytes(self, data: bytes) -> None:
        log = self.query_one("#output-log", RichLog) if self.is_mounted else None
        lines = self._assembler.feed(data)
        if len(lines) > SCROLLBACK:
            # A flood: lines that would scroll out of the bounded pane at once are not drawn.
            self._first += len(lines) - SCROLLBACK + len(self._lines)
            self._lines.clear()
            self._unshown.clear()
            if log is not None:
                log.clear()
            lines = lines[-SCROLLBACK:]
        for line in lines:
            text = from_terminal(line)
            if len(self._lines) == self._lines.maxlen:
                self._first += 1
            self._lines.append(text.plain)
            if log is not None:
                log.write(text)
            else:
                self._unshown.append(text)
        self._show_partial()

    def _show_partial(self) -> None:
        if self.is_mounted:
            partial = self._assembler.partial
            self.query_one("#output-partial", Static).update(from_terminal(partial) if partial else "")

    def show_notice(self, text: str) -> None:
        """A line from dyn-inspect itself (not the program), e.g. that no output was recorded."""
        notice = Text(text, style="dim italic")
        if self.is_mounted:
            self.query_one("#output-log", RichLog).write(notice)
        else:
            self._unshown.append(notice)

    def set_interactive(self, interactive: bool) -> None:
        self.interactive = interactive
        if not self.is_mounted:
            return  # on_mount shows the stdin line or not
        stdin = self.query_one("#stdin", Input)
        if stdin.has_focus and not interactive:
            self.query_one("#output-log", RichLog).focus()
        stdin.display = interactive

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "stdin":
            return
        event.stop()
        self.post_message(self.StdinLine(event.value))
        event.input.value = ""

    def on_stdin_input_eof(self, event: StdinInput.EOF) -> None:
        event.stop()
        self.post_message(self.StdinEOF())

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for i, line in enumerate(self._lines):
            if matches(query, line):
                hits.append(SearchHit(self.view_id, str(self._first + i), f"output   {line.strip()[:100]}"))
        return hits[:200]

    def reveal(self, key: str) -> None:
        log = self.query_one("#output-log", RichLog)
        index = int(key) - self._first
        if 0 <= index < len(self._lines):
            log.auto_scroll = False
            log.scroll_to(y=max(0, index - 2), animate=False)
        log.focus()

    def plain_lines(self) -> list[str]:
        return list(self._lines)
