"""``clir demo``: the whole first stage on one collection, end to end.

index → BM25 run of the English queries, untranslated (the CLIR lower bound) → BM25 run of
the human-translated queries (the monolingual reference) → evaluation table with paired
significance tests. On the hand-made ``tests/fixtures/tiny-fr`` collection it only shows the
plumbing; the numbers mean nothing there.
"""

from __future__ import annotations

from pathlib import Path

from clir_toolkit.collection import open_collection
from clir_toolkit.errors import ClirError
from clir_toolkit.evaluate import evaluate_runs, format_result
from clir_toolkit.formats import read_topics
from clir_toolkit.index import build_index
from clir_toolkit.search import plain_queries, search_to_run


def run_demo(collection_dir: Path, workdir: Path, split: str = "dev", quiet: bool = False) -> str:
    collection = open_collection(collection_dir)
    name = collection.manifest.get("name") or collection.root.name
    topics = collection.split_file("topics", split)
    human = collection.split_file("topics-human", split)
    qrels = collection.split_file("qrels", split)
    for needed in (topics, qrels):
        if not needed.is_file():
            raise ClirError(
                f"{needed}: missing; the demo needs topics and qrels of split '{split}'"
            )
    index = workdir / "indexes" / name
    build_index(collection.root, index, verbose=not quiet)
    runs = [workdir / "runs" / f"{name}.{split}.bm25-untranslated.trec"]
    search_to_run(
        index,
        plain_queries(read_topics(topics)),
        runs[0],
        tag="bm25-untranslated",
        progress=not quiet,
    )
    if human.is_file():
        runs.append(workdir / "runs" / f"{name}.{split}.bm25-human.trec")
        search_to_run(
            index, plain_queries(read_topics(human)), runs[1], tag="bm25-human", progress=not quiet
        )
    result = evaluate_runs(qrels, runs, baseline=str(runs[0]))
    header = (
        f"{name} ({collection.query_lang}→{collection.doc_lang}), split {split}: "
        f"BM25 untranslated queries vs human translations\n"
    )
    return header + format_result(result, "table")
