"""Gzip a TORCH_TRACE log for the fixtures, without its ``chromium_event`` records.

Those are torch's timing events (~60 % of a log, and the model only counts them): the
replay checks no timings. Everything else stays byte for byte, payload lines included.
Usage: prune.py IN.log[.gz] OUT.log.gz
"""

from __future__ import annotations

import gzip
import sys


def main() -> None:
    src, dst = sys.argv[1], sys.argv[2]
    opener = gzip.open if src.endswith(".gz") else open
    kept = dropped = 0
    with opener(src, "rt", encoding="utf-8", errors="surrogateescape") as f_in, \
            gzip.open(dst + ".tmp", "wt", encoding="utf-8", errors="surrogateescape", compresslevel=9) as f_out:
        skipping = False
        for line in f_in:
            if line.startswith("\t"):  # a payload line belongs to the record above it
                if not skipping:
                    f_out.write(line)
                continue
            skipping = '{"chromium_event":' in line[:400]
            if skipping:
                dropped += 1
            else:
                kept += 1
                f_out.write(line)
    import os

    os.replace(dst + ".tmp", dst)
    print(f"  {dst}: kept {kept} records, dropped {dropped} chromium events")


if __name__ == "__main__":
    main()
