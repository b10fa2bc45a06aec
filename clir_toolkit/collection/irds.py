"""Collection directories from the CLIR test collections of ir_datasets.

`ir_datasets <https://ir-datasets.com>`_ (MacAvaney et al., "Simplified Data Wrangling with
ir_datasets", SIGIR 2021) gives one Python interface to hundreds of IR test collections:
``ir_datasets.load("hc4/zh/dev")`` returns a dataset whose ``docs_iter()``,
``queries_iter()`` and ``qrels_iter()`` yield typed NamedTuple records. This module turns
three CLIR families into the toolkit's collection directory (the README's Formats section)::

    corpus.jsonl                 {"id", "contents"}: the document's title and text joined
    topics.{split}.tsv           the English queries
    topics-human.{split}.tsv     people's translations of the queries into the document
                                 language, where the dataset has them (HC4, NeuCLIR)
    qrels.{split}.txt            graded 0/1/2, the toolkit's convention (2 = most relevant)
    qrels-original.{split}.txt   the dataset's own grades, where they differ (HC4, NeuCLIR)
    manifest.json                languages, sources and versions, counts, sha256 of each file

The families, each resolved from the name typed on the command line by a registry of
patterns (the habit of ir_datasets itself: a name on the command line is a name in code):

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

**Grades.** HC4 and NeuCLIR judge 0 (not valuable), 1 (somewhat valuable) and 3 (very
valuable). The toolkit's measures read grade 2 as "the most relevant" (``P(rel=2)@1``,
``RR(rel=2)``), so ``qrels.{split}.txt`` maps 3 → 2 and keeps 1 and 0. The mapping changes
nDCG's gains (2 instead of 3), so nDCG on these qrels is not the published HC4/NeuCLIR
figure: evaluate on ``qrels-original.{split}.txt`` to compare with published numbers.

**No download.** ir_datasets downloads missing files when they are first read, but the
toolkit has no network at run time. While a collection is built, ir_datasets' network
downloaders are switched off, so a file missing from its cache (``$IR_DATASETS_HOME``,
default ``~/.ir_datasets``) is one error line naming the file, not a download attempt, and
never a hang. Fetch the dataset on a machine with a network (``download=True``, the
``--download`` option) and copy the cache directory here. ir_datasets reads
``IR_DATASETS_HOME`` when it is imported: set it before the program starts.

Corpora can be large (NeuCLIR zh: 3.2 million documents): documents stream from
ir_datasets' cache straight into ``corpus.jsonl``; only their ids are held in memory (to
catch duplicates). The whole directory is written under a temporary name and renamed into
place when complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from clir_toolkit.collection import MANIFEST
from clir_toolkit.errors import ClirError, FormatError, ResourceError, UsageError
from clir_toolkit.files import atomic_directory, check_replaceable, sha256_file
from clir_toolkit.formats import Doc, Qrel, Topic, write_corpus_jsonl, write_qrels, write_topics_tsv

__all__ = [
    "FAMILIES",
    "IrdsPlan",
    "IrdsSummary",
    "SplitSource",
    "build_irds_collection",
    "format_summary",
    "hashed_split",
    "resolve",
]

SPLITS = ("train", "dev", "test")
QUERY_LANG = "en"

# ---------------------------------------------------------------------------------------------
# The registry: a dataset name on the command line -> what to read from ir_datasets
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Reading through ir_datasets, offline
# ---------------------------------------------------------------------------------------------


def _import_ir_datasets() -> ModuleType:
    try:
        import ir_datasets
    except ImportError:
        raise ResourceError(
            "ir_datasets is not installed (install it with: pip install 'ir_datasets>=0.5')"
        ) from None
    except OSError as exc:  # it creates its cache directory when imported
        raise ResourceError(f"ir_datasets cannot create its cache directory: {exc}") from None
    return ir_datasets


class _DownloadRefused(Exception):
    """Raised in place of a download by ir_datasets while downloads are switched off."""

    def __init__(self, url: str) -> None:
        super().__init__(f"download of {url} refused")
        self.url = url


@contextlib.contextmanager
def _downloads_refused(irds: ModuleType) -> Iterator[None]:
    """Make ir_datasets' network downloaders raise :class:`_DownloadRefused`.

    ir_datasets fetches a file that is not in its cache through one of these classes (in
    ``ir_datasets.util.download``); a file already in the cache is read without them and
    without any hash check. Replacing their ``stream`` method for the duration of a build
    guarantees that nothing touches the network; copies from a local file (a download that
    the user placed in ``$IR_DATASETS_HOME/downloads``) still work.
    """
    module = irds.util.download

    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise _DownloadRefused(str(getattr(self, "url", None) or getattr(self, "uri", "?")))

    patched: list[tuple[type, str, Any]] = []
    for class_name in ("RequestsDownload", "GoogleDriveDownload", "GoogleCloudBucketStream"):
        cls = getattr(module, class_name, None)
        for method in ("stream", "__iter__"):
            if cls is not None and method in vars(cls):
                patched.append((cls, method, vars(cls)[method]))
                setattr(cls, method, refuse)
    try:
        yield
    finally:
        for cls, method, original in patched:
            setattr(cls, method, original)


class _BelowError(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


@contextlib.contextmanager
def _quiet_ir_datasets() -> Iterator[None]:
    """Hide ir_datasets' info and warning lines (download notices) for the duration.

    A refused download would otherwise print ir_datasets' "Download failed" warning before
    our one-line error; the build shows its own progress bar.
    """
    logger = logging.getLogger("ir_datasets")
    quiet = _BelowError()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception, its causes and contexts, and exceptions carried in its arguments.

    ir_datasets reports a failure of several download sources as
    ``RuntimeError('All download sources failed', [(source, exception), ...])``.
    """
    stack: list[Any] = [exc]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(item)
            continue
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        stack.extend(item.args)
        stack.extend(e for e in (item.__cause__, item.__context__) if e is not None)


