"""Step 3 of a rerank recipe: the model it trains, or reuses when one made from the same
inputs with the same settings by the same training code (:data:`MODEL_CODE`) is there
(``models/<collection>/``).

A word-level model is trained with :func:`clir_toolkit.rerank.word.train.train_reranker` on the
train split, keeping the epoch with the best dev nDCG@10; with ``pretrained``, the encoder
is fine-tuned with :func:`clir_toolkit.rerank.sentence.tuned.train_tuned`. The first-stage runs the
training reads are made on the way
(:func:`~clir_toolkit.experiments.search_runner.ensure_first_stage`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.collection.builder import family as collection_family
from clir_toolkit.errors import FormatError
from clir_toolkit.experiments.context import RunContext, Workspace
from clir_toolkit.experiments.recipe import find_recipe, retarget
from clir_toolkit.experiments.records import Recipe
from clir_toolkit.experiments.rerank_table import RerankSpec, rerank_spec
from clir_toolkit.experiments.search_runner import ensure_first_stage, topics_kind
from clir_toolkit.experiments.topic_variants import variant_topics
from clir_toolkit.freshness import digest, mark_fresh, read_sidecar
from clir_toolkit.params import show
from clir_toolkit.registry import homes

MODEL_CODE = (
    "clir_toolkit.rerank.word.train", "clir_toolkit.rerank.sentence.tuned",
    *homes("losses", "rerankers"),
)  # fmt: skip
"""The code a model depends on (:func:`clir_toolkit.freshness.code_fingerprint`): the two
trainers and what they import (encoders, tokenisers, the file format), and the losses and
architectures they reach by name through the registry. How a recipe becomes settings is
not: the settings themselves are in the model's key."""


@dataclass
class TrainedModel:
    """A model file and what its training reported (kept in the model's sidecar)."""

    path: Path
    summary: dict[str, Any]
    reused: bool


def model_trainer(recipe: Recipe, spec: RerankSpec, language: str) -> tuple[Recipe, str]:
    """The recipe that trains the model a rerank recipe uses on ``language``, and the
    language it trains it on: the recipe itself or the one ``model_from`` names, moved onto
    ``train_collection`` / ``train_variant`` and trained on ``train_language`` when the
    recipe says (a model tested on a collection it never saw)."""
    trainer = recipe
    if spec.model_from is not None:
        trainer = find_recipe(recipe, spec.model_from, "rerank", "model_from")
        if trainer.rerank.get("sweep"):
            raise FormatError(recipe.path, None, "[rerank] model_from cannot name a sweep recipe")
        if "model_from" in trainer.rerank:
            raise FormatError(
                recipe.path, None, f"[rerank] model_from = {show(spec.model_from)} names "
                f"{trainer.path}, which trains no model: it reuses another's (model_from)",
                "name the recipe that trains the model",
            )  # fmt: skip
    family = spec.train_collection or trainer.collection
    own_variant = trainer.variant if family == trainer.collection else "standard"
    variant = spec.train_variant or own_variant
    trained_language = spec.train_language or language
    if trained_language not in collection_family(family).languages:
        raise FormatError(
            recipe.path, None, f"[rerank] train_language = {show(trained_language)}: "
            f"collection = {show(family)} has no such collection",
            f"choose one of {', '.join(collection_family(family).languages)}",
        )  # fmt: skip
    return retarget(trainer, family, variant), trained_language


def model_path(recipe: Recipe, language: str, workspace: Workspace) -> Path:
    """``models/<collection>/<recipe>.pt``: where a recipe's model for ``language`` lives."""
    name = workspace.collection_name(recipe.collection, language, recipe.variant)
    return workspace.models / name / f"{recipe.name}.pt"


