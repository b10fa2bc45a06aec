"""How the toolkit writes a matplotlib figure as PNG: one resolution, and the same bytes for
the same figure (no software or date stamp in the metadata), so that a regenerated figure
only changes in git when what it shows changes. Used by ``clir compare --plot``, the
recipes' sweep and density figures and ``clir rerank bins --plot``; matplotlib is imported
by their modules, not here."""

from __future__ import annotations

from typing import IO, Any

DPI = 110
"""Dots per inch of every PNG figure."""


def write_png(figure: Any, handle: IO[bytes]) -> None:
    """Write the matplotlib ``figure`` as PNG into the binary ``handle`` (for a file written
    whole or not at all, one of :func:`clir_toolkit.files.atomic_write`)."""
    figure.savefig(handle, format="png", dpi=DPI, metadata={"Software": None})