class _Reader:
    """Reads one plan's datasets through ir_datasets, turning its failures into ClirErrors."""

    def __init__(self, irds: ModuleType, plan: IrdsPlan) -> None:
        self.irds = irds
        self.plan = plan
        self.home = Path(irds.util.home_path())

    def load(self, dataset_id: str) -> Any:
        try:
            return self.irds.load(dataset_id)
        except KeyError:
            raise ResourceError(
                f"ir_datasets {self.irds.__version__} has no dataset {dataset_id!r} "
                "(upgrade it: pip install -U ir_datasets)"
            ) from None

    def records(self, dataset_id: str, what: str) -> Iterator[Any]:
        """Yield ``what`` ("docs", "queries" or "qrels") of a dataset, reporting failures."""
        dataset = self.load(dataset_id)
        if not getattr(dataset, f"has_{what}")():
            raise ResourceError(f"ir_datasets' {dataset_id} has no {what}")
        iterator: Iterator[Any] | None = None
        while True:
            try:
                if iterator is None:
                    iterator = iter(getattr(dataset, f"{what}_iter")())
                record = next(iterator)
            except StopIteration:
                return
            except Exception as exc:
                raise self._error(dataset_id, what, exc) from exc
            yield record

    def _error(self, dataset_id: str, what: str, exc: Exception) -> ClirError:
        things = _WHAT[what]
        cache = " and ".join(str(self.home / name) for name in self.plan.cache_dirs)
        elsewhere = (
            "or point $IR_DATASETS_HOME (ir_datasets' cache, default ~/.ir_datasets) at a copy "
            "that has it"
        )
        for cause in _causes(exc):
            if isinstance(cause, _DownloadRefused):
                return ResourceError(
                    f"{dataset_id}: the {things} are not in ir_datasets' cache ({cache}) and "
                    f"the toolkit does not download at run time (ir_datasets would fetch "
                    f"{cause.url}): run 'clir collection build irds --dataset {self.plan.dataset} "
                    f"--download' (or ir_datasets itself) on a machine with a network and copy "
                    f"{cache} here, {elsewhere}"
                )
        for cause in _causes(exc):
            if isinstance(cause, FileNotFoundError):
                missing = cause.filename or (cause.args[0] if cause.args else "?")
                return ResourceError(
                    f"{dataset_id}: the {things} are not in ir_datasets' cache: {missing} is "
                    f"missing ({self.plan.how_to_get}); put it there, {elsewhere}"
                )
        problem = f"{type(exc).__name__}: {exc}".replace("\n", " ")
        for cause in _causes(exc):
            if type(cause).__module__.startswith(("requests.", "urllib3.")):
                return ResourceError(
                    f"{dataset_id}: ir_datasets could not download the {things} ({problem}): "
                    f"check the network, or fetch them on another machine and copy {cache} here"
                )
        return ClirError(
            f"{dataset_id}: ir_datasets failed to read the {things} in {cache} ({problem}); "
            "the cached files may be incomplete or corrupt: fetch them again"
        )


_WHAT = {"docs": "documents", "queries": "topics", "qrels": "judgements"}


