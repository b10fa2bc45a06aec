"""Where the toolkit keeps the data it sets up or caches for itself (dictionaries, WordNet,
the DDTP lists, trained embeddings): :func:`data_dir`."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """Where the toolkit keeps data it sets up or caches: ``$CLIR_DATA``, by default
    ``~/.local/share/clir_toolkit``."""
    configured = os.environ.get("CLIR_DATA", "").strip()
    return (
        Path(configured).expanduser() if configured else Path.home() / ".local/share/clir_toolkit"
    )
