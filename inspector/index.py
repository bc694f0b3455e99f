"""The run index: a snapshot of what opening a run reads, so a big run opens in a fraction
of the time it takes to read its logs.

Opening a run decodes every line of every log and applies the events to the model. Most
lines (``chromium`` timers, ``raw`` tensor descriptions: ~60 % of events and most bytes)
only count; the rest are kept. The index holds those kept events as msgpack, one segment
per kind, the order they were applied in, the counts, and where each log's reader stood.
``Run`` replays the index through the same ``RunModel.apply`` and then reads the logs from
where the index stopped, so a model from the index is the model from the logs — only the reading is skipped. A face that needs
only some kinds (the LSP never reads FX graphs or artifacts) decodes only their segments.

The logs stay the record: the index is a cache. It is used only while every log it names
still starts and ends (at the stored offset) with the bytes it saw — logs are append-only,
so a grown log is read on from there; a shorter or rewritten one, a newer index format, a
changed event schema or any damage makes it ignored and rebuilt. ``Run`` writes it when a
finished run was opened without it (atomically: a temporary file renamed over the old).

Where: the recorder (the process that recorded the run: ``Run(..., recorder=True)``) writes
``index.dyn`` into the run directory at the run's end. Every other reader — ``summary``,
the TUI's ``open``, the language server, the findings precompute — never writes inside a
run it did not record: the index it builds goes to this user's cache
(``user_cache.index_path``, keyed by the run's real path). A reader writing into a run raced
``rm -rf`` of that run ("Directory not empty") and re-created files in a run being deleted.
Opening tries the run's own index, then the cache's.

A run directory is untrusted (docs/security.md) and the index holds decoded text that the
reader already made safe: a crafted index could carry terminal escapes past that check.
So every part is authenticated with keyed BLAKE2b under a key only this user can read
(``~/.cache/dyn-inspect/index.key``, mode 0600, made on first use); an index made by
anybody else — another user, another machine, a bug report — is ignored and rebuilt.
"""

from __future__ import annotations

import array
import functools
import gc
import hashlib
import hmac
import mmap
import os
import secrets
import tempfile
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from dyn_inspect.engine import user_cache
from dyn_inspect.engine.schema import EVENT_TYPES, SCHEMA_VERSION, Event, LogHeader, UnknownEvent, json_schema
from dyn_inspect.engine.user_cache import KEY_ENV as KEY_ENV  # (re-exported: where the index key lives)
from dyn_inspect.engine.user_cache import cache_dir as cache_dir
from dyn_inspect.inspector.model import RunModel, handler_for
from dyn_inspect.inspector.reader import LogFile, Problem, Refused, list_logs, open_inside

if TYPE_CHECKING:
    from dyn_inspect.inspector.run import Run

INDEX_FILE = user_cache.INDEX_FILE
INDEX_VERSION = 1
MAGIC = b"dyn-inspect index\n"
NO_INDEX_ENV = "DYN_INSPECT_NO_INDEX"  # set: every run is read from its logs, no index written
_PROBE = 4096  # bytes hashed at each end of a log's indexed part
_MAC = 32
UNKNOWN = "unknown"  # the segment of lines whose kind this version does not know

# Kinds the LSP's findings never read: skipped when it opens a run from the index.
NOT_FOR_FINDINGS = frozenset({"graph", "artifact", "cache", "output_code", "bytecode", "guards"})

# Called with the run and the index after each index written (best effort, errors ignored):
# the CLI, the composition root, registers the language server's findings precompute here
# (the inspector imports no face).
WRITTEN: list[Callable[[Run, Path], None]] = []


class Segment(msgspec.Struct, array_like=True):
    start: int
    length: int
    mac: bytes


