"""The pipeline of ``clir pipeline``, trained without the collection it is tested on:
written to ``transfer/PIPELINE.md``.

For each collection of the transfer matrix (the man pages and DDTP's hard variant, French
and German), ``clir pipeline train`` trains the pipeline on the *other three*, and ``clir
pipeline search`` runs it on the held-out collection's test topics, the way it meets a
user's collection: nothing is trained or tuned on it. Beside it, on the same test topics:

- BM25 of the dictionary translation (``clir search --translate dict``, the defaults);
- the zero-shot hybrid a user gets from ``clir index --dense`` and ``clir search --hybrid
  --translate dict`` (use-m3's vectors), which the pipeline is tested against (paired t-test,
  Holm);
- the pipeline's own first stage (BM25 fused with its encoders' dense runs, e5-small's and
  use-m3's by default), which the pipeline is tested against too;
- BM25 of the human translations (the monolingual reference): best / human.

Beside the test rows, K-NRM's λ: each model reranks the pipeline's first stage on the *dev*
split of the collection it was not trained on, at every λ of the grid. The table gives the
best mean over the four cells beside the pipeline's default λ, and each collection's λ chosen
without it (the best mean of the other three).

Run from the repository root with a workspace that ``clir run`` or ``clir pipeline train``
uses (``data/`` with the four collections; they are built when missing). The pipeline
searches ``indexes/<collection>`` (its encoder's vectors are added when missing), the
use-m3 hybrid ``indexes-use-m3/<collection>``::

    python transfer/pipeline.py WORKDIR        # writes transfer/PIPELINE.md

The models go to ``WORKDIR/models/pipeline-without-<collection>``; each is reused while its
inputs are the same. With ``--keep-models``, the models there are used as they are, whatever
code trained them, and only the first stage is today's default (a copy of the pipeline with
that first stage, ``pipeline-without-<collection>-<encoder>``): a change of the first stage
is then measured in minutes instead of the two hours that training four models takes. The
file says so, and when the models were trained.
"""

from __future__ import annotations

import dataclasses
import datetime
import platform
import shutil
import sys
import time
from pathlib import Path

import clir_toolkit as ct
from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.encoders import encoder_names
from clir_toolkit.evaluate import evaluate_runs
from clir_toolkit.evaluate.report import significance_mark
from clir_toolkit.index import read_index_info
from clir_toolkit.pipeline import search_pipeline, train_pipeline
from clir_toolkit.pipeline.definition import Pipeline, model_path, read_pipeline, write_pipeline
from clir_toolkit.pipeline.search import search_first_stage
from clir_toolkit.pipeline.train import (
    RERANK_DEPTH,
    default_collections,
    ensure_index,
    first_stage_defaults,
)
from clir_toolkit.rerank.interpolation import (
    INTERPOLATION_GRID,
    best_interpolation,
    interpolation_on_dev,
)
from clir_toolkit.search.hybrid import hybrid_search_to_run
from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

MEASURES = ["nDCG@10", "R@100"]
ZERO_SHOT = "use-m3"
"""The encoder of the zero-shot hybrid a user gets (``clir index --dense``'s default)."""
SPLIT = "test"
OUTPUT = Path(__file__).with_name("PIPELINE.md")


