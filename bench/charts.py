"""The benchmarks' PNG charts: matplotlib (the `bench` extra) when it is installed, else no chart."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib.pyplot drawing off-screen, or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def save(fig, ax, path: Path, title: str) -> bool:
    if len(fig.axes) > 1:
        fig.suptitle(title, fontsize=9)  # over every panel, not cut at the edge of one
    else:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return True
