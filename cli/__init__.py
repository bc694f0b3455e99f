"""The ``dyn-inspect`` command line: subcommands, plus the bare ``dyn-inspect train.py``.

The composition root: the one package above the faces (it may import engine, inspector,
tui and lsp; nothing imports it). Each subcommand is a module in ``commands/`` with
``prepare_parser(parser)`` and ``run(args) -> int`` (the memray layout); this module only
lists them and dispatches. User mistakes (``InspectorError``) print one line and exit 2,
never a traceback. ``python -m dyn_inspect.cli`` is the same as ``dyn-inspect``.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import os
import shutil
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

_loaded: dict[str, ModuleType] | None = None


def _commands() -> dict[str, ModuleType]:
    global _loaded
    if _loaded is None:
        from dyn_inspect.cli import commands

        _loaded = commands.load()
    return _loaded


def _names() -> list[str]:
    """The subcommands' names, without importing their modules."""
    from dyn_inspect.cli.commands import COMMAND_MODULES

    return list(COMMAND_MODULES)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or (``only``) of one: what ``dyn-inspect summary``
    needs, so that a fresh process imports that command's module alone (all of them cost
    0.4 s of imports, networkx and Jinja2 among them)."""
    parser = argparse.ArgumentParser(
        prog="dyn-inspect",
        description="Record and inspect torch.compile: graph breaks, recompiles, graphs and kernels.",
        epilog="Run a script: dyn-inspect [options] train.py [args...]  |  dyn-inspect -m pkg.mod [args...]",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from dyn_inspect.cli import commands

    modules = _commands() if only is None else commands.load([only])
    for name, module in modules.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.prepare_parser(p)
    return parser


# `dyn-inspect run` options that take a value: the bare form's target is the first word
# that is neither an option nor such a value.
_RUN_VALUE_OPTIONS = ("--profile", "--profile-kernels", "--runs-dir")


def _bare_target(argv: list[str]) -> str | None:
    """The script/command word of a bare ``dyn-inspect [run-opts] WORD ...``; None for
    ``-m module``, ``-- command`` or when there is none."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "-m" or word.startswith("-m") and not word.startswith("--"):
            return None
        if word == "--":
            return None
        if word in _RUN_VALUE_OPTIONS:
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        return word
    return None


def unknown_command(argv: list[str]) -> str | None:
    """Why the bare form cannot be a run: a word that is no file, no program on PATH and
    looks like a misspelt subcommand (``sumary``). Such a "run" would only record a crash
    and move ``latest`` off the user's last real run."""
    if not argv or argv[0] in _names() or argv[0] in ("-h", "--help", "--version"):
        return None
    word = _bare_target(argv)
    if word is None or os.path.exists(word) or os.sep in word or word.endswith(".py") or shutil.which(word):
        return None
    if word in _names():  # `dyn-inspect --json summary`: options written before the command
        before = argv[: argv.index(word)]
        return f"options go after the command: dyn-inspect {word} {' '.join(before)} …"
    close = difflib.get_close_matches(word, _names(), n=1, cutoff=0.6)
    if not close:
        return None
    return f"unknown command '{word}' — did you mean '{close[0]}'?"


def _rewrite_bare_run(argv: list[str]) -> list[str]:
    """`dyn-inspect [run-opts] train.py ...` and `-m mod ...` mean `dyn-inspect run ...`."""
    names = set(_names())
    if not argv or argv[0] in names or argv[0] in ("-h", "--help", "--version"):
        return argv
    return ["run", *argv]


def main(argv: Sequence[str] | None = None) -> int:
    # Start-up is imports: many new objects and no garbage yet, which the cyclic collector
    # would walk again and again (for the TUI, a tenth of the time to its first frame). It is
    # back on when the command starts (the TUI's commands keep it off to their first frame).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, collecting)
    finally:
        if collecting:
            gc.enable()


def _main(argv: Sequence[str] | None, collecting: bool) -> int:
    # (Imported here, not at the top: the inspector's imports then run with the collector off.)
    from dyn_inspect.inspector.errors import InspectorError

    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["--version"]:
        from dyn_inspect.engine.eventlog import TOOL_VERSION

        print(f"dyn-inspect {TOOL_VERSION}")
        return 0
    target = _bare_target(args_list)
    if target == "run" and args_list[0] != "run":
        # `dyn-inspect --no-tui run train.py`: run's own options before its name
        at = args_list.index("run")
        args_list = ["run", *args_list[:at], *args_list[at + 1 :]]
    typo = unknown_command(args_list)
    if typo is not None:
        print(f"dyn-inspect: {typo}", file=sys.stderr)
        return 2
    words = _rewrite_bare_run(args_list)
    parser = build_parser(words[0] if words and words[0] in _names() else None)
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help()
        return 2
    from dyn_inspect.cli import commands

    module = commands.load([args.command])[args.command]
    if args.command != "lsp":  # (the server builds the findings of what it opens itself)
        _precompute_findings_on_index()
    if collecting:
        gc.enable()
    try:
        return int(module.run(args) or 0)
    except InspectorError as exc:
        print(f"dyn-inspect: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"dyn-inspect: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


def _after_index_written(run: Any, path: Any) -> None:
    # Imported when an index is written (rare), not at every command's start.
    from dyn_inspect.inspector import index
    from dyn_inspect.lsp.precompute import after_index_written
    from dyn_inspect.tui import first_screen

    index_id = index.identity(run.path)
    if index_id is not None:
        first_screen.save(run, index_id)  # the TUI's overview, drawn before the run is read
    after_index_written(run, path)


def _precompute_findings_on_index() -> None:
    """Every index this command writes (a recording's end, the live TUI's exit, the first
    open of a finished run) saves the TUI's first screen (``tui/first_screen.py``) and
    starts the language server's findings precompute (``lsp/precompute.py``): the inspector
    writes indexes and must not import the faces."""
    from dyn_inspect.inspector import index

    if _after_index_written not in index.WRITTEN:
        index.WRITTEN.append(_after_index_written)
