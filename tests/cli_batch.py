"""Runs several ``dyn-inspect`` commands in one Python process (``python cli_batch.py OUT``
with a JSON list of argv lists on stdin); writes a JSON list of ``{"rc", "out", "err"}`` to
OUT (a file: a command writing to the descriptor itself cannot garble it).

For tests that put many read commands to the same inputs (tests/inspector/test_hostile_input.py):
each command in its own process cost half a second of start-up, 18 commands × 16 hostile
runs. Each command still goes through ``dyn_inspect.cli.main`` as the console script does;
an exception escaping it is printed as its traceback into that command's ``err``, exactly
what the test looks for."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import traceback


def run_one(argv: list[str]) -> dict[str, object]:
    from dyn_inspect.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse's exits, sys.exit in a command
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - what the console script would print
            traceback.print_exc()
            rc = 1
    return {"rc": rc, "out": out.getvalue(), "err": err.getvalue()}


if __name__ == "__main__":
    results = [run_one(argv) for argv in json.load(sys.stdin)]
    with open(sys.argv[1], "w") as f:
        json.dump(results, f)
