"""Reranking experiments as recipes (``kind = "rerank"``): first stage → training → reranking.

A rerank recipe names a first-stage search recipe (a ``kind = "search"`` recipe in the same
directory, on the same ``collection`` family), a reranker and how it is trained and tested;
``clir run rerank/*.toml`` then, for every language of the recipe:

1. builds the collection and its index if they are missing
   (:mod:`clir_toolkit.experiments.context`);
2. makes the first-stage runs of the train, dev and test splits, or reuses them when they
   are present and fresh (same search options, topics, index and code of the modules a run
   depends on: one rule for every reused file, :mod:`clir_toolkit.freshness`). The train split's run
   gives the training negatives, the dev split's the candidates for model selection;
3. trains the reranker with :func:`clir_toolkit.rerank.word.train.train_reranker` on the train
   split, keeping the epoch with the best dev nDCG@10, or reuses the model file when one
   trained with the same settings on the same files by the same training code is there
   (``models/<collection>/``);
   (``clir run --force`` makes runs and models again, each once per run, even when fresh);
4. reranks the top ``depth`` candidates of the dev and test runs (what
   :func:`clir_toolkit.rerank.score.score_run` does, scored once so that an interpolation
   weight can be chosen on dev) and writes them under ``runs/`` like any other run.

Every reranked row of RESULTS.md is then tested against its own first stage
(:mod:`clir_toolkit.experiments.results`), and :mod:`clir_toolkit.experiments.rerank_report`
draws the figures.

An example, the smooth-cosine dual encoder with SOSL (Liu et al., Table 2)::

    name = "dual-sosl"
    title = "dual encoder (avg), SOSL, ε = 1"
    group = "loss (Table 2)"
    kind = "rerank"
    languages = ["fr", "de"]
    topics = "english"            # the queries the reranker sees on dev and test

    [rerank]
    first_stage = "bm25-dict-syn" # rerank/bm25-dict-syn.toml, kind = "search" (a [tune]
                                  # table in it: the values chosen on dev)
    model = "dual"
    loss = "sosl"
    epsilon = 1.0
    negatives = 40
    epochs = 10
    figure = "figure-3-densities" # a panel of score densities per grade on the training set
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.experiments.context import RunContext, Workspace, ensure_index
from clir_toolkit.experiments.kept_scores import kept_scores
from clir_toolkit.experiments.recipe import find_recipe
from clir_toolkit.experiments.records import Recipe, RecipeOutcome, RerankDetails
from clir_toolkit.experiments.rerank_table import RerankSpec, rerank_spec, sweep_recipes
from clir_toolkit.experiments.rerank_training import TrainedModel, model_trainer, train_model
from clir_toolkit.experiments.search_runner import (
    SPLITS,
    ensure_first_stage,
    topics_kind,
    translation_options,
)
from clir_toolkit.experiments.topic_variants import TopicVariant, variant_topics
from clir_toolkit.freshness import digest, mark_fresh
from clir_toolkit.registry import homes

TRANSLATION_CODE = (
    "clir_toolkit.translate.pipeline", *homes("translators", "expanders"),
    "clir_toolkit.experiments.search_runner",
)  # fmt: skip
"""The code translated queries depend on (:func:`clir_toolkit.freshness.code_fingerprint`):
the pipeline's, with the translators and expanders it reaches by name (as
:data:`clir_toolkit.translate.pipeline.TRANSLATION_CODE`), and the first stage's."""


