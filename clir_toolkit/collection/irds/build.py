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

The families (``wikiclir/LANG``, ``hc4/LANG[/split]``, ``neuclir/1/LANG[/subset]``), their
papers and how their topics fall into splits are described in
:mod:`clir_toolkit.collection.irds.datasets`, which resolves a name to a build plan;
:mod:`clir_toolkit.collection.irds.reader` reads the plan's datasets through ir_datasets,
offline. This module writes the directory.

**Grades.** HC4 and NeuCLIR judge 0 (not valuable), 1 (somewhat valuable) and 3 (very
valuable). The toolkit's measures read grade 2 as "the most relevant" (``P(rel=2)@1``,
``RR(rel=2)``), so ``qrels.{split}.txt`` maps 3 → 2 and keeps 1 and 0. The mapping changes
nDCG's gains (2 instead of 3), so nDCG on these qrels is not the published HC4/NeuCLIR
figure: evaluate on ``qrels-original.{split}.txt`` to compare with published numbers.

Corpora can be large (NeuCLIR zh: 3.2 million documents): documents stream from
ir_datasets' cache straight into ``corpus.jsonl``; only their ids are held in memory (to
catch duplicates). The whole directory is written under a temporary name and renamed into
place when complete.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clir_toolkit.collection import COLLECTION_KIND, MANIFEST, foreign_entry
from clir_toolkit.collection.builder import write_manifest
from clir_toolkit.collection.irds.datasets import SPLITS, IrdsPlan, hashed_split, resolve
from clir_toolkit.collection.irds.reader import (
    IrdsReader,
    downloads_refused,
    import_ir_datasets,
    quiet_ir_datasets,
)
from clir_toolkit.errors import ClirError, FormatError, UsageError
from clir_toolkit.files import atomic_directory, check_only_ours, check_replaceable
from clir_toolkit.formats import Doc, Qrel, Topic, write_corpus_jsonl, write_qrels, write_topics_tsv

__all__ = ["IrdsSummary", "build_irds_collection", "format_summary"]

QUERY_LANG = "en"


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
    check_replaceable(out, MANIFEST, COLLECTION_KIND)
    check_only_ours(out, MANIFEST, COLLECTION_KIND, foreign_entry)
    irds = import_ir_datasets()
    reader = IrdsReader(irds, plan)
    offline = contextlib.nullcontext() if download else downloads_refused(irds)
    with offline, quiet_ir_datasets():
        judged = _read_topics_and_qrels(reader, plan)
        splits = judged.splits
        with atomic_directory(
            out, marker=MANIFEST, what=COLLECTION_KIND, foreign=foreign_entry
        ) as tmp:
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


def _read_topics_and_qrels(reader: IrdsReader, plan: IrdsPlan) -> _Judged:
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
    reader: IrdsReader,
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
    """manifest.json: languages, sources, build parameters, counts, sha256 of every file
    (written as every family writes it, :func:`~clir_toolkit.collection.builder.write_manifest`).

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
    fields = {
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
    }
    write_manifest(directory, fields)


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
        lines.append(f"  note: {summary.empty_documents:,} documents without text were left out")
    if summary.qrels_without_topic:
        lines.append(
            f"  note: {summary.qrels_without_topic:,} judgements of topics that have no query "
            "were left out"
        )
    lines.append(f"  read with ir_datasets {summary.ir_datasets_version}")
    return "\n".join(lines)
