"""A function's details shown by the server itself, for editors other than VS Code.

``dynInspect.showDetails`` answers the details as JSON; Neovim, Helix and the like drop a
command's result, so the server also shows them (``present``, per the ``showContent``
setting): a generated read-only Markdown document (``write_details_document``, opened with
``window/showDocument``), else a ``window/showMessage`` line. The VS Code extension shows
the answer's ``markdown`` itself (``vscode-extension/src/common/details.ts``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from dyn_inspect.lsp import code_lens as lens_mod
from dyn_inspect.lsp.documents import path_uri

if TYPE_CHECKING:
    from dyn_inspect.lsp.server import DynInspectServer


def present(ls: DynInspectServer, details: dict[str, Any]) -> None:
    """Show a function's details where the client can: a generated read-only Markdown
    document (``window/showDocument``), else a message. Editors other than VS Code drop
    a command's JSON result, so this is what their users see."""
    mode = ls.settings.show_content
    if mode == "none":
        return
    if not details.get("found"):
        ls.window_show_message(
            types.ShowMessageParams(
                types.MessageType.Info,
                f"dyn-inspect: no compiled function at {details.get('file')}:{details.get('line')} in the run shown",
            )
        )
        return
    caps = ls.client_capabilities.window
    can_show = bool(caps and caps.show_document and caps.show_document.support)
    if mode == "message" or (mode == "auto" and not can_show):
        ls.window_show_message(
            types.ShowMessageParams(types.MessageType.Info, f"dyn-inspect: {details.get('function')}: {details.get('title')}")
        )
        return
    path = write_details_document(details)
    if path is None:
        ls.window_show_message(
            types.ShowMessageParams(types.MessageType.Info, f"dyn-inspect: {details.get('function')}: {details.get('title')}")
        )
        return
    ls.window_show_document(types.ShowDocumentParams(uri=path_uri(str(path)), take_focus=True))


def _private_folder(path: Path) -> bool:
    """Create ``path`` (0700) if missing; True when it is a real directory of ours that
    nobody else can write (a planted symlink or another user's folder is refused)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    own = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    if not (stat.S_ISDIR(st.st_mode) and own) or st.st_mode & 0o022:
        return False
    if st.st_mode & 0o077:
        # ours and nobody else could write in it (an earlier version made it 0755): only
        # readable by others, so nothing can have been planted; close it and use it
        try:
            os.chmod(path, 0o700, follow_symlinks=False)
        except (OSError, NotImplementedError):
            return False
    return True


def write_details_document(details: dict[str, Any]) -> Path | None:
    """The details as ``<tmp>/dyn-inspect-<uid>/details/<function>-<line>.md`` (read-only:
    it is generated, edits would be lost). ``/tmp`` is shared: each folder must be ours and
    private, and the file is created anew without following links (a planted symlink is
    never written through). None when it cannot be written safely."""
    base = Path(tempfile.gettempdir()) / f"dyn-inspect-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    folder = base / "details"
    if not (_private_folder(base) and _private_folder(folder)):
        return None
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(details.get("function", "function")))[:80]
    path = folder / f"{name}-{details.get('line', 0)}.md"
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # our own folder: only we could have put it there
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(details.get("markdown") or lens_mod.details_markdown(details))
            os.fchmod(f.fileno(), 0o400)
    except OSError:
        return None
    return path
