"""Regenerate the TUI screenshots of docs/tui.md and the README (SVG, Textual's own export).

    python docs/img/screenshots.py --shapes RUN --timeline RUN --code RUN --kernels RUN --overview RUN --cost RUN

Each RUN is a recorded run directory: the screenshots in git were taken on the test corpus's
recordings — ``tests/corpus/shapes.py`` (shapes), ``tests/corpus/cache/train.py`` warmed
from a copy (timeline and overview: a warm cache), ``examples/train.py --steps 4`` (code:
a resume function) and the Linear+ReLU program of ``tests/inspector/test_kernel_costs.py`` recorded
with ``--profile-kernels 2`` (kernels), ``examples/train.py --steps 10`` recorded with
``--profile 3`` (cost). Each is written to ``docs/img/tui-<view>.svg``.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp

OUT = Path(__file__).resolve().parent
SIZE = (140, 36)
# view → (tab key, keys pressed once there: select an interesting row)
SHOTS: dict[str, tuple[str, list[str]]] = {
    "overview": ("1", []),
    "shapes": ("8", ["down"]),
    "timeline": ("9", []),
    "code": ("0", ["down"]),
    "kernels": ("5", []),
    "cost": ("p", ["down", "down", "down", "down", "down"]),  # the costliest break's row
}


async def shoot(view: str, run_dir: Path) -> Path:
    key, presses = SHOTS[view]
    run = Run(run_dir)
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        await pilot.press(key)
        await pilot.pause(0.2)
        for press in presses:
            await pilot.press(press)
        await pilot.pause(0.5)
        path = OUT / f"tui-{view}.svg"
        app.save_screenshot(filename=path.name, path=str(OUT))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for view in SHOTS:
        parser.add_argument(f"--{view}", metavar="RUN", type=Path)
    args = parser.parse_args()
    for view in SHOTS:
        run_dir = getattr(args, view)
        if run_dir is not None:
            print(asyncio.run(shoot(view, run_dir)))


if __name__ == "__main__":
    main()
