"""Running the user's program in a child process that records itself.

The child is started exactly as the user would start it (``python train.py args``,
``python -m pkg``, or any command such as ``torchrun``), so ``sys.argv``, ``__main__``,
stdin/stdout/stderr and the exit code behave as without us. What differs is the
environment: the startup hook directory on ``PYTHONPATH`` and the run directory.
The parent writes ``launcher.jsonl`` (run_start / run_end with the child's exit code).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dyn_inspect.engine import recorder
from dyn_inspect.engine.eventlog import TOOL_VERSION, EventLog, new_run_dir, runs_root
from dyn_inspect.engine.schema import RunEnd, RunStart

BOOTSTRAP_DIR = Path(__file__).resolve().parent / "bootstrap"

Mode = Literal["script", "module", "command"]


@dataclass
class LaunchSpec:
    command: list[str]
    mode: Mode
    runs_dir: str | None = None
    compile_disabled: bool = False
    provenance: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)


def child_command(target: str, args: list[str], mode: Mode) -> list[str]:
    if mode == "script":
        return [sys.executable, target, *args]
    if mode == "module":
        return [sys.executable, "-m", target, *args]
    return [target, *args]


def child_env(run_dir: Path, spec: LaunchSpec) -> dict[str, str]:
    env = dict(os.environ)
    env.update(spec.extra_env)
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(BOOTSTRAP_DIR) + (os.pathsep + existing if existing else "")
    env[recorder.RUN_DIR_ENV] = str(run_dir)
    env[recorder.LAUNCHER_PID_ENV] = str(os.getpid())
    if spec.compile_disabled:
        env["TORCHDYNAMO_DISABLE"] = "1"  # torch's own switch: every torch.compile runs eagerly
        env[recorder.DISABLE_ENV] = "1"
    if not spec.provenance:
        env[recorder.PROVENANCE_ENV] = "0"
    return env


class Launch:
    """A started run: the run directory, the launcher log and (once started) the child."""

    def __init__(self, spec: LaunchSpec) -> None:
        self.spec = spec
        self.run_dir = new_run_dir(runs_root(spec.runs_dir))
        self.log = EventLog(self.run_dir, "launcher.jsonl")
        self.started = time.time()
        self.log.write(
            RunStart(
                t=self.started,
                command=spec.command,
                cwd=os.getcwd(),
                mode=spec.mode,
                tool_version=TOOL_VERSION,
                compile_disabled=spec.compile_disabled,
            )
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, **popen_kwargs: object) -> subprocess.Popen[bytes]:
        self.process = subprocess.Popen(  # noqa: S603 - the user's own command
            self.spec.command, env=child_env(self.run_dir, self.spec), **popen_kwargs  # type: ignore[arg-type]
        )
        return self.process

    def finish(self, returncode: int) -> int:
        sig = -returncode if returncode < 0 else None
        exit_code = 128 + sig if sig else returncode
        self.log.write(RunEnd(exit_code=exit_code, signal=sig, duration_s=time.time() - self.started))
        self.log.close()
        return exit_code


def run_foreground(spec: LaunchSpec) -> tuple[Path, int]:
    """Run with the terminal shared (no TUI); Ctrl-C reaches the child, not us."""
    launch = Launch(spec)
    try:
        process = launch.start()
    except OSError as exc:
        launch.finish(127)
        raise FileNotFoundError(f"cannot start {spec.command[0]}: {exc.strerror}") from exc
    # The terminal sends SIGINT to the whole foreground group: the child gets it and decides;
    # we wait for it to finish so that run_end and the summary are still written.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    forward = lambda signum, _frame: process.send_signal(signum)  # noqa: E731
    previous_term = signal.signal(signal.SIGTERM, forward)
    try:
        returncode = process.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, previous_term)
    return launch.run_dir, launch.finish(returncode)
