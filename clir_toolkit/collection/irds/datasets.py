"""The CLIR families of ir_datasets that collections are built from, and their names.

Each family is resolved from the name typed on the command line by a registry of
patterns (the habit of ir_datasets itself: a name on the command line is a name in code),
to an :class:`IrdsPlan`: which ir_datasets datasets to read, which fields, how to map the
grades, how topics fall into splits, and the credits for the manifest.
:mod:`clir_toolkit.collection.irds` builds the collection directory from a plan.

``wikiclir/LANG``
    The data of the smooth-learning paper (its Section 4, "Datasets"): Sasaki et al.,
    "Cross-Lingual Learning-to-Rank with Shared Representations", NAACL 2018. English
    queries are the first sentence of an English Wikipedia article (the ``first_sent``
    field); grade 2 = the foreign article linked to it by an inter-language link, grade 1 =
    foreign articles that link to that article and are linked by it. ir_datasets has one
    query set per language, so the split is ours: a query goes to ``train``, ``dev`` or
    ``test`` by the first 8 bytes of the sha256 of its id, modulo 100 (< 60, < 80, else):
    60/20/20, the paper's 3:1:1, stable across languages and versions (:func:`hashed_split`).

``hc4/LANG`` and ``hc4/LANG/{train,dev,test}`` (LANG = fa, ru, zh)
    HC4 (Lawrie et al., "HC4: A New Suite of Test Collections for Ad Hoc CLIR", ECIR 2022):
    Common Crawl News documents, English topic titles as queries, the human translation of
    each title (``ht_title``) as the human topic. The dataset's own splits are kept.

``neuclir/1/LANG``, ``neuclir/1/LANG/{trec-2022,trec-2023,hc4-filtered}``
    The TREC NeuCLIR track's collection 1 (Lawrie et al., "Overview of the TREC 2022 NeuCLIR
    Track", TREC 2022). ``neuclir/1/LANG`` takes the 2022 topics as ``dev`` and the 2023
    topics as ``test``; a single year is ``test``; ``hc4-filtered`` (the HC4 topics judged
    on NeuCLIR's documents) keeps HC4's ``dev`` and ``test``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from clir_toolkit.errors import UsageError

__all__ = [
    "FAMILIES",
    "SPLITS",
    "Family",
    "IrdsPlan",
    "SplitSource",
    "hashed_split",
    "resolve",
]

SPLITS = ("train", "dev", "test")


class SplitSource(NamedTuple):
    """Where the topics and judgements of one of our splits come from.

    ``split`` is ``"train"``, ``"dev"`` or ``"test"``, or ``None`` to assign each topic by
    :func:`hashed_split`. The judgements are read from ``qrels_id`` and kept for the topics
    read from ``queries_id`` (usually the same dataset).
    """

    split: str | None
    queries_id: str
    qrels_id: str


@dataclass(frozen=True)
class IrdsPlan:
    """Everything needed to build one collection: ir_datasets ids, fields, grades, credits."""

    dataset: str  # the name the user typed, e.g. "hc4/zh"
    family: str  # "wikiclir", "hc4", "neuclir"
    doc_lang: str  # ISO 639-1
    docs_id: str  # the ir_datasets dataset whose documents form the corpus
    sources: tuple[SplitSource, ...]
    query_field: str  # the field of a query record that is our English query
    human_field: str | None  # the field with the human translation, if any
    grade_map: dict[int, int]  # dataset grade -> our grade
    split_rule: str  # how topics were assigned to splits, for the manifest
    cache_dirs: tuple[str, ...]  # sub-directories of IR_DATASETS_HOME the dataset lives in
    how_to_get: str  # how to obtain files that ir_datasets cannot download by itself
    url: str
    citation: str
    licence: str

    @property
    def keeps_original_grades(self) -> bool:
        """True when the dataset's grades differ from ours, so both qrels are written."""
        return any(ours != theirs for theirs, ours in self.grade_map.items())


