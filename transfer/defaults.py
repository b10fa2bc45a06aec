"""The defaults a new user gets, chosen by transfer: written to ``transfer/DEFAULTS.md``.

BM25's k1 and b: which pair should a user who gives none get?

For every collection of the transfer matrix (the man pages and DDTP's hard variant, French
and German), BM25 of the dictionary translation (what a bare ``clir search --translate dict``
searches: FreeDict, Pirkola's structure, the English word kept at 0.5) is measured at each
(k1, b) of a small grid, on the dev and test splits. Each collection's pair is then chosen
*without it*: the best mean dev nDCG@10 over the other three collections, the way a default
meets a user's collection it was never tuned on; its test score is reported beside the test
score of pyserini's (0.9, 0.4) and of the pair best on the collection's own dev split.

K-NRM's interpolation weight λ with its first stage: the runs of the transfer recipes (a
model trained on one collection reranking the zero-shot hybrid of another, at each λ) give
each λ's dev nDCG@10 on every transfer cell; the default is the λ of the best mean over the
cells, none of which is the model's own collection. Its test scores are reported beside the
hybrid it reranks and beside the λ chosen before (0.8, on the French man pages' own dev).

Run from the repository root, after ``clir run transfer/ddtp/*.toml`` and ``clir run
transfer/manpages/*.toml`` made the collections, indexes and runs::

    python transfer/defaults.py        # writes transfer/DEFAULTS.md

Two cores, about 4 minutes (the BM25 grid: four collections, nine pairs, two splits).
"""

from __future__ import annotations

import datetime
import itertools
import platform
import sys
import time
from pathlib import Path

import clir_toolkit as ct
from clir_toolkit.rerank.training import mean_measure
from clir_toolkit.search.runs import search_rows