# ---------------------------------------------------------------------------------------------
# Building the collection directory
# ---------------------------------------------------------------------------------------------


@dataclass
class IrdsSummary:
    """What :func:`build_irds_collection` wrote, for the report on stdout."""

    dataset: str
    out: Path
    query_lang: str
    doc_lang: str
    documents: int
    topics: dict[str, int] = field(default_factory=dict)
    topics_human: dict[str, int] = field(default_factory=dict)
    qrels: dict[str, int] = field(default_factory=dict)
    qrels_docs_not_in_corpus: int = 0
    qrels_without_topic: int = 0
    empty_documents: int = 0
    limit_docs: int | None = None
    ir_datasets_version: str = ""


@dataclass
class _Split:
    """The topics, human topics and judgements of one split, in the dataset's order."""

    topics: list[Topic] = field(default_factory=list)
    human: list[Topic] = field(default_factory=list)
    qrels: list[Qrel] = field(default_factory=list)  # the dataset's own grades


def build_irds_collection(
    dataset_id: str,
    out: Path,
    *,
    progress: bool = True,
    limit_docs: int | None = None,
    download: bool = False,
) -> IrdsSummary:
    """Write the collection directory of an ir_datasets CLIR dataset to ``out``.

    ``dataset_id`` is one of the names of :data:`FAMILIES` (``wikiclir/fr``, ``hc4/zh``,
    ``neuclir/1/fa/trec-2022``, ...). ``limit_docs`` keeps only the first N documents, for
    a quick trial (the judgements then name documents that are not in the corpus; the
    manifest counts them). With ``download=False`` (the default) a file missing from
    ir_datasets' cache is an error; ``download=True`` lets ir_datasets fetch it (needs a
    network). ``out`` is replaced only when the new directory is complete; an existing
    directory that is not a collection (no manifest.json) is refused, never overwritten.
    """
    plan = resolve(dataset_id)
    if limit_docs is not None and limit_docs < 1:
        raise UsageError(f"--limit-docs must be a positive number of documents, not {limit_docs}")
    out = Path(out)
    check_replaceable(out, MANIFEST, "a collection directory")
    irds = _import_ir_datasets()
    reader = _Reader(irds, plan)
    offline = contextlib.nullcontext() if download else _downloads_refused(irds)
    with offline, _quiet_ir_datasets():
        judged = _read_topics_and_qrels(reader, plan)
        splits = judged.splits
        with atomic_directory(out, marker=MANIFEST, what="a collection directory") as tmp:
            judged_docs = {qrel.docid for qrel in judged.qrels}
            documents, judged_found, empty = _write_corpus(
                reader, plan, tmp / "corpus.jsonl", judged_docs, progress, limit_docs
            )
            _write_splits(plan, tmp, splits)
            not_in_corpus = sum(1 for q in judged.qrels if q.docid not in judged_found)
            summary = IrdsSummary(
                dataset=plan.dataset,
                out=out,
                query_lang=QUERY_LANG,
                doc_lang=plan.doc_lang,
                documents=documents,
                topics={name: len(s.topics) for name, s in splits.items()},
                topics_human={name: len(s.human) for name, s in splits.items() if s.human},
                qrels={name: len(s.qrels) for name, s in splits.items()},
                qrels_docs_not_in_corpus=not_in_corpus,
                qrels_without_topic=judged.without_topic,
                empty_documents=empty,
                limit_docs=limit_docs,
                ir_datasets_version=str(irds.__version__),
            )
            _write_manifest(tmp, plan, splits, summary)
    return summary


@dataclass
class _Judged:
    """The splits that have topics (train, dev, test order) and all their judgements."""

    splits: dict[str, _Split]
    qrels: list[Qrel]  # every judgement kept, with the dataset's own grades
    without_topic: int  # judgements of topics that have no query in the dataset