class Family(NamedTuple):
    """One family of datasets: the names it accepts and the function that plans a build."""

    name: str
    pattern: re.Pattern[str]
    plan: Callable[[re.Match[str]], IrdsPlan]
    usage: str  # how its names are spelled, for error messages


# The languages of WikiCLIR in ir_datasets (``wikiclir/LANG``); en-simple is Simple English.
WIKICLIR_LANGS = (
    "ar", "ca", "cs", "de", "en-simple", "es", "fi", "fr", "it", "ja", "ko", "nl", "nn", "no",
    "pl", "pt", "ro", "ru", "sv", "sw", "tl", "tr", "uk", "vi", "zh",
)  # fmt: skip
HC4_LANGS = ("fa", "ru", "zh")

WIKICLIR_GRADES = {0: 0, 1: 1, 2: 2}
# HC4 and NeuCLIR: 3 very valuable, 1 somewhat valuable, 0 not valuable.
HC4_GRADES = {0: 0, 1: 1, 3: 2}

_HASH_RULE = (
    "wikiclir has one query set per language: a topic goes to train, dev or test by "
    "int.from_bytes(sha256(qid)[:8], 'big') % 100 < 60, < 80, else (60/20/20)"
)
_HC4_DOCS = (
    "HC4's documents cannot be downloaded as a file: they are rebuilt from Common Crawl with "
    "the scripts of https://github.com/hltcoe/HC4, on a machine with a network"
)


def _wikiclir(match: re.Match[str]) -> IrdsPlan:
    lang = match["lang"]
    dataset = f"wikiclir/{lang}"
    return IrdsPlan(
        dataset=dataset,
        family="wikiclir",
        doc_lang="en" if lang == "en-simple" else lang,
        docs_id=dataset,
        sources=(SplitSource(None, dataset, dataset),),
        query_field="first_sent",
        human_field=None,
        grade_map=WIKICLIR_GRADES,
        split_rule=_HASH_RULE,
        cache_dirs=("wikiclir",),
        how_to_get="ir_datasets downloads wiki-clir.tar.gz (7 GB) and unpacks it",
        url="https://www.cs.jhu.edu/~kevinduh/a/wikiclir2018/",
        citation=(
            "Shota Sasaki, Shuo Sun, Shigehiko Schamoni, Kevin Duh, Kentaro Inui. Cross-Lingual "
            "Learning-to-Rank with Shared Representations. NAACL 2018"
        ),
        licence="Wikipedia text: CC BY-SA 3.0 (attribution: the Wikipedia articles' authors)",
    )


def _hc4(match: re.Match[str]) -> IrdsPlan:
    lang, only = match["lang"], match["split"]
    splits = (only,) if only else SPLITS
    return IrdsPlan(
        dataset=f"hc4/{lang}" + (f"/{only}" if only else ""),
        family="hc4",
        doc_lang=lang,
        docs_id=f"hc4/{lang}",
        sources=tuple(SplitSource(s, f"hc4/{lang}/{s}", f"hc4/{lang}/{s}") for s in splits),
        query_field="title",
        human_field="ht_title",
        grade_map=HC4_GRADES,
        split_rule="HC4's own train/dev/test topic files",
        cache_dirs=("hc4",),
        how_to_get=_HC4_DOCS,
        url="https://github.com/hltcoe/HC4",
        citation=(
            "Dawn Lawrie, James Mayfield, Douglas W. Oard, Eugene Yang. HC4: A New Suite of "
            "Test Collections for Ad Hoc CLIR. ECIR 2022"
        ),
        licence=(
            "documents: Common Crawl News (Common Crawl terms of use); topics and judgements: "
            "see https://github.com/hltcoe/HC4"
        ),
    )