def reranker_topics(
    recipe: Recipe, spec: RerankSpec, language: str, split: str, context: RunContext,
    query_case: str | None = None,
) -> Path:  # fmt: skip
    """The topics the reranker reads on ``split``: English, human, or English translated;
    English ones lower-cased as ``query_case`` says (the model's training did the same)."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.files import sha256_file
    from clir_toolkit.formats import read_topics
    from clir_toolkit.translate.pipeline import (
        build_queries,
        write_translations,
    )

    workspace = context.workspace
    collection = open_collection(workspace.collection(recipe.collection, language, recipe.variant))
    topics = collection.split_file(topics_kind(spec.test_topics), split)
    if query_case is not None:
        output = workspace.run(recipe, language, split).with_suffix(".queries.tsv")
        return variant_topics(topics, split, TopicVariant(query_case=query_case), output, context)
    if not spec.translation:
        return topics
    output = workspace.run(recipe, language, split).with_suffix(".queries.tsv")
    key = digest({"translation": spec.translation, "topics": sha256_file(topics), "lang": language})
    if not context.reusable(output, key, TRANSLATION_CODE):
        context.log(f"translating the {split} queries for {recipe.name} → {output}")
        options = translation_options(spec.translation)
        write_translations(output, build_queries(read_topics(topics), options, language))
        mark_fresh(output, key, code=TRANSLATION_CODE)
    return output


def query_oov(reranker: Any, topics: Path) -> float:
    """Share of the query tokens that are outside the model's query vocabulary."""
    from clir_toolkit.formats import read_topics

    vocab = reranker.query_vocab
    tokens = [
        token
        for topic in read_topics(topics)
        for token in vocab.tokenize(topic.query, reranker.max_query_len)
    ]
    return sum(token not in vocab for token in tokens) / len(tokens) if tokens else 0.0


def training_scores(
    reranker: Any, config_settings: Mapping[str, str], device: Any
) -> dict[int, list[float]]:
    """Model scores of the pointwise training examples, by grade (Liu et al., Figure 3).

    The examples are those training used: every judged relevant document of a training query
    and its first ``negatives`` non-relevant first-stage candidates.
    """
    from clir_toolkit.collection import open_collection
    from clir_toolkit.formats import read_qrels, read_run, read_topics
    from clir_toolkit.rerank.data.documents import DocumentEncoder, cache_dir_for
    from clir_toolkit.rerank.data.examples import relevance_examples
    from clir_toolkit.rerank.word.batches import encode_candidates, score_encoded

    collection = open_collection(config_settings["collection"])
    topics = {t.qid: t.query for t in read_topics(config_settings["topics"])}
    examples = relevance_examples(
        read_qrels(config_settings["qrels"]),
        read_run(config_settings["run"]),
        int(config_settings["negatives_per_query"]),
        topics,
    )
    candidates: dict[str, list[str]] = {}
    for example in examples:
        candidates.setdefault(example.qid, []).append(example.docid)
    encoder = DocumentEncoder(
        collection.corpus,
        reranker.doc_vocab,
        reranker.max_doc_len,
        cache_dir_for(collection.root, None),
    )
    encoded = encode_candidates(
        topics, candidates, reranker.query_vocab, reranker.max_query_len, encoder
    )
    scores = score_encoded(reranker.model, encoded, device)
    by_grade: dict[int, list[float]] = {}
    for example in examples:
        by_grade.setdefault(example.grade, []).append(scores[(example.qid, example.docid)])
    return by_grade


def describe_model(summary: Mapping[str, Any]) -> str:
    """``dual avg, sosl, ε=1`` or ``knrm, hinge`` from a training summary."""
    settings = summary.get("settings", {})
    if summary.get("pretrained"):
        epsilon = summary.get("epsilon")
        return f"{summary['pretrained']} fine-tuned, {summary.get('loss', '?')}, ε={epsilon:g}"
    parts = [str(summary.get("model", "?"))]
    if parts[0] == "dual":
        parts[0] += f" {settings.get('encoder', 'avg')}"
    parts.append(str(summary.get("loss", "?")))
    if parts[0].startswith("dual"):
        epsilon = summary.get("epsilon")
        parts.append(f"ε={1.0 if epsilon is None else epsilon:g}")
    if summary.get("thresholds"):
        parts.append("θ=" + "/".join(f"{t:g}" for t in summary["thresholds"]))
    if summary.get("tie_embeddings"):
        parts.append("tied")
    return ", ".join(parts)


def _queries_label(topics: str, language: str, translation: Mapping[str, Any]) -> str:
    if topics == "human":
        return f"human {language} queries"
    if not translation:
        return "English queries"
    how = translation.get("mt") or translation.get("dictionary") or translation["translate"]
    mode = f", {translation['dict_mode']}" if "dict_mode" in translation else ""
    return f"English queries, {translation['translate']}-translated ({how}{mode})"


