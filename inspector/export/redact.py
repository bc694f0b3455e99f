"""``--redact-source``: taking the user's source text out of everything a bundle holds.

A run's log quotes model code in many places: ``Loc.code`` on every location, stack
frames' code lines in graph-break and exception tracebacks, ``# File: f.py:9 in forward,
code: y = ...`` comments in every FX graph, ``# <code>  # f.py:9 in forward`` comments on
guards and recompile reasons, and tracebacks nested as JSON strings inside torch's
compilation metrics. Redaction works in two layers:

1. *Structural* rules that know those shapes and drop the code part while keeping the
   file:line (they work even when the source files are not on this machine, e.g. for an
   imported production log);
2. a *catch-all*: every line of the user's source files that the run points at (and every
   recorded ``Loc.code``) is replaced by ``<redacted>`` wherever it still occurs — in free
   text everywhere, in generated code only inside comments, so that graph code, the
   Inductor module, kernels and the runnable repro stay valid Python/C++.

On top of the source text (docs/export.md has the table of every file kind):

3. *Literals*: string constants of the user's code, wherever torch quotes them in text
   (``ConstantVariable(str: 'scaling %s')``, guards ``G['X'] == 'value'``, the message of
   ``graph_break(msg=...)``), become ``'<redacted>'``; a subscript's key (``L['x']``, a
   name) and a traceback's ``File "..."`` are kept.
4. *Bytecode dumps* (the original and modified bytecode of every frame: constants and
   every local and global name) are dropped.
5. *Identity*: the user name in home directories and torch's ``/tmp/torchinductor_<user>``
   and the recording machines' host names become ``<user>`` / ``<host>``.

Graph structure (whose node names follow the program's variable names), kernels, guards
(minus their source comments and literals) and metrics are kept.
"""

from __future__ import annotations

import ast
import getpass
import json
import re
import socket
from collections.abc import Iterable
from typing import Any, Literal

from dyn_inspect.engine.schema import Artifact, Bytecode, CacheEvent, Event, Graph, Kernel, OutputCode
from dyn_inspect.inspector.locations import is_library
from dyn_inspect.inspector.source_files import read_source

REDACTED = "<redacted>"

# Payloads are generated code (kept valid: only comments are touched), torch's runnable
# repro (code, plus one fix-up in bundle.py), free text, or JSON documents.
Mode = Literal["code", "repro", "text", "json", "drop"]
DROPPED = "<redacted: dropped by --redact-source (bytecode names every constant and variable of the frame)>\n"

# Shorter lines are too likely to occur by chance inside generated code and torch's text
# ("x = 1"); structural rules still remove them where torch quotes them.
MIN_CATCH_ALL = 8
MAX_CATCH_ALL = 400  # a pathological line is not worth a huge regex branch

_TB_FRAME = re.compile(r'^(?P<indent>\s*)File "(?P<file>[^"]+)", line \d+, in .*$')
_FX_CODE = re.compile(r"(?P<head>#.*\bFile\b.*?, code: ).*$")
_WHERE = re.compile(r"\s#\s+[^\s#]+:\d+ in [\w<>.\-]+")
_COMMENT_START = re.compile(r"(?:^|\s)#")
# One Python string literal per line, as pprint splits a long string inside a repr
# (torch's ViewAndMutationMeta keeps formatted stack traces that way).
_LITERAL = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
_FRAGMENT_FIRST = re.compile(r"^(?P<prefix>.*?[\[(=,\s])(?P<lit>" + _LITERAL + r")(?P<suffix>[\])},]*)$")
_FRAGMENT_NEXT = re.compile(r"^\s+(?P<lit>" + _LITERAL + r")(?P<suffix>[\])},]*)$")
# A literal where torch quotes a constant of the user's code: a variable's repr in a
# graph-break context (``ConstantVariable(str: 'scaling %s')``) or a guard's comparison
# (``G['X'] == 'value'``). torch's own strings elsewhere (device types, config) are kept.
_TEXT_LITERAL = re.compile(
    r"""(?P<head>\b(?:str|bytes)\s*:\s*|[=!]=\s*)(?P<lit>[bBrRuU]{0,2}(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))"""
)
MIN_LITERAL = 6  # the user's own string constants at least this long are removed everywhere
_LITERAL_REDACTED = "'" + REDACTED + "'"
# torch's words before the user's own message (graph_break(msg=...), skip reasons).
_USER_MESSAGE = re.compile(r"(?P<head>\b(?:Message|msg):\s*)(?P<msg>[^\n]+)")
_HOME = re.compile(r"(?P<head>/(?:home|Users)/)(?P<user>[^/\s'\"<>]+)")
_INDUCTOR_TMP = re.compile(r"(?P<head>torchinductor_)(?P<user>[^/\s'\"<>]+)")
USER = "<user>"
HOST = "<host>"


