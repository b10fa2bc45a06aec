"""The dense encoder of ``clir pipeline``'s first stage and its hybrid weight, chosen by
transfer: written to ``transfer/ENCODER.md``.

The hybrid first stage fuses BM25 of the dictionary translation with one encoder's dense run
(``w·dense + (1 − w)·BM25``, min-max per query). Which encoder, at which w, should a
collection the toolkit never saw get? Nothing here is trained: both encoders are
pretrained, so every collection is a transfer cell.

For every collection of the transfer matrix (the man pages and DDTP's hard variant, French
and German), on the dev and test splits:

- BM25 of the dictionary translation at the defaults (what ``clir search --translate dict``
  does), 1,000 deep;
- the dense run of ``use-m3`` and of ``e5-small`` (multilingual-e5-small), 1,000 deep;
- the use-m3 hybrid at w 0.5 (what a bare ``clir search --hybrid`` gives over use-m3's
  vectors), the e5-small hybrid at each w of :data:`WEIGHTS`, and the three runs fused
  (``clir search --hybrid --encoder e5-small,use-m3`` over an index of both encoders'
  vectors), the two dense runs sharing w equally, at each w of :data:`THREE_RUN_WEIGHTS`.

Each collection's first stage is chosen *without it*: the best mean dev nDCG@10 of the
other three; its test score is reported. The default is the best mean dev nDCG@10 over all
four.

Run from the repository root with a workspace whose ``indexes/<collection>`` hold
e5-small's vectors and ``indexes-use-m3/<collection>`` use-m3's (``clir index --dense
NAME``; e5-small encodes about 2.6 man pages or 15 package descriptions a second on 2
cores)::

    python transfer/encoder.py WORKDIR        # writes transfer/ENCODER.md
"""

from __future__ import annotations

import datetime
import platform
import sys
import time
from functools import partial
from pathlib import Path

import clir_toolkit as ct
from clir_toolkit.formats import RunRow
from clir_toolkit.index import read_index_info
from clir_toolkit.pipeline.train import first_stage_defaults
from clir_toolkit.rerank.training import mean_measure
from clir_toolkit.search import DEFAULT_B, DEFAULT_K1
from clir_toolkit.search.dense import dense_rows
from clir_toolkit.search.fusion import fuse
from clir_toolkit.search.hybrid import HYBRID_DEPTH
from clir_toolkit.search.runs import search_rows
from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

COLLECTIONS = ("manpages-en-fr", "manpages-en-de", "ddtp-en-fr-hard", "ddtp-en-de-hard")
SPLITS = ("dev", "test")
WEIGHTS = (0.4, 0.5, 0.6, 0.7)
"""w of the e5-small hybrid, the dense run's weight."""
THREE_RUN_WEIGHTS = (0.6, 2 / 3, 0.75)
"""w of the three-run hybrid, the two dense runs' weight together (2/3: every run the same)."""
MEASURES = ("nDCG@10", "R@100")
OUTPUT = Path(__file__).with_name("ENCODER.md")


def runs_of(workdir: Path, name: str, split: str) -> dict[str, list[RunRow]]:
    """The three runs one split fuses: BM25 of the dictionary translation, and each
    encoder's dense run."""
    collection = ct.open_collection(workdir / "data" / name)
    topics = ct.read_topics(collection.split_file("topics", split))
    e5_index, m3_index = workdir / "indexes" / name, workdir / "indexes-use-m3" / name
    dictionary = TranslationOptions(translate="dict")
    queries = build_queries(topics, dictionary, read_index_info(e5_index).language)
    bm25, _ = search_rows(
        e5_index, queries, hits=HYBRID_DEPTH, k1=DEFAULT_K1, b=DEFAULT_B,
        structure=dictionary.structure(), progress=False, threads=None,
    )  # fmt: skip
    e5, _ = dense_rows(e5_index, topics, hits=HYBRID_DEPTH, encoder="e5-small", progress=False)
    m3, _ = dense_rows(m3_index, topics, hits=HYBRID_DEPTH, encoder="use-m3", progress=False)
    return {"bm25": bm25, "e5-small": e5, "use-m3": m3}


def fused(runs: dict[str, list[RunRow]], weights: dict[str, float]) -> list[RunRow]:
    """``runs`` fused as ``clir search --hybrid`` fuses two: min-max per query, weighted."""
    names = list(weights)
    return fuse([runs[name] for name in names], "interpolate", weights=[weights[n] for n in names],
                normalisation="minmax", depth=HYBRID_DEPTH, tag="fused")  # fmt: skip


