"""Several collections' train and dev splits made one collection, to train one model on all.

The toolkit's trainers read one collection (its corpus, topics, qrels and first-stage run);
a model meant for collections it never saw is trained on several at once, in several
languages (K-NRM on USE-m3's subword table reads every language with the same pieces). The
mixture is a collection directory of its own, written from its parts:

- every document, query and judgement under the id ``<collection>:<id>``, so that ids of
  two collections never meet;
- the corpora interleaved one document of each in turn, so that the first documents of the
  mixture, where K-NRM's document reading is chosen from
  (:mod:`clir_toolkit.rerank.word.document_reading`), hold each collection equally;
- the ``train`` split of every part and the ``dev`` split of every part that has one: the
  epoch kept is the best on the mixed dev queries;
- ``doc_lang`` ``mul`` (ISO 639-2: several languages).

It is rewritten only when a part changed (its sidecar, :mod:`clir_toolkit.freshness`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.formats import Doc, read_qrels, read_run, read_topics, write_qrels, write_run
from clir_toolkit.formats.records import Qrel, RunRow, Topic

SEPARATOR = ":"
LANGUAGE = "mul"
SPLITS = ("train", "dev")


@dataclass(frozen=True)
class Part:
    """One collection of a mixture, with its first-stage run of each split."""

    collection: Collection
    runs: dict[str, Path]
    """split → run; a split without a run is left out of the mixture."""

    @property
    def name(self) -> str:
        return str(self.collection.manifest.get("name") or self.collection.root.name)


def mixed_id(part: str, value: str) -> str:
    return f"{part}{SEPARATOR}{value}"


def write_mixture(directory: Path, parts: Sequence[Part]) -> tuple[Collection, dict[str, Path]]:
    """The mixture of ``parts`` in ``directory`` (made unless fresh), and its run of each
    split."""
    from clir_toolkit.files import atomic_write, sha256_file
    from clir_toolkit.formats import write_corpus_jsonl, write_topics_tsv
    from clir_toolkit.freshness import digest, is_fresh, mark_fresh

    directory.mkdir(parents=True, exist_ok=True)
    manifest = directory / "manifest.json"
    splits = [split for split in SPLITS if any(split in part.runs for part in parts)]
    runs = {split: directory / f"run.{split}.trec" for split in splits}
    key = digest(
        [
            [part.name, part.collection.fingerprint(),
             {split: sha256_file(run) for split, run in sorted(part.runs.items())}]
            for part in parts
        ]
    )  # fmt: skip
    if is_fresh(manifest, key, ("clir_toolkit.pipeline.mixture",)):
        return open_collection(directory), runs
    write_corpus_jsonl(directory / "corpus.jsonl", _interleaved(parts))
    for split in splits:
        members = [part for part in parts if split in part.runs]
        collection = Collection(directory, directory / "corpus.jsonl")
        write_topics_tsv(collection.split_file("topics", split), _topics(members, split))
        write_qrels(collection.split_file("qrels", split), _qrels(members, split))
        write_run(runs[split], _run_rows(members, split))
    with atomic_write(manifest, own=True) as handle:
        json.dump(
            {
                "name": "mixture",
                "description": "the train and dev splits of "
                + ", ".join(part.name for part in parts),
                "query_lang": "en",
                "doc_lang": LANGUAGE,
                "splits": splits,
                "parts": [part.name for part in parts],
            },
            handle,
            indent=1,
        )
    mark_fresh(manifest, key, code=("clir_toolkit.pipeline.mixture",))
    return open_collection(directory), runs


def _interleaved(parts: Sequence[Part]) -> Iterator[Doc]:
    """Every part's documents, one of each in turn, under their mixed ids."""
    from clir_toolkit.formats import iter_corpus

    def renamed(part: Part) -> Iterator[Doc]:
        for doc in iter_corpus(part.collection.corpus):
            yield Doc(mixed_id(part.name, doc.id), doc.contents, doc.title)

    for turn in itertools.zip_longest(*(renamed(part) for part in parts)):
        yield from (doc for doc in turn if doc is not None)


def _topics(parts: Iterable[Part], split: str) -> Iterator[Topic]:
    for part in parts:
        for topic in read_topics(part.collection.split_file("topics", split)):
            yield Topic(mixed_id(part.name, topic.qid), topic.query, topic.description,
                        topic.narrative, topic.lang)  # fmt: skip


def _qrels(parts: Iterable[Part], split: str) -> Iterator[Qrel]:
    for part in parts:
        for qrel in read_qrels(part.collection.split_file("qrels", split)):
            yield Qrel(mixed_id(part.name, qrel.qid), mixed_id(part.name, qrel.docid),
                       qrel.relevance, qrel.iteration)  # fmt: skip


def _run_rows(parts: Iterable[Part], split: str) -> Iterator[RunRow]:
    for part in parts:
        for row in read_run(part.runs[split]):
            yield RunRow(mixed_id(part.name, row.qid), mixed_id(part.name, row.docid), row.rank,
                         row.score, row.tag)  # fmt: skip