def run_rerank_recipe(
    recipe: Recipe, language: str, context: RunContext
) -> RecipeOutcome | list[RecipeOutcome]:
    """Run a rerank recipe on one language: one outcome, or one per sweep point."""
    points = sweep_recipes(recipe)
    if len(points) == 1 and not points[0][1]:
        return rerank_one(recipe, language, context)
    return [rerank_one(point, language, context, values) for point, values in points]


def rerank_one(
    recipe: Recipe,
    language: str,
    context: RunContext,
    sweep: Mapping[str, Any] | None = None,
) -> RecipeOutcome:
    """Steps 1–4 of the module docstring for one recipe (or sweep point) and language."""
    from clir_toolkit.compute.device import resolve_device
    from clir_toolkit.rerank.candidates import read_candidates
    from clir_toolkit.rerank.word.model_file import load_model

    started = time.perf_counter()
    spec = rerank_spec(recipe)
    first = find_recipe(recipe, spec.first_stage, "search", "first_stage")
    trainer, trained_language = model_trainer(recipe, spec, language)
    ensure_index(context, recipe.collection, language, recipe.variant)
    workspace = context.workspace
    collection = workspace.collection(recipe.collection, language, recipe.variant)
    first_runs = ensure_first_stage(first, language, context, SPLITS)
    trained = train_model(trainer, trained_language, context)
    trainer_spec = rerank_spec(trainer)
    device = resolve_device(
        str(recipe.rerank.get("device", trainer_spec.training.get("device", "auto")))
    )
    if trainer_spec.pretrained is not None:
        if spec.test_topics != "english" or spec.translation:
            raise FormatError(
                recipe.path, None, "a fine-tuned encoder reads the English queries: no "
                "translate and no human topics",
            )  # fmt: skip
        neural, ranked = _tuned_scores(trained.path, collection, first_runs, spec.depth, context)
        return _reranked_outcome(
            recipe, language, workspace, spec, first, trained, trainer_spec, collection,
            first_runs, neural, ranked, {}, device, sweep, started,
        )  # fmt: skip
    reranker = load_model(trained.path, device)
    expected = "en" if spec.test_topics == "english" and not spec.translation else None
    if expected is None:
        from clir_toolkit.collection import open_collection

        expected = open_collection(collection).doc_lang or language
    if reranker.query_language != expected:
        raise ClirError(
            f"{recipe.path}: the model {trained.path} reads {reranker.query_language} queries, "
            f"but this recipe gives it {expected} queries; train it on such queries "
            "(train_topics) or translate the test queries (translate)"
        )

    # Score each split once (or reuse the scores kept); choose λ (if several) on dev.
    neural, ranked, oov = {}, {}, {}
    for split in SPLITS:
        topics = reranker_topics(
            recipe, spec, language, split, context, trainer_spec.topic_variant.query_case
        )
        oov[split] = query_oov(reranker, topics)
        read = read_candidates(collection, topics, first_runs[split], spec.depth)
        ranked[split] = read.ranked
        neural[split] = kept_scores(
            context, collection, split,
            {"model": trained.path, "topics": topics, "run": first_runs[split]},
            {"documents": read.collection.fingerprint(), "depth": spec.depth,
             "device": device.type},
            functools.partial(_word_level_scores, reranker, read, device), read.pairs,
        )  # fmt: skip
    return _reranked_outcome(
        recipe, language, workspace, spec, first, trained, trainer_spec, collection, first_runs,
        neural, ranked, oov, device, sweep, started, reranker,
    )  # fmt: skip