def _read_topics_and_qrels(reader: _Reader, plan: IrdsPlan) -> _Judged:
    """Read every split's topics, then the judgements of those topics (small; in memory).

    Each qrels dataset is read once, even when two splits share it (hc4-filtered).
    """
    splits: dict[str, _Split] = {name: _Split() for name in SPLITS}
    split_of: dict[str, str] = {}  # qid -> split
    qids_of_source: dict[str, set[str]] = {}  # qrels_id -> the qids judged from it
    for source in plan.sources:
        for record in reader.records(source.queries_id, "queries"):
            qid = str(record.query_id)
            split = source.split or hashed_split(qid)
            if qid in split_of:
                raise ClirError(
                    f"{plan.dataset}: topic {qid} appears twice ({source.queries_id}, "
                    f"split {split_of[qid]} and {split})"
                )
            split_of[qid] = split
            query = _clean(getattr(record, plan.query_field))
            if not query:
                raise ClirError(f"{source.queries_id}: topic {qid} has an empty query")
            splits[split].topics.append(Topic(qid, query, lang=QUERY_LANG))
            human = _clean(getattr(record, plan.human_field)) if plan.human_field else ""
            if human:
                splits[split].human.append(Topic(qid, human, lang=plan.doc_lang))
            qids_of_source.setdefault(source.qrels_id, set()).add(qid)

    kept: list[Qrel] = []
    without_topic = 0
    seen: set[tuple[str, str]] = set()
    for qrels_id, qids in qids_of_source.items():
        for record in reader.records(qrels_id, "qrels"):
            qid, docid = str(record.query_id), str(record.doc_id)
            if qid not in qids:  # no topic has this id
                without_topic += 1
                continue
            if (qid, docid) in seen:
                raise ClirError(f"{qrels_id}: document {docid} is judged twice for topic {qid}")
            seen.add((qid, docid))
            grade = int(record.relevance)
            if grade not in plan.grade_map:
                known = ", ".join(str(g) for g in sorted(plan.grade_map))
                raise ClirError(
                    f"{qrels_id}: grade {grade} of document {docid} for topic {qid} is not one "
                    f"of the grades this family uses ({known})"
                )
            qrel = Qrel(qid, docid, grade)
            splits[split_of[qid]].qrels.append(qrel)
            kept.append(qrel)
    if not split_of:
        raise ClirError(f"{plan.dataset}: ir_datasets lists no topics")
    return _Judged({name: s for name, s in splits.items() if s.topics}, kept, without_topic)


def _clean(text: Any) -> str:
    return " ".join(str(text or "").split())


def _contents(record: Any) -> str:
    """A document's indexed text: its title and its text, on two lines."""
    title = str(getattr(record, "title", "") or "").strip()
    text = str(getattr(record, "text", "") or "")
    return f"{title}\n{text}" if title else text


def _write_corpus(
    reader: _Reader,
    plan: IrdsPlan,
    path: Path,
    judged: set[str],
    progress: bool,
    limit_docs: int | None,
) -> tuple[int, set[str], int]:
    """Stream the documents into ``corpus.jsonl``; return their number, the judged ones and
    the number left out because they have no text (nothing to index or rerank)."""
    from clir_toolkit.progress import progress_bar

    found: set[str] = set()
    empty = 0
    total = None
    with contextlib.suppress(Exception):  # a count is only a nicety for the progress bar
        total = reader.load(plan.docs_id).docs_count()
    if limit_docs is not None:
        total = min(total, limit_docs) if total else limit_docs

    def docs() -> Iterator[Doc]:
        records: Iterable[Any] = reader.records(plan.docs_id, "docs")
        bar = progress_bar(
            records,
            total=total,
            desc=f"{plan.dataset} documents",
            unit="doc",
            file=sys.stderr,
            show=progress,
            dynamic_ncols=True,
        )
        with bar:
            nonlocal empty
            for count, record in enumerate(bar, start=1):
                docid = str(record.doc_id)
                contents = _contents(record)
                if not contents.strip():
                    empty += 1
                    continue
                if docid in judged:
                    found.add(docid)
                yield Doc(docid, contents)
                if limit_docs is not None and count >= limit_docs:
                    break

    try:
        count = write_corpus_jsonl(path, docs())
    except FormatError as exc:  # a duplicate or malformed document id in the dataset
        raise ClirError(f"{plan.docs_id}: {exc.problem}") from None
    if count == 0:
        raise ClirError(f"{plan.docs_id}: ir_datasets lists no documents")
    return count, found, empty


def _write_splits(plan: IrdsPlan, directory: Path, splits: dict[str, _Split]) -> None:
    for name, split in splits.items():
        write_topics_tsv(directory / f"topics.{name}.tsv", split.topics)
        if split.human:
            write_topics_tsv(directory / f"topics-human.{name}.tsv", split.human)
        ours = [Qrel(q.qid, q.docid, plan.grade_map[q.relevance]) for q in split.qrels]
        write_qrels(directory / f"qrels.{name}.txt", ours)
        if plan.keeps_original_grades:
            write_qrels(directory / f"qrels-original.{name}.txt", split.qrels)


