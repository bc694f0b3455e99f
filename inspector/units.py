"""How a time, a size, a share and a rate are written, in every face and every report:
"820 µs", "8.0 KiB", "12.3%", "912 GB/s (27%)"."""

from __future__ import annotations


def time_text(us: float) -> str:
    """µs per step as people read it: "820 µs", "1.25 ms", "2.10 s"."""
    if us < 1000:
        return f"{us:.0f} µs"
    if us < 1e6:
        return f"{us / 1000:.2f} ms"
    return f"{us / 1e6:.2f} s"


def bytes_text(n: int | None) -> str:
    """A size as the kernel faces print it: "256 B", "8.0 KiB"; "-" when not recorded."""
    if n is None:
        return "-"
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def share_text(part: float, whole: float) -> str:
    """``part`` as a share of ``whole`` ("12.3%"), "-" when there is no whole."""
    return f"{part / whole:.1%}" if whole else "-"


def rate_text(value: float | None, unit: str, peak: float | None = None) -> str:
    if value is None:
        return "-"
    text = f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 1 else f"{value:.2g}"
    text += f" {unit}" if unit else ""
    if peak:
        text += f" ({value / peak:.0%})"
    return text
