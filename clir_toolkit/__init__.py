"""clir_toolkit: cross-language information retrieval experiments from the shell.

Stage 1 is BM25 over Lucene (through pyserini/Anserini) with query translation and
expansion; stage 2 is a neural reranker; everything in between is a standard TREC file.
See README.md for the tour.

The same steps from Python (a notebook, a course's script), each the function the command
line calls::

    import clir_toolkit as ct

    ct.build_index("data/manpages-en-fr", "indexes/manpages-en-fr")
    topics = ct.read_topics("data/manpages-en-fr/topics.dev.tsv")
    queries = ct.build_queries(topics, ct.TranslationOptions(translate="dict"), "fr")
    ct.search_to_run("indexes/manpages-en-fr", queries, "runs/dict.trec", structure="syn")
    ct.add_dense_vectors("indexes/manpages-en-fr", "use-m3")    # clir index --dense
    ct.hybrid_search_to_run("indexes/manpages-en-fr", queries, topics, "runs/hybrid.trec",
                            structure="syn")                    # clir search --hybrid
    result = ct.evaluate_runs("data/manpages-en-fr/qrels.dev.txt", ["runs/dict.trec"])
    result.to_dataframe()          # one row per run, one column per measure

Importing the package imports none of Java, torch or pandas: each name is loaded the
first time it is used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    # collections and files
    "open_collection": "clir_toolkit.collection",
    "read_topics": "clir_toolkit.formats",
    "read_qrels": "clir_toolkit.formats",
    "read_run": "clir_toolkit.formats",
    "write_run": "clir_toolkit.formats",
    "write_topics_tsv": "clir_toolkit.formats",
    "write_qrels": "clir_toolkit.formats",
    "Topic": "clir_toolkit.formats",
    "Qrel": "clir_toolkit.formats",
    "RunRow": "clir_toolkit.formats",
    # stage 1
    "build_index": "clir_toolkit.index",
    "TranslationOptions": "clir_toolkit.translate.pipeline",
    "build_queries": "clir_toolkit.translate.pipeline",
    "search_to_run": "clir_toolkit.search",
    "StructuredQuery": "clir_toolkit.query",
    "Searcher": "clir_toolkit.search",
    "add_dense_vectors": "clir_toolkit.index",
    "dense_search_to_run": "clir_toolkit.search.dense",
    "hybrid_search_to_run": "clir_toolkit.search.hybrid",
    "DenseSearcher": "clir_toolkit.search.dense",
    "fuse": "clir_toolkit.search.fusion",
    "fuse_runs": "clir_toolkit.search.fusion",
    # stage 2
    "TrainConfig": "clir_toolkit.rerank.word.train_config",
    "train_reranker": "clir_toolkit.rerank.word.train",
    "TunedConfig": "clir_toolkit.rerank.sentence.tuned_config",
    "train_tuned": "clir_toolkit.rerank.sentence.tuned",
    "score_run": "clir_toolkit.rerank.score",
    # evaluation and experiments
    "evaluate_runs": "clir_toolkit.evaluate",
    "compare_runs": "clir_toolkit.evaluate",
    "run_recipes": "clir_toolkit.experiments.runner",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    """Load an exported name from its module the first time it is asked for."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clir_toolkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