class LogState(msgspec.Struct, kw_only=True):
    """Where one log's reader stood when the index was written."""

    name: str
    offset: int  # bytes consumed, at a line boundary
    line_no: int
    head: bytes  # digest of the log's first bytes (up to _PROBE) ...
    tail: bytes  # ... and of the _PROBE bytes before ``offset``
    header: LogHeader | None = None
    problems: list[tuple[int, str]] = []
    rejected: bool = False


class Header(msgspec.Struct, kw_only=True):
    version: int
    schema: int
    fingerprint: bytes  # of the event schema: a changed Struct makes old indexes stale
    logs: list[LogState]
    tags: list[str]  # kind number → kind
    order: Segment  # one byte per kept event: its kind number, in apply order
    order_logs: Segment  # uint32 per kept event: its log (index into ``logs``)
    segments: dict[str, Segment]
    kinds: dict[str, int]
    event_count: int
    last_event_time: float


_header_decoder = msgspec.msgpack.Decoder(Header)


@functools.lru_cache(maxsize=1)
def schema_fingerprint() -> bytes:
    """The event schema and which kinds the model keeps: an index written by a version that
    only counted a kind (``ddp_split`` before its analysis) lacks those events, so a version
    that keeps them must not read it."""
    kept = sorted(tag for tag, cls in EVENT_TYPES.items() if handler_for(cls) is not None)
    return hashlib.blake2b(msgspec.json.encode([json_schema(), kept]), digest_size=16).digest()


