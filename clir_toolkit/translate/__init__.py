"""Query translation: source-language queries in, structured target-language queries out.

Every translator implements :class:`Translator`: it takes structured queries in the query
language (plain ones, or ones expanded with WordNet synonyms) and returns, for every
source term, a weighted set of target-language alternatives. The structure survives until
:mod:`clir_toolkit.search` builds the Lucene query (``and``, ``or`` or ``syn``).

Three families, one module each:

* :mod:`.dictionary` — bilingual dictionaries (FreeDict, CC-CEDICT, a user's TSV); the
  thesis' §5.2, with Pirkola's structure available at search time;
* :mod:`.mt` — machine translation of the whole query (Apertium, a local Hugging Face
  model, or a file of translations made elsewhere);
* :mod:`.embedding` — nearest neighbours in a cross-lingual word-embedding space, scored
  with the query context (thesis §5.3, equation 5.2): one trained by ``clir embed train``
  or USE-m3's pretrained subword table (:mod:`.subword_space`).

What ``--translate`` offers is one module each in :mod:`.translators` (``none``, ``dict``,
``mt``, ``embed``), registered in :mod:`clir_toolkit.registry` with the options it reads;
:mod:`.pipeline` makes the one the options name, and runs it after the expander.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from clir_toolkit.query import StructuredQuery


class Translator(Protocol):
    """Turns source-language structured queries into target-language ones."""

    #: A short description for run tags and logs, e.g. ``dict:freedict:eng-fra/all``.
    name: str

    def translate(self, queries: Sequence[StructuredQuery]) -> list[StructuredQuery]:
        """Translate a batch (MT systems translate faster in batches)."""
        ...
