"""A cache of parsed dictionaries under ``$CLIR_DATA/cache``, rebuilt when a source changes.

Parsing a large dictionary (FreeDict eng-deu's 460,000 entries, CC-CEDICT) takes seconds;
:func:`cached_dictionary` keeps the parsed phrases in a JSON Lines file per dictionary.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from clir_toolkit.files import atomic_write, data_dir, file_stamps
from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary

__all__ = ["PARSER_VERSION", "cached_dictionary"]

#: Changes whenever parsing changes, so that dictionaries cached by older code are rebuilt.
PARSER_VERSION = 3


def cached_dictionary(
    name: str, sources: Sequence[Path], build: Callable[[], dict[str, list[str]]]
) -> BilingualDictionary:
    """The dictionary ``build()`` makes from ``sources``, cached under ``$CLIR_DATA/cache``.

    The cache is a JSON Lines file: a first line naming the parser version and the size and
    modification time of every source file, then the phrases. It is used only while that
    first line still matches, and rebuilt otherwise; a cache that cannot be written is
    skipped.
    """
    stamp = json.dumps([PARSER_VERSION, name, file_stamps(sources)])
    cache = data_dir() / "cache" / f"{name.replace(':', '-').replace(' ', '-')}.jsonl"
    try:
        with open(cache, encoding="utf-8") as handle:
            if handle.readline().rstrip("\n") == stamp:
                saved = json.loads(handle.readline())
                if isinstance(saved, dict):
                    return BilingualDictionary._from_normalised(saved, name)
    except (OSError, ValueError, RecursionError):  # no cache yet, or a damaged one: rebuild it
        pass
    dictionary = BilingualDictionary(build(), name=name)
    with contextlib.suppress(OSError), atomic_write(cache) as handle:
        handle.write(stamp + "\n")
        json.dump(dictionary._candidates, handle, ensure_ascii=False)
        handle.write("\n")
    return dictionary
