"""argparse ``type``s the subcommands share. A light module: ``run`` imports it before the
program it records starts."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def whole_number(what: str, least: int, too_few: str) -> Callable[[str], int]:
    """An argparse ``type``: a whole number of ``what`` (the unit its error names), at least
    ``least``; ``too_few`` is the error below it."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of {what}, got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(too_few)
        return value

    return parse
