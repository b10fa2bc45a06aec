"""The table of ``clir``'s commands: each name, the module that registers it, and its line
in ``clir --help``, in the order ``clir --help`` lists them.

The one place a command is named. The parser of ``clir`` is built from it: a command's module
(and what its options need: the search, translation and reranking declarations) is imported
only when that command is run or its own help asked for, so that ``clir --help`` lists every
command without importing any of them (:func:`clir_toolkit.cli.build_parser`).
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    """A command of ``clir``: the module under ``clir_toolkit.cli`` that registers it, and
    its one-line help."""

    module: str
    help: str


COMMANDS = {
    "collection": Command(
        "collection", "build test collections (Debian man pages and package descriptions, "
        "ir_datasets)"
    ),
    "index": Command("index", "build a Lucene index from a collection"),
    "encode": Command(
        "encode", "encode a collection's documents into a vectors file, for index --vectors"
    ),
    "search": Command("search", "BM25, dense or hybrid batch search into a TREC run"),
    "translate": Command("search", "translate topics, for inspection"),
    "fuse": Command(
        "fuse", "fuse several TREC runs into one (RRF, interpolation, CombSUM, CombMNZ)"
    ),
    "eval": Command("evaluate", "evaluate runs side by side"),
    "compare": Command(
        "compare", "one run against a baseline, query by query (wins, losses, a chart)"
    ),
    "resource": Command(
        "resource", "resources: dictionary coverage, parallel text, WordNet, the Java class archive"
    ),
    "embed": Command("embed", "cross-lingual word embeddings, trained offline"),
    "rerank": Command(
        "rerank", "neural reranking: train K-NRM or the dual encoder, rescore runs"
    ),
    "pipeline": Command(
        "pipeline", "the best pipeline: train it on several collections, run it on your own"
    ),
    "run": Command("run", "run TOML recipes and regenerate RESULTS.md"),
    "figures": Command(
        "run", "refresh (or --check) the figures that markdown prose quotes from results tables"
    ),
    "bench": Command("bench", "benchmarks (speed)"),
    "assignment": Command(
        "assignment", "course assignments: re-implement a piece of the toolkit, graded against it"
    ),
    "completion": Command(
        "completion", "print the shell completion script of clir (bash, zsh or tcsh)"
    ),
    "demo": Command("demo", "the end-to-end demonstration"),
}  # fmt: skip


def command_help(name: str) -> str:
    """The one-line help of command ``name`` (for its module's ``add_parser``)."""
    return COMMANDS[name].help