def systems() -> dict[str, dict[str, float]]:
    """Every first stage measured: its label and the weights of the runs it fuses."""
    chosen = {"use-m3 hybrid, w 0.5": {"bm25": 0.5, "use-m3": 0.5}}
    for w in WEIGHTS:
        chosen[f"e5-small hybrid, w {w:g}"] = {"bm25": 1 - w, "e5-small": w}
    for w in THREE_RUN_WEIGHTS:
        chosen[f"BM25 + e5-small + use-m3, w {w:.3g}"] = {
            "bm25": 1 - w,
            "e5-small": w / 2,
            "use-m3": w / 2,
        }
    return chosen


def measure(workdir: Path) -> dict[tuple[str, str, str], dict[str, float]]:
    """(collection, split, system) → each measure's mean."""
    scores = {}
    for name in COLLECTIONS:
        qrels_dir = workdir / "data" / name
        for split in SPLITS:
            runs = runs_of(workdir, name, split)
            qrels = ct.read_qrels(qrels_dir / f"qrels.{split}.txt")
            alone = {"e5-small alone": {"e5-small": 1.0}, "use-m3 alone": {"use-m3": 1.0}}
            for label, weights in {**alone, **systems()}.items():
                rows = fused(runs, weights)
                scores[name, split, label] = {m: mean_measure(qrels, rows, m) for m in MEASURES}
    return scores


def write_table(scores: dict[tuple[str, str, str], dict[str, float]], seconds: float) -> str:
    today = datetime.date.today().isoformat()
    labels = sorted({label for _, _, label in scores}, key=list(scores_order()).index)
    candidates = list(systems())  # the hybrid first stages the toolkit runs

    def dev_mean(label: str, names: tuple[str, ...]) -> float:
        return sum(scores[name, "dev", label]["nDCG@10"] for name in names) / len(names)

    default = max(candidates, key=partial(dev_mean, names=COLLECTIONS))
    encoder, weight = stage_of(default)
    today_stage = first_stage_defaults()
    lines = [
        "# The first stage's encoders and weight, chosen by transfer",
        "",
        f"Generated by `python transfer/encoder.py WORKDIR` on {today} ({seconds / 60:.0f} min, "
        f"{platform.machine()}, {ct.__version__}). Nothing is trained: both encoders are "
        "pretrained. BM25 of the dictionary translation (k1 1.5, b 0.75) fused with the dense "
        "runs, min-max per query, `w·dense + (1 − w)·BM25` (two dense runs share w equally), "
        "1,000 deep.",
        "",
        f"**The best: {default}** (`--encoder {encoder}`, w {weight:.4g}), the best mean dev "
        f"nDCG@10 over the four collections. `clir pipeline train`'s first stage today: "
        f"`--encoder {today_stage.encoder}`, w {today_stage.hybrid_weight:.4g}.",
        "",
        "## Each collection's first stage, chosen on the other three",
        "",
        "| collection | first stage chosen without it | its test | use-m3 hybrid (w 0.5) test |",
        "|---|---|---|---|",
    ]
    for name in COLLECTIONS:
        others = tuple(other for other in COLLECTIONS if other != name)
        label = max(candidates, key=partial(dev_mean, names=others))
        lines.append(
            f"| {name} | {label} | {scores[name, 'test', label]['nDCG@10']:.4f} "
            f"| {scores[name, 'test', 'use-m3 hybrid, w 0.5']['nDCG@10']:.4f} |"
        )
    lines += ["", "## Every first stage (nDCG@10 dev / test; R@100 test)", "",
              "| first stage | " + " | ".join(COLLECTIONS) + " | mean dev |",
              "|---|" + "---|" * (len(COLLECTIONS) + 1)]  # fmt: skip
    for label in labels:
        cells = [
            f"{scores[name, 'dev', label]['nDCG@10']:.4f} / "
            f"{scores[name, 'test', label]['nDCG@10']:.4f}; "
            f"{scores[name, 'test', label]['R@100']:.3f}"
            for name in COLLECTIONS
        ]
        mean = dev_mean(label, COLLECTIONS)
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {mean:.4f} |")
    lines += [""]
    return "\n".join(lines)


def stage_of(label: str) -> tuple[str, float]:
    """The ``--encoder`` and w of the first stage ``label`` (:func:`systems`)."""
    weights = systems()[label]
    return ",".join(name for name in weights if name != "bm25"), 1 - weights["bm25"]


def scores_order() -> list[str]:
    return ["e5-small alone", "use-m3 alone", *systems()]


def main(argv: list[str]) -> int:
    workdir = Path(argv[0]) if argv else Path(".")
    started = time.perf_counter()
    scores = measure(workdir)
    OUTPUT.write_text(write_table(scores, time.perf_counter() - started), encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