def _trie_regex(words: Iterable[str]) -> re.Pattern[str] | None:
    """One regex matching any of ``words`` (a trie, so matching cost does not grow with
    the number of lines), bounded so that it never matches inside an identifier."""
    trie: dict[str, Any] = {}
    count = 0
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
        count += 1
    if not count:
        return None

    def build(node: dict[str, Any]) -> str:
        end = "" in node
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if end else body

    return re.compile(r"(?<![\w])" + build(trie) + r"(?![\w])")


class Redactor:
    """Scrubs strings; built once per export from the user lines the run points at."""

    def __init__(
        self,
        user_lines: Iterable[str] = (),
        hosts: Iterable[str] = (),
        users: Iterable[str] = (),
        user_literals: Iterable[str] = (),
    ) -> None:
        lines = {s.strip() for s in user_lines}
        self.user_lines = {s for s in lines if MIN_CATCH_ALL <= len(s) <= MAX_CATCH_ALL}
        # The program's own string constants (one line, long enough not to be a common
        # word): removed wherever they occur, like its lines.
        self.user_literals = {v.strip() for v in user_literals if "\n" not in v and MIN_LITERAL <= len(v.strip()) <= MAX_CATCH_ALL}
        self._catch_all = _trie_regex(sorted(self.user_lines | self.user_literals))
        # Host names (and their first label) and user names: whole words only, 2+ chars.
        names = {h for host in hosts if host for h in (host, host.split(".")[0]) if len(h) >= 2}
        self.hosts = names
        self._hosts = _trie_regex(sorted(names, key=len, reverse=True))
        self.users = {u for u in users if u and len(u) >= 2}

    def identity(self, text: str) -> str:
        """User names in home and torch cache directories, host names: replaced."""
        if not text:
            return text
        text = _HOME.sub(lambda m: m["head"] + USER, text)
        text = _INDUCTOR_TMP.sub(lambda m: m["head"] + USER, text)
        if self._hosts is not None:
            text = self._hosts.sub(HOST, text)
        return text

    @staticmethod
    def literals(text: str) -> str:
        """Quoted string literals and the user's own messages in torch's text."""
        if not text:
            return text
        text = _USER_MESSAGE.sub(lambda m: m["head"] + REDACTED, text)
        if "'" in text or '"' in text:
            text = _TEXT_LITERAL.sub(lambda m: m["head"] + _LITERAL_REDACTED, text)
        return text

    # -- building ----------------------------------------------------------------------

    @classmethod
    def for_sources(
        cls, files: Iterable[str], recorded_code: Iterable[str] = (), hosts: Iterable[str] = (), users: Iterable[str] = ()
    ) -> Redactor:
        """From the user's source files (read if they are still on disk) plus the code
        text the log recorded (which may be all there is for an imported log); ``hosts``:
        the recording machines' names (this machine's is added)."""
        try:
            here = [socket.gethostname()]
        except OSError:
            here = []
        try:
            me = [getpass.getuser()]
        except (OSError, KeyError):
            me = []
        hosts = [*hosts, *here]
        users = [*users, *me]
        lines: set[str] = set(recorded_code)
        literals: set[str] = set()
        names: set[str] = set()
        for name in sorted(set(files)):
            if is_library(name):
                continue
            text = read_source(name)
            if text is None:
                continue
            lines.update(text.splitlines())
            found, used = _string_constants(text)
            literals.update(found)
            names.update(used)
        # A literal that is also a name of the program ("chatty", a function's name) is
        # structure, kept like the names; the structural rules still take it out of guards.
        return cls(lines, hosts, users, literals - names)

    # -- scrubbing ---------------------------------------------------------------------

    def catch_all(self, text: str) -> str:
        if self._catch_all is None or not text:
            return text
        return self._catch_all.sub(REDACTED, text)

    def _line_rules(self, line: str) -> str:
        m = _FX_CODE.search(line)
        if m:
            line = line[: m.start()] + m["head"] + REDACTED
        where = list(_WHERE.finditer(line))
        if where:
            # `<guard>  # <user code>  # file.py:9 in fn`: keep the guard and the place.
            w = where[-1]
            head = line[: w.start()]
            k = head.find("  # ")
            if k >= 0:
                line = head[:k] + "  # " + REDACTED + line[w.start() :]
        return line

    def _repr_fragments(self, lines: list[str]) -> list[str]:
        """Rejoin pprint's split string literals that hold a traceback, scrub the whole
        string, and write it back as one literal (fragments alone match no rule)."""
        out: list[str] = []
        i = 0
        while i < len(lines):
            first = _FRAGMENT_FIRST.match(lines[i])
            if first is None or first["suffix"] or i + 1 >= len(lines) or not _FRAGMENT_NEXT.match(lines[i + 1]):
                out.append(lines[i])
                i += 1
                continue
            lits, j, suffix = [first["lit"]], i + 1, ""
            while j < len(lines):
                nxt = _FRAGMENT_NEXT.match(lines[j])
                if nxt is None:
                    break
                lits.append(nxt["lit"])
                j += 1
                if nxt["suffix"]:
                    suffix = nxt["suffix"]
                    break
            try:
                value = ast.literal_eval(" ".join(lits))
            except (ValueError, SyntaxError):
                value = None
            if not isinstance(value, str) or 'File "' not in value:
                out.extend(lines[i:j])
            else:
                out.append(first["prefix"] + repr(self.text(value)) + suffix)
            i = j
        return out

    def text(self, text: str) -> str:
        """Free text (tracebacks, guard trees, break reasons): every rule, everywhere."""
        if not text:
            return text
        out: list[str] = []
        lines = text.split("\n")
        if "'" in text or '"' in text:
            lines = self._repr_fragments(lines)
        i = 0
        while i < len(lines):
            line = lines[i]
            frame = _TB_FRAME.match(line)
            out.append(self._line_rules(line))
            i += 1
            if frame and not is_library(frame["file"]):
                # The frame's code line(s) and caret markers: deeper-indented lines up to
                # the next frame or the next line at the frame's own indentation.
                indent = len(frame["indent"])
                j = i
                while (
                    j < len(lines)
                    and lines[j].strip()
                    and len(lines[j]) - len(lines[j].lstrip()) > indent
                    and not _TB_FRAME.match(lines[j])
                ):
                    j += 1
                if j > i:
                    out.append(" " * (indent + 4) + REDACTED)
                    i = j
        return self.identity(self.literals(self.catch_all("\n".join(out))))

    def code(self, text: str) -> str:
        """Generated code: only comments are touched, so the code still runs."""
        if not text:
            return text
        out: list[str] = []
        for line in text.split("\n"):
            m = _COMMENT_START.search(line)
            if m is None:
                out.append(line)
                continue
            cut = m.start() + (1 if line[m.start()] != "#" else 0)
            out.append(line[:cut] + self.identity(self.catch_all(self._line_rules(line[cut:]))))
        # Paths with the user name also occur in code (a repro's cache dir, #include lines).
        return _INDUCTOR_TMP.sub(lambda m: m["head"] + USER, _HOME.sub(lambda m: m["head"] + USER, "\n".join(out)))

    def json_text(self, text: str) -> str:
        """A JSON document: scrub every string in it (recursing into JSON-in-strings)."""
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, ValueError):
            return self.text(text)
        return json.dumps(self.value(value), default=str)

    def value(self, value: Any) -> Any:
        """Any decoded JSON value: strings scrubbed, ``code`` strings of locations dropped."""
        if isinstance(value, str):
            s = value.lstrip()
            if s[:1] in ("{", "[") and len(s) > 1:
                try:
                    inner = json.loads(value)
                except (json.JSONDecodeError, ValueError):
                    return self.text(value)
                return json.dumps(self.value(inner))
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            is_location = "line" in value or "lineno" in value
            for k, v in value.items():
                if is_location and k in ("code", "loc", "line_text") and isinstance(v, str):
                    # Loc.code / torch's FrameSummary.loc: the source line itself.
                    out[k] = REDACTED if v else v
                else:
                    out[k] = self.value(v)
            return out
        return value

    def payload(self, text: str, mode: Mode) -> str:
        if mode == "drop":
            return DROPPED
        if mode in ("code", "repro"):
            return self.code(text)
        if mode == "json":
            return self.json_text(text)
        return self.text(text)


def _string_constants(source: str) -> tuple[set[str], set[str]]:
    """(string constants, identifiers) of a Python file (``ast`` only, nothing runs)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return set(), set()
    out: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.add(node.value)
        elif isinstance(node, ast.JoinedStr):  # f"...": its literal parts
            out.update(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)
    return out, names


def mode_for(event: Event, field: str) -> Mode:
    """How the payload in ``event.<field>`` is treated (by redaction and fix-ups)."""
    if isinstance(event, (Graph, OutputCode, Kernel)):
        return "code"
    if isinstance(event, Bytecode):
        return "drop"  # only when redacting; otherwise stored as recorded
    if isinstance(event, Artifact):
        if event.name == "fx_graph_runnable":
            return "repro"
        return "json" if event.encoding == "json" else "text"
    if isinstance(event, CacheEvent) or field == "metrics":
        return "json"
    return "text"