def _write_manifest(
    directory: Path, plan: IrdsPlan, splits: dict[str, _Split], summary: IrdsSummary
) -> None:
    """manifest.json: languages, sources, build parameters, counts, sha256 of every file.

    It holds no time stamp and no absolute path, so a rebuild is byte-identical.
    """
    ids = sorted(
        {plan.docs_id} | {s.queries_id for s in plan.sources} | {s.qrels_id for s in plan.sources}
    )
    grades: dict[str, dict[str, int]] = {}
    for name, split in splits.items():
        counts: dict[str, int] = {}
        for qrel in split.qrels:
            ours = str(plan.grade_map[qrel.relevance])
            counts[ours] = counts.get(ours, 0) + 1
        grades[name] = dict(sorted(counts.items(), reverse=True))
    grade_note = (
        "grades kept as the dataset gives them (2 = the article linked to the query's, "
        "1 = mutually linked)"
        if not plan.keeps_original_grades
        else "dataset grades 3 (very valuable) -> 2, 1 (somewhat valuable) -> 1, 0 -> 0, so "
        "that rel=2 means the most relevant as in the toolkit's measures; nDCG on qrels.* then "
        "uses gains 2/1, not the published 3/1: use qrels-original.* to compare with "
        "published figures"
    )
    files = {
        path.name: sha256_file(path)
        for path in sorted(directory.iterdir())
        if path.is_file() and path.name != "manifest.json"
    }
    manifest = {
        "name": plan.dataset.replace("/", "-"),
        "description": (
            f"{plan.dataset} from ir_datasets: English queries, {plan.doc_lang} documents"
            + (" (a sample: the first documents only)" if summary.limit_docs else "")
        ),
        "query_lang": QUERY_LANG,
        "doc_lang": plan.doc_lang,
        "splits": list(splits),
        "sources": [
            {
                "name": "ir_datasets",
                "version": summary.ir_datasets_version,
                "datasets": ids,
                "url": "https://ir-datasets.com",
                "citation": (
                    "Sean MacAvaney, Andrew Yates, Sergey Feldman, Doug Downey, Arman Cohan, "
                    "Nazli Goharian. Simplified Data Wrangling with ir_datasets. SIGIR 2021"
                ),
            },
            {
                "name": plan.family,
                "dataset": plan.dataset,
                "url": plan.url,
                "citation": plan.citation,
                "licence": plan.licence,
            },
        ],
        "build": {
            "builder": "clir_toolkit.collection.irds",
            "limit_docs": summary.limit_docs,
            "contents": "title + newline + text",
            "query_field": plan.query_field,
            "human_query_field": plan.human_field,
            "splits": plan.split_rule,
            "grade_map": {str(k): v for k, v in sorted(plan.grade_map.items(), reverse=True)},
            "grades": grade_note,
        },
        "counts": {
            "documents": summary.documents,
            "topics": summary.topics,
            "topics_human": summary.topics_human,
            "qrels": summary.qrels,
            "qrels_by_grade": grades,
            "qrels_docs_not_in_corpus": summary.qrels_docs_not_in_corpus,
            "qrels_without_topic": summary.qrels_without_topic,
            "empty_documents": summary.empty_documents,
        },
        "files": files,
    }
    with open(directory / "manifest.json", "w", encoding="utf-8", newline="\n") as handle:
        json.dump(manifest, handle, ensure_ascii=False, indent=2)
        handle.write("\n")


def format_summary(summary: IrdsSummary) -> str:
    """A few lines for stdout: what was written where, with the counts per split."""
    lines = [
        f"{summary.dataset} ({summary.query_lang}→{summary.doc_lang}) → {summary.out}",
        f"  documents: {summary.documents:,}"
        + (f" (limited to the first {summary.limit_docs:,})" if summary.limit_docs else ""),
    ]
    for split, topics in summary.topics.items():
        human = summary.topics_human.get(split)
        human_note = f", {human:,} human-translated" if human else ""
        lines.append(
            f"  {split}: {topics:,} topics{human_note}, {summary.qrels.get(split, 0):,} judgements"
        )
    if summary.qrels_docs_not_in_corpus:
        lines.append(
            f"  note: {summary.qrels_docs_not_in_corpus:,} judgements name documents that are "
            "not in the corpus"
        )
    if summary.empty_documents:
        lines.append(
            f"  note: {summary.empty_documents:,} documents without text were left out"
        )
    if summary.qrels_without_topic:
        lines.append(
            f"  note: {summary.qrels_without_topic:,} judgements of topics that have no query "
            "were left out"
        )
    lines.append(f"  read with ir_datasets {summary.ir_datasets_version}")
    return "\n".join(lines)