def train_config(recipe: Recipe, spec: RerankSpec, language: str, context: RunContext) -> Any:
    """The :class:`TrainConfig` of a recipe (its first-stage runs made on the way), or with
    ``pretrained`` the :class:`~clir_toolkit.rerank.sentence.tuned_config.TunedConfig`."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.rerank.word.train_config import TrainConfig

    first = find_recipe(recipe, spec.train_first_stage, "search", "train_first_stage")
    runs = ensure_first_stage(first, language, context)
    workspace = context.workspace
    collection = open_collection(workspace.collection(recipe.collection, language, recipe.variant))
    kind = topics_kind(spec.train_topics)
    doc_language = collection.doc_lang or language
    if spec.pretrained is not None:
        return _tuned_config(recipe, spec, collection, kind, runs, context, language)
    return TrainConfig(
        **_training_files(recipe, spec, collection, kind, runs, context, language),
        depth=spec.depth,
        query_language=doc_language if spec.train_topics == "human" else None,
        doc_language=doc_language,
        verbose=not context.quiet,
        epsilon=spec.epsilon,
        sosl_thresholds=spec.thresholds,
        tie_embeddings=spec.tie_embeddings,
        **spec.training,
    )


def _training_files(
    recipe: Recipe, spec: RerankSpec, collection: Any, kind: str, runs: Mapping[str, Path],
    context: RunContext, language: str,
) -> dict[str, Any]:  # fmt: skip
    """The inputs and output of a training, word-level or fine-tuned: the train split's
    topics, qrels and first-stage run, the dev split's for model selection, the model file.

    The train and dev topics are the recipe's variant of them
    (:mod:`clir_toolkit.experiments.topic_variants`), written beside the model."""
    output = model_path(recipe, language, context.workspace)
    qrels = collection.split_file("qrels", "train")

    def topics(split: str) -> Path:
        return variant_topics(
            collection.split_file(kind, split), split, spec.topic_variant,
            output.with_suffix(f".{split}.topics.tsv"), context, qrels,
        )  # fmt: skip

    return {
        "collection": collection.root,
        "topics": topics("train"),
        "qrels": qrels,
        "run": runs["train"],
        "output": output,
        "dev_topics": topics("dev"),
        "dev_qrels": collection.split_file("qrels", "dev"),
        "dev_run": runs["dev"],
    }


#: [rerank] keys a fine-tuned encoder takes, and their TunedConfig fields.
TUNED_KEYS = {"negatives_per_query": "negatives", "epochs": "epochs", "lr": "lr",
              "batch_size": "batch_size", "seed": "seed", "loss": "loss"}  # fmt: skip
"""TrainConfig fields that a fine-tuned encoder takes too → their TunedConfig names."""


def _tuned_config(
    recipe: Recipe, spec: RerankSpec, collection: Any, kind: str, runs: Mapping[str, Path],
    context: RunContext, language: str,
) -> Any:  # fmt: skip
    """The :class:`TunedConfig` of a recipe with ``pretrained``: English queries only."""
    from clir_toolkit.rerank.sentence.tuned_config import TunedConfig

    other = sorted(set(spec.training) - set(TUNED_KEYS))
    if other or spec.tie_embeddings or spec.train_topics != "english":
        what = other[0] if other else "tie_embeddings" if spec.tie_embeddings else "train_topics"
        raise FormatError(
            recipe.path, None,
            f"[rerank] {what} does not apply with pretrained (a fine-tuned encoder reads the "
            "English queries; it takes negatives, epochs, lr, batch_size, seed, loss, "
            "epsilon, thresholds)",
        )  # fmt: skip
    assert spec.pretrained is not None
    options = {TUNED_KEYS[key]: value for key, value in spec.training.items()}
    if spec.epsilon is not None:
        options["epsilon"] = spec.epsilon
    if spec.train_queries is not None:
        options["train_queries"] = spec.train_queries
    return TunedConfig(
        **_training_files(recipe, spec, collection, kind, runs, context, language),
        encoder=spec.pretrained,
        depth=spec.depth,
        sosl_thresholds=spec.thresholds,
        verbose=not context.quiet,
        **options,
    )


def _training_key(config: Any, spec: RerankSpec) -> str:
    """What a model depends on: its settings and the content of every input file."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.encoders import encoder_fingerprint
    from clir_toolkit.files import sha256_file
    from clir_toolkit.rerank.data.tokens import ANALYSIS_VERSION
    from clir_toolkit.rerank.sentence.tuned_config import MODEL_FORMAT as TUNED_FORMAT
    from clir_toolkit.rerank.word.model_file import MODEL_FORMAT

    volatile = {"output", "verbose", "cache_dir", "resume", "device"}
    settings = {
        k: str(v) if isinstance(v, Path) else v
        for k, v in dataclasses.asdict(config).items()
        if k not in volatile
    }
    from clir_toolkit.rerank.data import subwords

    named = {subwords.SOURCE: subwords.fingerprint(), "none": "none"}
    files = {
        name: named.get(str(getattr(config, name))) or sha256_file(getattr(config, name))
        for name in ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run", "embeddings")
        if getattr(config, name, None) is not None
    }
    return digest(
        {
            "settings": settings,
            "files": files,
            "collection": open_collection(config.collection).fingerprint(),
            "epsilon": spec.epsilon,
            "thresholds": spec.thresholds,
            "tie_embeddings": spec.tie_embeddings,
            "analysis": ANALYSIS_VERSION,
            "format": TUNED_FORMAT if spec.pretrained is not None else MODEL_FORMAT,
            **({"encoder": encoder_fingerprint(spec.pretrained)} if spec.pretrained else {}),
        }
    )