def _read_key(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            key = f.read(64)
    except OSError:
        return None
    return key if len(key) == 32 else None


@functools.lru_cache(maxsize=4)
def _key_at(directory: str) -> bytes | None:
    path = os.path.join(directory, "index.key")
    if os.path.exists(path):
        return _read_key(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return _read_key(path)
    except OSError:
        return None  # no writable cache directory: runs open from their logs
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


def _key() -> bytes | None:
    return _key_at(str(cache_dir()))


def _mac(key: bytes, data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, key=key, digest_size=_MAC).digest()


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _probes(fd: int, offset: int) -> tuple[bytes, bytes]:
    head = os.pread(fd, min(offset, _PROBE), 0)
    start = max(0, offset - _PROBE)
    tail = os.pread(fd, offset - start, start)
    return _digest(head), _digest(tail)


class Kept:
    """The events a run's model was built from, in apply order, as the index stores them
    (``Run`` appends to it while reading; references only: the model holds the events)."""

    def __init__(self) -> None:
        self.by_kind: dict[str, list[Any]] = {}
        self.tags: list[str] = []
        self._tag_no: dict[str, int] = {}
        self.order = bytearray()
        self.order_logs = array.array("I")
        self.log_no: dict[str, int] = {}
        self.complete = True  # False: built from part of an index (some kinds skipped)

    def number(self, log: str) -> int:
        n = self.log_no.get(log)
        if n is None:
            n = self.log_no[log] = len(self.log_no)
        return n

    def adopt(
        self, tags: list[str], by_kind: dict[str, list[Any]], order: memoryview, order_logs: array.array[int], logs: list[str]
    ) -> None:
        """Take over an index's parts (this ``Kept`` is empty: the index is read first)."""
        self.tags = list(tags)
        self._tag_no = {tag: n for n, tag in enumerate(self.tags)}
        self.by_kind = by_kind
        self.order = bytearray(order)
        self.order_logs = order_logs
        self.log_no = {name: n for n, name in enumerate(logs)}

    def add(self, kind: str, event: Any, log_no: int) -> None:
        n = self._tag_no.get(kind)
        if n is None:
            if len(self.tags) >= 255:
                self.complete = False  # more kinds than a byte numbers: no index for this run
                return
            n = self._tag_no[kind] = len(self.tags)
            self.tags.append(kind)
            self.by_kind[kind] = []
        self.by_kind[kind].append(event)
        self.order.append(n)
        self.order_logs.append(log_no)


def write(run: Run) -> Path | None:
    """Write ``run``'s index — into the run when ``run.recorder``, else into the user
    cache — and return where; None when it cannot be (no key, nowhere writable, a model
    built from part of an index). Never raises for I/O: the index is a cache."""
    kept = run.kept
    key = _key()
    if key is None or not kept.complete:
        return None
    logs: list[LogState] = []
    names = [name for name, _ in sorted(kept.log_no.items(), key=lambda item: item[1])]
    # Logs the model read no kept event from (a launcher log's header is kept, so this is
    # rare) still belong to the snapshot: their reader state must be restored too.
    for name in run.logs:
        if name not in kept.log_no:
            names.append(name)
            kept.number(name)
    for name in names:
        log = run.logs.get(name)
        if log is None or log.skipping:
            return None  # (inside an overlong line: no line boundary to resume at)
        consumed = log.offset - log.unterminated_tail()
        try:
            fd = open_inside(run.path, log.path)
        except (OSError, Refused):
            if not log.rejected:
                return None
            head = tail = b""
        else:
            try:
                head, tail = _probes(fd, consumed)
            finally:
                os.close(fd)
        logs.append(
            LogState(
                name=name,
                offset=consumed,
                line_no=log.line_no,
                head=head,
                tail=tail,
                header=log.header,
                problems=[(p.line, p.message) for p in log.problems],
                rejected=log.rejected,
            )
        )
    blobs: list[bytes] = []
    segments: dict[str, Segment] = {}
    position = 0

    def segment(data: bytes) -> Segment:
        nonlocal position
        seg = Segment(position, len(data), _mac(key, data))
        blobs.append(data)
        position += len(data)
        return seg

    order = segment(bytes(kept.order))
    order_logs = segment(kept.order_logs.tobytes())
    m = run.model
    try:
        for kind, events in kept.by_kind.items():
            segments[kind] = segment(msgspec.msgpack.encode(events))
        header = msgspec.msgpack.encode(
            Header(
                version=INDEX_VERSION,
                schema=SCHEMA_VERSION,
                fingerprint=schema_fingerprint(),
                logs=logs,
                tags=list(kept.tags),
                order=order,
                order_logs=order_logs,
                segments=segments,
                kinds=dict(m.kinds),
                event_count=m.event_count,
                last_event_time=m.last_event_time,
            )
        )
    except (OverflowError, ValueError, TypeError, msgspec.EncodeError):
        # JSON holds what MessagePack cannot (an integer >= 2**64, a file name that is not
        # UTF-8): the log was read; this run just has no index, and is read again next time
        return None
    parts = [MAGIC, len(header).to_bytes(8, "little"), header, _mac(key, header), *blobs]
    if run.recorder:
        target = _write_into_run(run.path, parts)
    else:  # a reader: never inside the run (see the module's docstring)
        target = user_cache.index_path(run.path)
        data = b"".join(parts)
        del parts
        if not user_cache.write(target.parent, user_cache.run_key(run.path), data, suffix=user_cache.INDEX_SUFFIX):
            target = None
    if target is None:
        return None
    for listener in list(WRITTEN):
        try:
            listener(run, target)
        except Exception:  # noqa: BLE001 - a listener's failure must not fail the write
            pass
    return target


def _write_into_run(run_dir: Path, parts: list[bytes]) -> Path | None:
    """The recorder's index, in the run it recorded (a temporary file renamed over it)."""
    target = run_dir / INDEX_FILE
    try:
        fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=run_dir)
    except OSError:
        return None  # (deleted meanwhile, or read-only: opened from the logs next time)
    try:
        with os.fdopen(fd, "wb") as f:
            for data in parts:
                f.write(data)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return None
    return target


def _open_index(run_dir: Path, path: Path) -> int:
    """A descriptor of the index at ``path``: inside the run only a regular file of the run
    (``open_inside``); the cache's is this user's own. Raises OSError or Refused."""
    if path.parent == run_dir:
        return open_inside(run_dir, path)
    return os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))