def _tuned_scores(
    model: Path, collection: Path, first_runs: Mapping[str, Path], depth: int,
    context: RunContext,
) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """Scores and first-stage rows of the dev and test candidates, by a fine-tuned encoder
    (or the scores kept from an earlier run)."""
    from clir_toolkit.rerank.candidates import read_candidates
    from clir_toolkit.rerank.model_io import read_model_file

    data = read_model_file(model)
    neural, ranked = {}, {}
    for split in SPLITS:
        topics = collection / f"topics.{split}.tsv"
        read = read_candidates(collection, topics, first_runs[split], depth)
        neural[split] = kept_scores(
            context, collection, split,
            {"model": model, "topics": topics, "run": first_runs[split]},
            {"documents": read.collection.fingerprint(), "depth": depth, "device": "cpu"},
            functools.partial(_tuned_encoder_scores, model, data, read, context.quiet),
            read.pairs,
        )  # fmt: skip
        ranked[split] = read.ranked
    return neural, ranked


def _word_level_scores(reranker: Any, read: Any, device: Any) -> dict[tuple[str, str], float]:
    """A word-level model's scores of a run's candidates (read with ``read_candidates``)."""
    from clir_toolkit.rerank.word.batches import encode_read, score_encoded

    return score_encoded(reranker.model, encode_read(reranker, read), device)


def _tuned_encoder_scores(
    model: Path, data: Any, read: Any, quiet: bool
) -> dict[tuple[str, str], float]:
    """A fine-tuned encoder's scores of a run's candidates."""
    from clir_toolkit.rerank.sentence.tuned_model import score_run_tuned

    return score_run_tuned(model, data, read, None, not quiet)[0]


def _reranked_outcome(
    recipe: Recipe, language: str, workspace: Workspace, spec: RerankSpec, first: Recipe,
    trained: TrainedModel, trainer_spec: RerankSpec, collection: Path,
    first_runs: Mapping[str, Path], neural: Mapping[str, Any], ranked: Mapping[str, Any],
    oov: dict[str, float], device: Any, sweep: Mapping[str, Any] | None, started: float,
    reranker: Any = None,
) -> RecipeOutcome:  # fmt: skip
    """λ chosen on dev (if several), the runs written, the outcome of the row."""
    from clir_toolkit.formats import read_qrels, write_run
    from clir_toolkit.rerank.candidates import rerank_rows
    from clir_toolkit.rerank.interpolation import best_interpolation, interpolation_scores

    chosen: dict[str, Any] = {"epoch": trained.summary.get("best_epoch")}
    weight: float | None = spec.interpolate[0] if len(spec.interpolate) == 1 else None
    if len(spec.interpolate) > 1:
        dev_qrels = read_qrels(collection / "qrels.dev.txt")
        weight = best_interpolation(
            interpolation_scores(ranked["dev"], neural["dev"], spec.depth, dev_qrels,
                                 spec.interpolate)  # fmt: skip
        )
        chosen["λ"] = weight
    elif weight is not None:
        chosen["λ"] = weight
    runs = {}
    for split in SPLITS:
        output = workspace.run(recipe, language, split)
        write_run(
            output, rerank_rows(ranked[split], neural[split], spec.depth, weight, recipe.name)
        )
        runs[split] = output

    scores_by_grade: dict[int, list[float]] = {}
    if spec.figure and not sweep and reranker is not None:
        scores_by_grade = training_scores(reranker, trained.summary["settings"], device)
    trained_in = trained.path.parent.name  # models/<collection>/<recipe>.pt
    elsewhere = "" if trained_in == collection.name else f" of {trained_in}"
    details = RerankDetails(
        first_stage=first.name,
        model=trained.path,
        model_description=describe_model(trained.summary),
        trained_on=_queries_label(trainer_spec.train_topics, language, {}) + elsewhere,
        tested_with=_queries_label(spec.test_topics, language, spec.translation),
        summary=trained.summary,
        reused=trained.reused,
        query_oov=oov,
        sweep=dict(sweep or {}),
        figure=spec.figure,
        figure_title=spec.figure_title,
        training_scores=scores_by_grade,
        thresholds=trainer_spec.thresholds,
    )
    return RecipeOutcome(
        recipe,
        language,
        runs,
        chosen,
        time.perf_counter() - started,
        first_stage={split: first_runs[split] for split in SPLITS},
        rerank=details,
    )
