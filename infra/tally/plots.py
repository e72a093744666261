"""matplotlib for the PNGs the launcher and the benchmarks draw."""

from __future__ import annotations


def pyplot():
    """matplotlib's pyplot on the file-only backend (nothing here has a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
