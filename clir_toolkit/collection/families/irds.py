"""``wikiclir``, ``hc4`` and ``neuclir``: the CLIR collections of ir_datasets, en→L.

A recipe's ``collection = "hc4"`` with ``languages = ["fa", "zh"]`` runs on ``hc4-en-fa``
and ``hc4-en-zh``, built by :func:`clir_toolkit.collection.irds.build_irds_collection` from
ir_datasets' cache, offline (``clir collection build hc4 --lang fa --download`` fetches
what is missing, where ir_datasets can). Each family's collection is the whole dataset of
a language: ``wikiclir/L`` (split 60/20/20 by a hash of the query id), ``hc4/L`` (HC4's
own train/dev/test), ``neuclir/1/L`` (the 2022 topics as dev, 2023 as test, no train).
``clir collection build irds --dataset NAME`` builds the parts of a dataset
(``hc4/zh/dev``, ``neuclir/1/fa/trec-2022``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clir_toolkit.collection.builder import CollectionFamily
from clir_toolkit.collection.irds import build_irds_collection, format_summary
from clir_toolkit.collection.irds.datasets import HC4_LANGS, WIKICLIR_LANGS
from clir_toolkit.errors import UsageError
from clir_toolkit.params import Param
from clir_toolkit.registry import register


class IrdsFamily(CollectionFamily):
    """A family of ir_datasets whose dataset of language L is :attr:`dataset` (one variant)."""

    dataset = ""
    """The ir_datasets name of the collection en→L, with ``{language}`` for L."""
    params = (
        Param("limit_docs", int, doc="keep only the first N documents", minimum=1,
              metavar="N", optional=True),
        Param("download", bool, False, "let ir_datasets fetch missing files (needs a network)"),
    )  # fmt: skip

    def build(
        self, language: str, out: Path, variant: str, progress: bool, **options: Any
    ) -> Any:
        if language not in self.languages:
            raise UsageError(f"no {self.name} collection for language {language!r}: choose one "
                             f"of {', '.join(self.languages)}")
        name = self.dataset.format(language=language)
        return build_irds_collection(name, out, progress=progress, **options)

    def format_summary(self, summary: Any) -> str:
        return format_summary(summary)


@register("collections", "wikiclir", order=3)
class WikiClir(IrdsFamily):
    """English→L CLIR collection from Wikipedia (Sasaki et al. 2018), via ir_datasets"""

    languages = WIKICLIR_LANGS
    dataset = "wikiclir/{language}"


@register("collections", "hc4", order=4)
class Hc4(IrdsFamily):
    """English→L CLIR collection from Common Crawl News (HC4), via ir_datasets"""

    languages = HC4_LANGS
    dataset = "hc4/{language}"


@register("collections", "neuclir", order=5)
class NeuClir(IrdsFamily):
    """English→L CLIR collection of TREC NeuCLIR 2022-23, via ir_datasets"""

    languages = HC4_LANGS
    dataset = "neuclir/1/{language}"