K1 = (0.9, 1.2, 1.5)
B = (0.4, 0.6, 0.75)
PYSERINI = (0.9, 0.4)
MEASURE = "nDCG@10"
COLLECTIONS = ("manpages-en-fr", "manpages-en-de", "ddtp-en-fr-hard", "ddtp-en-de-hard")
SPLITS = ("dev", "test")
OUTPUT = Path(__file__).with_name("DEFAULTS.md")
LAMBDAS = ("0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "1")
"""The λ of the transfer recipes' sweep, as their run names spell them."""
PREVIOUS_LAMBDA = "0.8"
TRANSFER_CELLS = (
    ("manpages-en-fr", "knrm-hybrid-from-de", "de man pages"),
    ("manpages-en-fr", "knrm-hybrid-from-ddtp", "fr DDTP (hard)"),
    ("manpages-en-de", "knrm-hybrid-from-fr", "fr man pages"),
    ("manpages-en-de", "knrm-hybrid-from-ddtp", "de DDTP (hard)"),
    ("ddtp-en-fr-hard", "knrm-hybrid-from-manpages", "fr man pages"),
    ("ddtp-en-de-hard", "knrm-hybrid-from-manpages", "de man pages"),
)
"""(tested on, the recipe whose model was trained elsewhere, trained on)."""


def measure_grid() -> dict[tuple[str, str, float, float], float]:
    """nDCG@10 of every collection, split and (k1, b) of the grid."""
    scores = {}
    for name in COLLECTIONS:
        collection = Path("data") / name
        language = ct.open_collection(collection).doc_lang
        for split in SPLITS:
            topics = ct.read_topics(collection / f"topics.{split}.tsv")
            qrels = ct.read_qrels(collection / f"qrels.{split}.txt")
            options = ct.TranslationOptions(translate="dict")
            queries = ct.build_queries(topics, options, language)
            for k1, b in itertools.product(K1, B):
                rows, _ = search_rows(Path("indexes") / name, queries, k1=k1, b=b,
                                      structure="syn", hits=100, threads=None, progress=False)
                scores[name, split, k1, b] = mean_measure(qrels, rows, MEASURE)
                print(f"{name} {split} k1 {k1} b {b}: {scores[name, split, k1, b]:.4f}",
                      file=sys.stderr)
    return scores


def best_pair(scores: dict, collections: list[str]) -> tuple[float, float]:
    """The (k1, b) of the highest mean dev score over ``collections``."""
    def mean_dev(pair: tuple[float, float]) -> float:
        return sum(scores[c, "dev", *pair] for c in collections) / len(collections)

    return max(itertools.product(K1, B), key=mean_dev)


def run_score(collection: str, split: str, name: str) -> float:
    """nDCG@10 of a recipe's run (``runs/<collection>/<split>/<name>.trec``)."""
    qrels = ct.read_qrels(Path("data") / collection / f"qrels.{split}.txt")
    return mean_measure(qrels, ct.read_run(Path("runs") / collection / split / f"{name}.trec"),
                        MEASURE)


def interpolation_report() -> list[str]:
    """The λ section of DEFAULTS.md: each λ's dev score on every transfer cell, the mean,
    and the chosen λ's test scores."""
    dev = {(c, r, lam): run_score(c, "dev", f"{r}-{lam}") for c, r, _ in TRANSFER_CELLS
           for lam in LAMBDAS}  # fmt: skip
    mean = {lam: sum(dev[c, r, lam] for c, r, _ in TRANSFER_CELLS) / len(TRANSFER_CELLS)
            for lam in LAMBDAS}  # fmt: skip
    chosen = max(LAMBDAS, key=lambda lam: mean[lam])
    lines = [
        "## K-NRM's λ over its first stage",
        "",
        f"**The default for a model reranking a collection it was not trained on: λ {chosen}**, "
        f"the best mean dev {MEASURE} over the {len(TRANSFER_CELLS)} transfer cells (a model "
        "trained on one collection reranking the zero-shot hybrid of another; "
        "`transfer/*/RESULTS.md` tests each row against the hybrid).",
        "",
        "| tested on | trained on | " + " | ".join(f"λ {lam} dev" for lam in LAMBDAS) + " |",
        "|---|---|" + "---|" * len(LAMBDAS),
    ]
    for collection, recipe, trained in TRANSFER_CELLS:
        cells = [f"{dev[collection, recipe, lam]:.4f}" for lam in LAMBDAS]
        lines.append(f"| {collection} | {trained} | " + " | ".join(cells) + " |")
    lines.append("| **mean** | | " + " | ".join(f"**{mean[lam]:.4f}**" for lam in LAMBDAS) + " |")
    lines += [
        "",
        f"Test {MEASURE} at the chosen λ, beside the hybrid it reranks and the λ chosen before "
        f"({PREVIOUS_LAMBDA}, on the French man pages' own dev split):",
        "",
        f"| tested on | trained on | hybrid | λ {PREVIOUS_LAMBDA} | λ {chosen} |",
        "|---|---|---|---|---|",
    ]
    for collection, recipe, trained in TRANSFER_CELLS:
        lines.append(
            f"| {collection} | {trained} | {run_score(collection, 'test', 'hybrid'):.4f} "
            f"| {run_score(collection, 'test', f'{recipe}-{PREVIOUS_LAMBDA}'):.4f} "
            f"| {run_score(collection, 'test', f'{recipe}-{chosen}'):.4f} |"
        )
    return [*lines, ""]


def report(scores: dict, seconds: float) -> str:
    """The markdown of DEFAULTS.md: BM25's pair for a new collection and its grid, then λ."""
    chosen = best_pair(scores, list(COLLECTIONS))
    lines = [
        "# The defaults, chosen by transfer",
        "",
        f"Generated by `python transfer/defaults.py` on {datetime.date.today()} "
        f"({seconds / 60:.1f} min, {platform.machine()}) from the collections, indexes and "
        "runs of `clir run transfer/*/*.toml`.",
        "",
        *interpolation_report(),
        "## BM25's k1 and b",
        "",
        f"{MEASURE}, BM25 of the dictionary translation (`clir search --translate dict`), "
        "top 100.",
        "",
        f"**The default for a collection never seen: k1 {chosen[0]}, b {chosen[1]}**, the best "
        "mean dev score over all four collections. Each row below chooses a collection's pair "
        "without it (the best mean dev score over the other three) and reports its test score "
        "beside pyserini's (0.9, 0.4) and the pair best on the collection's own dev split "
        "(an in-domain ceiling).",
        "",
        "| collection | chosen without it | its test | pyserini (0.9, 0.4) test "
        "| best on its own dev | its test |",
        "|---|---|---|---|---|---|",
    ]
    for name in COLLECTIONS:
        others = [c for c in COLLECTIONS if c != name]
        transfer = best_pair(scores, others)
        own = best_pair(scores, [name])
        lines.append(
            f"| {name} | {transfer[0]}, {transfer[1]} | {scores[name, 'test', *transfer]:.4f} "
            f"| {scores[name, 'test', *PYSERINI]:.4f} | {own[0]}, {own[1]} "
            f"| {scores[name, 'test', *own]:.4f} |"
        )
    lines += ["", f"## The grid ({MEASURE}, dev / test)", "",
              "| k1, b | " + " | ".join(COLLECTIONS) + " |",
              "|---|" + "---|" * len(COLLECTIONS)]
    for k1, b in itertools.product(K1, B):
        cells = [f"{scores[c, 'dev', k1, b]:.4f} / {scores[c, 'test', k1, b]:.4f}"
                 for c in COLLECTIONS]
        lines.append(f"| {k1}, {b} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    started = time.perf_counter()
    scores = measure_grid()
    OUTPUT.write_text(report(scores, time.perf_counter() - started), encoding="utf-8")
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