def held_out(
    workdir: Path, target: Path, others: list[Path], keep_models: bool
) -> dict[str, object]:
    """One row: the pipeline trained on ``others``, tested on ``target``."""
    collection = open_collection(target)
    name = collection.manifest.get("name") or target.name
    models = workdir / "models" / f"pipeline-without-{name}"
    started = time.perf_counter()
    if keep_models:
        models, pipeline = restaged(models)
    else:
        pipeline = train_pipeline(models, others, workdir)
    trained = None if keep_models else time.perf_counter() - started
    stage = pipeline.first_stage
    index = ensure_index(collection, workdir / "indexes" / name, stage.encoder, False)
    zero_shot = ensure_index(collection, workdir / "indexes-use-m3" / name, ZERO_SHOT, False)
    runs = workdir / "runs" / name / "pipeline"
    runs.mkdir(parents=True, exist_ok=True)
    topics_file = collection.split_file("topics", SPLIT)
    topics = ct.read_topics(topics_file)
    language = read_index_info(index).language
    kinds = ("bm25-dict", "hybrid", "first-stage", "pipeline", "bm25-human")
    files = {kind: runs / f"{kind}.{SPLIT}.trec" for kind in kinds}
    dictionary = build_queries(topics, TranslationOptions(translate="dict"), language)
    ct.search_to_run(index, dictionary, files["bm25-dict"], k1=stage.k1, b=stage.b,
                     structure=stage.structure, tag="bm25-dict", threads=None)  # fmt: skip
    hybrid_search_to_run(
        zero_shot, dictionary, topics, files["hybrid"], tag="hybrid", encoder=ZERO_SHOT,
        k1=stage.k1, b=stage.b, structure=stage.structure, threads=None,
    )  # fmt: skip
    started = time.perf_counter()
    search_pipeline(models, index, topics_file, files["pipeline"],
                    first_stage_output=files["first-stage"])  # fmt: skip
    searched = time.perf_counter() - started
    human = build_queries(ct.read_topics(collection.split_file("topics-human", SPLIT)),
                          TranslationOptions(), language)  # fmt: skip
    ct.search_to_run(index, human, files["bm25-human"], k1=stage.k1, b=stage.b,
                     tag="bm25-human", threads=None)  # fmt: skip
    qrels = collection.split_file("qrels", SPLIT)
    result = evaluate_runs(qrels, list(files.values()), MEASURES, baseline=str(files["hybrid"]))
    means = dict(zip(files, (result.means[run] for run in result.runs), strict=True))
    marks = {measure: significance_mark(result, result.runs[3], measure) for measure in MEASURES}
    own = evaluate_runs(qrels, [files["first-stage"], files["pipeline"]], MEASURES,
                        baseline=str(files["first-stage"]))  # fmt: skip
    own_marks = {measure: significance_mark(own, own.runs[1], measure) for measure in MEASURES}
    return {
        "encoder": stage.encoder,
        "interpolate": pipeline.reranking.interpolate if pipeline.reranking else None,
        "lambda on dev": lambda_on_dev(models, pipeline, index, collection, runs),
        "own marks": own_marks,
        "target": name,
        "trained on": ", ".join(entry["name"] for entry in pipeline.trained_on),
        "queries": len(result.qids),
        "means": means,
        "marks": marks,
        "train minutes": None if trained is None else trained / 60,
        "search seconds": searched,
    }


def lambda_on_dev(
    models: Path, pipeline: Pipeline, index: Path, collection: Collection, runs: Path
) -> dict[float, float]:
    """nDCG@10 of the pipeline's model over its first stage on the held-out collection's dev
    split, at each λ of the grid: a transfer cell for the choice of λ."""
    model = model_path(models, pipeline)
    assert model is not None
    first = runs / "first-stage.dev.trec"
    search_first_stage(models, pipeline, index, collection.split_file("topics", "dev"), first,
                       quiet=True)  # fmt: skip
    return interpolation_on_dev(model, collection.root, first, RERANK_DEPTH, verbose=False).scores


def lambda_table(rows: list[dict[str, object]]) -> list[str]:
    """The λ grid on each held-out dev split, its mean, and the λ each collection would get
    from the other three."""
    cells: dict[str, dict[float, float]] = {}
    for row in rows:
        cells[str(row["target"])] = row["lambda on dev"]  # type: ignore[assignment]
    mean = {w: sum(cell[w] for cell in cells.values()) / len(cells) for w in INTERPOLATION_GRID}
    best = best_interpolation(mean)
    lines = [
        "## K-NRM's λ, on the dev split of the collection each model was not trained on",
        "",
        f"The best mean: **λ {best:g}**; the pipeline's default is λ {rows[0]['interpolate']:g}. "
        "*without it*: the λ of the best mean over the other three cells.",
        "",
        "| dev of | " + " | ".join(f"λ {w:g}" for w in INTERPOLATION_GRID) + " | without it |",
        "|---|" + "---|" * (len(INTERPOLATION_GRID) + 1),
    ]
    for name, cell in cells.items():
        others = [c for n, c in cells.items() if n != name]
        without = best_interpolation({w: sum(c[w] for c in others) for w in INTERPOLATION_GRID})
        lines.append(f"| {name} | " + " | ".join(f"{cell[w]:.4f}" for w in INTERPOLATION_GRID)
                     + f" | λ {without:g} |")  # fmt: skip
    lines.append("| **mean** | " + " | ".join(f"**{mean[w]:.4f}**" for w in INTERPOLATION_GRID)
                 + " | |")  # fmt: skip
    return lines + [""]