def _neuclir(match: re.Match[str]) -> IrdsPlan:
    lang, subset = match["lang"], match["subset"]
    base = f"neuclir/1/{lang}"
    docs_id = base
    cache_dirs: tuple[str, ...] = ("neuclir",)
    sources: tuple[SplitSource, ...]
    if subset is None:
        sources = (
            SplitSource("dev", f"{base}/trec-2022", f"{base}/trec-2022"),
            SplitSource("test", f"{base}/trec-2023", f"{base}/trec-2023"),
        )
        rule = "TREC NeuCLIR 2022 topics -> dev, 2023 topics -> test"
    elif subset == "hc4-filtered":
        # The topics of HC4's dev and test files, judged on NeuCLIR's documents.
        docs_id = f"{base}/hc4-filtered"
        sources = tuple(
            SplitSource(s, f"hc4/{lang}/{s}", f"{base}/hc4-filtered") for s in ("dev", "test")
        )
        rule = "HC4's dev and test topics, judgements restricted to NeuCLIR documents"
        cache_dirs = ("neuclir", "hc4")
    else:
        sources = (SplitSource("test", f"{base}/{subset}", f"{base}/{subset}"),)
        rule = f"the TREC NeuCLIR {subset[-4:]} topics -> test"
    return IrdsPlan(
        dataset=base + (f"/{subset}" if subset else ""),
        family="neuclir",
        doc_lang=lang,
        docs_id=docs_id,
        sources=sources,
        query_field="title",
        human_field="ht_title",
        grade_map=HC4_GRADES,
        split_rule=rule,
        cache_dirs=cache_dirs,
        how_to_get="ir_datasets downloads NeuCLIR's documents from Hugging Face",
        url="https://neuclir.github.io/",
        citation=(
            "Dawn Lawrie, Sean MacAvaney, James Mayfield, Paul McNamee, Douglas W. Oard, "
            "Luca Soldaini, Eugene Yang. Overview of the TREC 2022 NeuCLIR Track. TREC 2022"
        ),
        licence=(
            "documents: Common Crawl News (Common Crawl terms of use); topics and judgements: "
            "NIST, TREC NeuCLIR track"
        ),
    )


_WIKI = "|".join(re.escape(lang) for lang in WIKICLIR_LANGS)
_HC4 = "|".join(HC4_LANGS)

FAMILIES: tuple[Family, ...] = (
    Family(
        "wikiclir",
        re.compile(rf"wikiclir/(?P<lang>{_WIKI})"),
        _wikiclir,
        "wikiclir/LANG (LANG: " + ", ".join(WIKICLIR_LANGS) + ")",
    ),
    Family(
        "hc4",
        re.compile(rf"hc4/(?P<lang>{_HC4})(?:/(?P<split>train|dev|test))?"),
        _hc4,
        "hc4/LANG[/train|dev|test] (LANG: fa, ru, zh)",
    ),
    Family(
        "neuclir",
        re.compile(
            rf"neuclir/1/(?P<lang>{_HC4})(?:/(?P<subset>trec-2022|trec-2023|hc4-filtered))?"
        ),
        _neuclir,
        "neuclir/1/LANG[/trec-2022|trec-2023|hc4-filtered] (LANG: fa, ru, zh)",
    ),
)


def resolve(dataset_id: str) -> IrdsPlan:
    """The build plan of a dataset name, or a one-line error listing the supported names."""
    for family in FAMILIES:
        match = family.pattern.fullmatch(dataset_id.strip())
        if match:
            return family.plan(match)
    supported = "; ".join(family.usage for family in FAMILIES)
    raise UsageError(f"unknown dataset {dataset_id!r}: supported are {supported}")


def hashed_split(qid: str) -> str:
    """``train``, ``dev`` or ``test`` for a topic id: 60/20/20 by the sha256 of the id.

    The first 8 bytes of ``sha256(qid)`` read as a big-endian integer, modulo 100: below 60
    is train, below 80 dev, the rest test. It depends on the id alone, so a topic keeps its
    split when the data are rebuilt, filtered or read in another order, and WikiCLIR's
    English queries (shared by all languages) fall in the same split in every language.
    """
    bucket = int.from_bytes(hashlib.sha256(qid.encode("utf-8")).digest()[:8], "big") % 100
    if bucket < 60:
        return "train"
    return "dev" if bucket < 80 else "test"