_TRAINING: list[tuple[Recipe, str]] = []
"""The models being made, outermost first: a model whose training needs itself (a search
recipe's ``model_from`` naming a rerank recipe whose first stage is that search) is a cycle,
refused in one line instead of recursing without end."""


def train_model(recipe: Recipe, language: str, context: RunContext) -> TrainedModel:
    """The recipe's model for ``language``: reused when fresh, trained otherwise."""
    made = (recipe.path.resolve(), recipe.name, recipe.collection, recipe.variant, language)
    if any(made == (r.path.resolve(), r.name, r.collection, r.variant, lang)
           for r, lang in _TRAINING):  # fmt: skip
        chain = " → ".join(r.name for r, _ in [*_TRAINING, (recipe, language)])
        raise FormatError(
            recipe.path, None, f"its model needs itself to be trained ({chain})",
            "a first stage through a model (model_from) cannot be that model's own first stage",
        )  # fmt: skip
    _TRAINING.append((recipe, language))
    try:
        return _train_model(recipe, language, context)
    finally:
        _TRAINING.pop()


def _train_model(recipe: Recipe, language: str, context: RunContext) -> TrainedModel:
    from clir_toolkit.rerank.sentence.tuned import train_tuned
    from clir_toolkit.rerank.word.train import train_reranker

    spec = rerank_spec(recipe)
    config = train_config(recipe, spec, language, context)
    key = _training_key(config, spec)
    output = config.output
    if context.reusable(output, key, MODEL_CODE):
        context.log(f"reusing {output} (trained with the same settings on the same files)")
        return TrainedModel(output, read_sidecar(output).get("summary", {}), reused=True)
    context.log(f"training {recipe.name} on {language} → {output}")
    if spec.pretrained is not None:
        report = train_tuned(config)
    else:
        report = train_reranker(config)
        report.checkpoint.unlink(missing_ok=True)  # a finished training needs no checkpoint
    summary = {
        "model": report.model,
        "loss": report.loss,
        "device": report.device,
        "examples": report.examples,
        "query_vocab_size": report.query_vocab_size,
        "doc_vocab_size": report.doc_vocab_size,
        "best_epoch": report.best_epoch,
        "best_dev": report.best_dev,
        "epochs": len(report.history),
        "history": [dataclasses.asdict(r) for r in report.history],
        "seconds": report.seconds,
        "train_topics": spec.train_topics,
        "train_first_stage": spec.train_first_stage,
        "pretrained": spec.pretrained,
        "epsilon": config.epsilon if spec.pretrained is not None else spec.epsilon,
        "thresholds": spec.thresholds,
        "tie_embeddings": spec.tie_embeddings,
        "settings": {k: str(v) for k, v in dataclasses.asdict(config).items()},
    }
    mark_fresh(output, key, {"summary": summary}, MODEL_CODE)
    return TrainedModel(output, summary, reused=False)