def locations(run_dir: Path) -> list[Path]:
    """Where ``run_dir``'s index may be, in the order opening tries them: the recorder's
    (in the run), then the one a reader built (in the user cache)."""
    return [run_dir / INDEX_FILE, user_cache.index_path(run_dir)]


def current_file(run_dir: Path) -> Path | None:
    """The index file that opening ``run_dir`` now would read whole (see ``identity``)."""
    for path in locations(run_dir):
        if _identity_at(run_dir, path) is not None:
            return path
    return None


class _Stale(Exception):
    """The index does not describe the logs as they are (or is not ours): not used."""


def load(run: Run, skip: Collection[str] = ()) -> bool:
    """Build ``run``'s model from its index if the index is ours and current; returns
    False (and leaves ``run`` untouched) otherwise. ``skip``: kinds not needed by the
    caller — not decoded, and the model is then marked incomplete (never re-indexed)."""
    key = _key()
    if key is None:
        return False
    return any(_load_at(run, path, key, skip) for path in locations(run.path))


def _load_at(run: Run, path: Path, key: bytes, skip: Collection[str]) -> bool:
    try:
        fd = _open_index(run.path, path)
    except (OSError, Refused):
        return False
    try:
        size = os.fstat(fd).st_size
        if size < len(MAGIC) + 8 + _MAC:
            return False
        # (No cyclic GC while building: the objects are many, small and acyclic; see Run.)
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as mm:
                view = memoryview(mm)
                try:
                    _replay(run, view, key, frozenset(skip))
                except (_Stale, msgspec.DecodeError, msgspec.ValidationError, ValueError, OSError, IndexError):
                    _reset(run)
                    return False
                finally:
                    view.release()
        finally:
            if gc_was_enabled:
                gc.enable()
    except (OSError, ValueError):
        return False
    finally:
        os.close(fd)
    return True


def _reset(run: Run) -> None:
    """Undo a replay that found the index stale part-way (the logs are read instead)."""
    run.model = RunModel()
    run.index_id = None
    run.unknown.clear()
    run.logs.clear()
    run.kept = Kept()


def _header(view: memoryview, key: bytes) -> tuple[Header, bytes, int]:
    """The index's header if it is ours and of this format: (header, its MAC — the index's
    identity —, where the segments start)."""
    if view[: len(MAGIC)] != MAGIC:
        raise _Stale
    at = len(MAGIC)
    length = int.from_bytes(view[at : at + 8], "little")
    at += 8
    header_bytes = view[at : at + length]
    mac = bytes(view[at + length : at + length + _MAC])
    if len(header_bytes) != length or not hmac.compare_digest(_mac(key, header_bytes), mac):
        raise _Stale
    header = _header_decoder.decode(header_bytes)
    if header.version != INDEX_VERSION or header.schema != SCHEMA_VERSION or header.fingerprint != schema_fingerprint():
        raise _Stale
    return header, mac, at + length + _MAC


def identity(run_dir: Path) -> bytes | None:
    """The identity (``Run.index_id``) of ``run_dir``'s index if opening the run now would
    read exactly that index — ours, current, every log fully covered and no other log —
    without reading the model; else None. Lets the language server show a run's saved
    findings before it has read the run."""
    for path in locations(run_dir):
        mac = _identity_at(run_dir, path)
        if mac is not None:
            return mac
    return None


def _identity_at(run_dir: Path, path: Path) -> bytes | None:
    key = _key()
    if key is None:
        return None
    try:
        fd = _open_index(run_dir, path)
    except (OSError, Refused):
        return None
    try:
        with open(fd, "rb", closefd=False) as f:
            head = f.read(len(MAGIC) + 8)
            if len(head) < len(MAGIC) + 8:
                return None
            length = int.from_bytes(head[len(MAGIC) :], "little")
            if length > 64 << 20:
                return None
            data = head + f.read(length + _MAC)
        header, mac, _ = _header(memoryview(data), key)
        states = {s.name: s for s in header.logs}
        if {p.name for p in list_logs(run_dir)} != set(states):
            return None  # a log came (or went) since
        _check_logs(run_dir, header.logs)
        for state in header.logs:
            if not state.rejected and os.path.getsize(run_dir / state.name) != state.offset:
                return None  # grown: the model would be more than the index
    except (_Stale, msgspec.DecodeError, msgspec.ValidationError, ValueError, OSError):
        return None
    finally:
        os.close(fd)
    return mac


