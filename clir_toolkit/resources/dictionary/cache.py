"""A cache of parsed dictionaries under ``$CLIR_DATA/cache``, rebuilt when a source changes.

Parsing a large dictionary (FreeDict eng-deu's 460,000 entries, CC-CEDICT) takes seconds;
:func:`cached_dictionary` keeps the parsed phrases in a file per dictionary (one line of
JSON), reused by the toolkit's one freshness rule (:mod:`clir_toolkit.freshness`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from clir_toolkit.files import atomic_write, data_dir, sha256_file
from clir_toolkit.freshness import digest, is_fresh, mark_fresh
from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary

__all__ = ["cached_dictionary"]


def cached_dictionary(
    name: str, sources: Sequence[Path], build: Callable[[], dict[str, list[str]]]
) -> BilingualDictionary:
    """The dictionary ``build()`` makes from ``sources``, cached under ``$CLIR_DATA/cache``.

    The cache is reused while it is fresh: made from sources with the same sha256 by the
    same code of the parser (the module that defines ``build``, and what it imports) and of
    this module; it is rebuilt otherwise, or when it is damaged. A cache that cannot be
    written is skipped.
    """
    cache = data_dir() / "cache" / f"{name.replace(':', '-').replace(' ', '-')}.jsonl"
    key = digest({"name": name, "sources": {str(path): sha256_file(path) for path in sources}})
    code = (build.__module__, __name__)
    if is_fresh(cache, key, code):
        try:
            saved = json.loads(cache.read_text(encoding="utf-8"))
            if isinstance(saved, dict):
                return BilingualDictionary._from_normalised(saved, name)
        except (OSError, ValueError, RecursionError):  # a damaged cache: rebuild it
            pass
    dictionary = BilingualDictionary(build(), name=name)
    with contextlib.suppress(OSError):
        with atomic_write(cache, own=True) as handle:
            json.dump(dictionary._candidates, handle, ensure_ascii=False)
            handle.write("\n")
        mark_fresh(cache, key, code=code)
    return dictionary