def restaged(trained: Path) -> tuple[Path, Pipeline]:
    """The pipeline trained before in ``trained``, its models as they are, with today's
    default first stage: the directory ``<trained>-<encoder>`` (a copy), or ``trained`` when
    its first stage is today's."""
    pipeline = read_pipeline(trained)
    stage = first_stage_defaults()
    if pipeline.first_stage == stage:
        return trained, pipeline
    directory = trained.with_name(f"{trained.name}-{stage.encoder}")
    directory.mkdir(exist_ok=True)
    model = model_path(trained, pipeline)
    assert model is not None
    shutil.copyfile(model, directory / model.name)
    pipeline = dataclasses.replace(pipeline, first_stage=stage)
    write_pipeline(directory, pipeline)
    return directory, pipeline


def trained_when(workdir: Path) -> str:
    """The dates the models of ``workdir/models/pipeline-without-*`` were written."""
    dates = {
        datetime.date.fromtimestamp(path.stat().st_mtime).isoformat()
        for path in (workdir / "models").glob("pipeline-without-*/knrm.pt")
    }
    return ", ".join(sorted(dates))


def write_table(rows: list[dict[str, object]], seconds: float, kept: str | None) -> str:
    today = datetime.date.today().isoformat()
    lines = [
        "# The pipeline on collections it was not trained on",
        "",
        f"Generated by `python transfer/pipeline.py WORKDIR` on {today} ({seconds / 60:.0f} "
        f"min, {platform.machine()}, {ct.__version__}). Each row: `clir pipeline train` on the "
        "other three collections, `clir pipeline search` on this one's test topics; nothing "
        "trained or tuned on it. *hybrid (use-m3)*: the zero-shot hybrid of `clir index "
        "--dense` and `clir search --hybrid --translate dict`; *first stage*: the pipeline's "
        f"own, {first_stage_words(str(rows[0]['encoder']))}. ▲/▼: the pipeline "
        "significantly above/below the use-m3 hybrid; △/▽: above/below its own first stage "
        "(paired t-tests, Holm, α 0.05).",
        "",
        *([f"The K-NRM models were trained by `clir pipeline train` on {kept} and kept as they "
           "are (`--keep-models`); the first stage is today's default.", ""] if kept else []),
        "| tested on | trained on | queries | BM25 dict | hybrid (use-m3) | first stage | "
        "pipeline | BM25 human | pipeline / human | train (min) | search (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        means: dict[str, dict[str, float]] = row["means"]  # type: ignore[assignment]
        marks: dict[str, str] = row["marks"]  # type: ignore[assignment]
        own: dict[str, str] = row["own marks"]  # type: ignore[assignment]
        against_own = own["nDCG@10"].replace("▲", "△").replace("▼", "▽")

        def cell(kind: str, mark: str = "", means: dict[str, dict[str, float]] = means) -> str:
            ndcg, recall = means[kind]["nDCG@10"], means[kind]["R@100"]
            return f"{ndcg:.4f}{mark} ({recall:.3f})"

        ratio = means["pipeline"]["nDCG@10"] / means["bm25-human"]["nDCG@10"]
        minutes = "–" if row["train minutes"] is None else f"{row['train minutes']:.1f}"
        lines.append(
            f"| {row['target']} | {row['trained on']} | {row['queries']} | {cell('bm25-dict')} "
            f"| {cell('hybrid')} | {cell('first-stage')} "
            f"| {cell('pipeline', marks['nDCG@10'] + against_own)} | {cell('bm25-human')} "
            f"| {ratio:.3f} | {minutes} | {row['search seconds']:.0f} |"
        )
    lines += ["", "nDCG@10 (R@100 in brackets), test split.", ""]
    return "\n".join(lines + lambda_table(rows))


def first_stage_words(encoder: str) -> str:
    """The first stage of ``encoder`` (one or several, :func:`encoder_names`), in words."""
    names = encoder_names(encoder)
    if len(names) == 1:
        return f"the hybrid with {encoder}'s dense run"
    return f"BM25 fused with the dense runs of {' and '.join(str(n) for n in names)}"


def main(argv: list[str]) -> int:
    keep_models = "--keep-models" in argv
    arguments = [argument for argument in argv if argument != "--keep-models"]
    workdir = Path(arguments[0]) if arguments else Path(".")
    started = time.perf_counter()
    kept = trained_when(workdir) if keep_models else None
    collections = default_collections(workdir)
    rows = [
        held_out(workdir, target, [other for other in collections if other != target],
                 keep_models)  # fmt: skip
        for target in collections
    ]
    table = write_table(rows, time.perf_counter() - started, kept)
    OUTPUT.write_text(table, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
