"""Which urls from a run become links (issue 29): only plain ``https://`` ones.

A ``url`` in an event (torch's graph-break explanation link, ``gbNNNN``) comes from the
log, which anyone may have written: ``javascript:alert(1)`` or ``https://x) [y](javascript:``
put in an href (report.html), a Markdown link (hover, summary.md) or a diagnostic's
codeDescription would run or mislead. ``link_url`` returns the url only when it is an
``https://`` url made of the characters RFC 3986 allows, without the ones that close a
Markdown link or an HTML attribute (``()[]<>"'`` and spaces); faces show any other url
as plain text (``md_text``), never as a link.
"""

from __future__ import annotations

import re

__all__ = ["link_url", "md_text"]

_SAFE = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9\-._~:/?#@!$&*+,;=%]*)?")
_MAX = 2048
# ``-``, ``+``, ``.`` and ``#`` make lists or headings only at a line's start, and this text never
# starts one (newlines are folded): escaping them only shows backslashes where Markdown is
# not rendered ("Data\-dependent").
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>!|~])")


def link_url(url: str | None) -> str | None:
    """The url if it may become a link, else None."""
    if url is None or len(url) > _MAX or _SAFE.fullmatch(url) is None:
        return None
    return url


def md_text(text: str) -> str:
    """Text for Markdown that renders as itself: no link, emphasis or HTML is made from it."""
    return _MD_SPECIAL.sub(r"\\\1", text.replace("\n", " "))


def md_code(text: str) -> str:
    """``text`` as inline code whatever backticks it holds (CommonMark: a fence longer than
    its longest run of backticks, padded when it starts or ends with one)."""
    text = text.replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_fence(text: str, lang: str = "") -> list[str]:
    """``text`` as a fenced code block no line of it can close: the fence is longer than
    any run of backticks in it (torch's debug context can hold a fence of its own)."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + lang, text, fence]