def _replay(run: Run, view: memoryview, key: bytes, skip: frozenset[str]) -> None:
    try:
        header, mac, base = _header(view, key)

        def part(seg: Segment) -> memoryview:
            data = view[base + seg.start : base + seg.start + seg.length]
            if len(data) != seg.length or not hmac.compare_digest(_mac(key, data), seg.mac):
                raise _Stale
            return data

        states = header.logs
        _check_logs(run.path, states)
        order = part(header.order)
        order_logs = array.array("I")
        order_logs.frombytes(part(header.order_logs))
        if len(order_logs) != len(order):
            raise _Stale
        streams: list[Iterator[Any] | None] = []
        decoded: dict[str, list[Any]] = {}
        for tag in header.tags:
            seg = header.segments.get(tag)
            if seg is None:
                raise _Stale
            if tag in skip:
                streams.append(None)
                continue
            kind_type: Any = UnknownEvent if tag == UNKNOWN else EVENT_TYPES.get(tag)
            if kind_type is None:
                raise _Stale
            events = msgspec.msgpack.decode(part(seg), type=list[kind_type])
            decoded[tag] = events
            streams.append(iter(events))
        names = [s.name for s in states]
        model = run.model
        unknown = run.unknown

        def keep_unknown(model: RunModel, event: UnknownEvent, log: str) -> None:
            unknown.append(event)

        # The model's own handlers, called directly: ``apply`` would also count each event,
        # and the counts come whole from the header.
        handlers = [
            (keep_unknown if tag == UNKNOWN else handler_for(EVENT_TYPES[tag])) if streams[n] is not None else None
            for n, tag in enumerate(header.tags)
        ]
        for number, log_no in zip(order, order_logs, strict=True):
            stream = streams[number]
            if stream is None:
                continue
            handler = handlers[number]
            event = next(stream)
            if handler is not None:
                handler(model, event, names[log_no])
        for stream in streams:
            if stream is not None and next(stream, None) is not None:
                raise _Stale  # more events than the order names
    except StopIteration:
        raise _Stale from None
    run.index_id = mac
    kept = run.kept
    if skip & set(header.tags):
        kept.complete = False
    else:  # the index's own parts become what a later write saves (no copy)
        kept.adopt(header.tags, decoded, order, order_logs, names)
    model.kinds = Counter(header.kinds)
    model.event_count = header.event_count
    model.last_event_time = header.last_event_time
    for state in states:
        kept.number(state.name)
        log = LogFile(run.path / state.name)
        log.offset = state.offset
        log.line_no = state.line_no
        log.header = state.header
        log.problems = [Problem(state.name, line, message) for line, message in state.problems]
        log.rejected = state.rejected
        run.logs[state.name] = log


def _check_logs(run_dir: Path, states: list[LogState]) -> None:
    for state in states:
        if state.rejected:
            continue  # not read then, not read now (its problem is restored)
        try:
            fd = open_inside(run_dir, run_dir / state.name)
        except (OSError, Refused):
            raise _Stale from None
        try:
            if os.fstat(fd).st_size < state.offset or _probes(fd, state.offset) != (state.head, state.tail):
                raise _Stale
        finally:
            os.close(fd)


def kind_of(event: Event | UnknownEvent) -> str:
    if type(event) is UnknownEvent:
        return UNKNOWN
    return str(type(event).__struct_config__.tag)  # type: ignore[attr-defined]
