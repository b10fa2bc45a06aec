"""A trained model made once: reused while its inputs, settings and training code are the
same (the rule of :mod:`clir_toolkit.freshness`, which ``clir run`` follows for recipes)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clir_toolkit.collection import Collection
from clir_toolkit.progress import log

INPUT_FILES = ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run")
"""A training config's input files, whose content is part of the model's key."""
NOT_SETTINGS = {"output", "verbose", "cache_dir", "resume", "device"}
"""A training config's fields that do not change the model."""


def made_once(
    config: Any,
    collection: Collection,
    code: tuple[str, ...],
    train: Callable[[Any], Any],
    quiet: bool,
) -> Path:
    """``config.output``, reused when it was trained with the same settings on the same files
    by the same code of the modules ``code``, else trained by ``train(config)``."""
    from clir_toolkit.freshness import is_fresh, mark_fresh

    key = model_key(config, collection)
    if is_fresh(config.output, key, code):
        log(quiet, f"reusing {config.output} (trained with the same settings on the same files)")
        return Path(config.output)
    log(quiet, f"training the reranker on the train split -> {config.output}")
    train(config)
    mark_fresh(config.output, key, code=code)
    return Path(config.output)


def model_key(config: Any, collection: Collection) -> str:
    """What a model is made from: its settings, the content of its input files, its
    encoder's or subword table's fingerprint and the model format (its training code is
    checked beside the key)."""
    from clir_toolkit.files import sha256_file
    from clir_toolkit.freshness import digest
    from clir_toolkit.rerank.data import subwords
    from clir_toolkit.rerank.sentence.tuned_config import TunedConfig

    settings: dict[str, Any] = {
        field.name: str(value) if isinstance(value, Path) else value
        for field in dataclasses.fields(config)
        if field.name not in NOT_SETTINGS and (value := getattr(config, field.name)) is not None
    }
    for name in INPUT_FILES:
        path = getattr(config, name)
        if path is not None:
            settings[f"{name}_sha256"] = sha256_file(path)
    settings["collection"] = collection.fingerprint()
    if isinstance(config, TunedConfig):  # a fine-tuned encoder (a TrainConfig has one too)
        from clir_toolkit.encoders import encoder_fingerprint
        from clir_toolkit.rerank.sentence.tuned_config import MODEL_FORMAT as TUNED_FORMAT

        settings.update(encoder=encoder_fingerprint(config.encoder), format=TUNED_FORMAT)
    else:
        from clir_toolkit.rerank.word.model_file import MODEL_FORMAT

        settings.update(subwords=subwords.fingerprint(), format=MODEL_FORMAT)
    return digest(settings)
