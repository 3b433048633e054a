"""The memory backend's per-segment record index: each entry is ``[rows, top,
warm, cuts]``, the stored records of one segment sorted by the seq of their
position, the last seq if every row holds its `Memory` (else `COLD`), how many
leading rows do, and the cuts already found (`upto`)."""

from __future__ import annotations

import sys
from bisect import bisect_right
from itertools import islice
from operator import attrgetter
from typing import Any

SEQ = attrgetter("_seq")  # a stored record's seq within its segment
COLD = sys.maxsize  # an index entry's ``top`` while some row has no Memory


def warm(entry: list[Any], hi: int, ns: str) -> None:
    """Build the Memory of each of an index entry's first ``hi`` rows that has none."""
    rows = entry[0]
    for r in islice(rows, entry[2], hi):
        if r.memory is None:
            r.memory = r.build(ns)
    entry[2] = hi
    if hi == len(rows):
        entry[1] = rows[-1]._seq if rows else -1


def upto(entry: list[Any], upto: int) -> int:
    """How many of a segment's rows have a seq up to ``upto``.

    Remembered per cut in the entry (``entry[3]``): a read of a bushy tree
    cuts the same segments at the same fork points again and again, and a
    bisection costs more the longer the segment grows. A cut below the last
    row stays right while rows are appended; a row inserted before the end
    drops them all (a purge makes a new entry)."""
    cuts = entry[3]
    hi = cuts.get(upto)  # first: touching the segment's last row costs a cache miss
    if hi is not None:
        return int(hi)
    rows = entry[0]
    if not rows or rows[-1]._seq <= upto:
        return len(rows)
    hi = cuts[upto] = bisect_right(rows, upto, key=SEQ)
    return hi
