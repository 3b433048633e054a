"""The report's PNG chart: leak rate by system and fork type.

matplotlib is an optional extra (``pip install 'branchmem[bench]'``); without
it the chart is skipped with a message and the tables are unaffected.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def write_chart(summary: dict[str, Any], path: Path) -> str | None:
    """Draw grouped bars (one group per fork type, one bar per system); return the file name.

    Context leak rates always; answer leak rates in a second panel for an
    answer run. Returns ``None`` (and says why on stderr) when matplotlib is
    not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            "branchbench: matplotlib is not installed, skipping the chart "
            "(pip install 'branchmem[bench]' to draw it)",
            file=sys.stderr,
        )
        return None

    systems: dict[str, Any] = summary["systems"]
    names = list(systems)
    forks = sorted({f for s in systems.values() for f in s["by_fork_type"]}, key=_fork_order)
    kinds = ["context"] + (["answer"] if any(s["answer"] for s in systems.values()) else [])
    fig, axes = plt.subplots(len(kinds), 1, figsize=(11, 3.6 * len(kinds) + 0.8), squeeze=False)
    width = 0.8 / max(len(names), 1)
    for ax, kind in zip(axes[:, 0], kinds, strict=True):
        for i, name in enumerate(names):
            values = []
            for f in forks:
                block = systems[name]["by_fork_type"][f][kind]
                rate = block["leak_rate"] if block else None
                values.append(0.0 if rate is None else rate)
            xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(forks))]
            ax.bar(xs, values, width, label=name)
        ax.set_xticks(range(len(forks)))
        ax.set_xticklabels(forks)
        ax.set_ylim(0, 1)
        ax.set_ylabel("leak rate")
        ax.set_title(f"{kind} leak rate by fork type (lower is better)")
    axes[-1, 0].legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _fork_order(fork: str) -> tuple[int, str]:
    from .scenario import FORK_TYPES

    return (FORK_TYPES.index(fork) if fork in FORK_TYPES else len(FORK_TYPES), fork)
