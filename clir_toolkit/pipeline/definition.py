"""The pipeline as data: ``pipeline.json``, what ``clir pipeline train`` writes and
``clir pipeline search`` runs.

A pipeline directory holds the models and one ``pipeline.json``: the stages and their
settings, the collections the models were trained on, and the figures each collection's dev
split gave. The stages are those that help on collections the models never saw
(docs/transfer.md):

1. **the hybrid first stage**: BM25 (k1, b) of the dictionary translation, fused with the
   dense run of a pretrained multilingual encoder (min-max normalised per query,
   ``hybrid_weight`` on the dense scores), what ``clir search --hybrid --translate dict``
   does;
2. **K-NRM** on the encoder's subword table reranking the first stage's top ``depth``,
   interpolated with its scores at λ (``interpolate``), what ``clir rerank score
   --interpolate λ`` does.

A pipeline trained for collections it never saw (the default) has no fine-tuned encoder: out
of domain its towers moved nDCG@10 by less than one run's noise (+0.005 French, −0.003
German; docs/transfer.md), and λ is the default chosen by transfer. A pipeline trained **in
domain** (``clir pipeline train --in-domain``: one collection, searched later on its own
topics, as ``clir demo`` does) carries the encoder fine-tuned on that collection, whose towers
carry the dense run (``towers``), and the λ best on that collection's dev split.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clir_toolkit import __version__
from clir_toolkit.errors import ClirError, FormatError

TRANSFER_ENCODER = "e5-small,use-m3"
"""The first stage's dense encoders for collections the pipeline was not trained on: BM25
fused with the dense runs of both, each run at the same weight, chosen on the transfer matrix
(transfer/ENCODER.md, docs/pipeline.md)."""
IN_DOMAIN_ENCODER = "use-m3"
"""In domain: the encoder whose towers are fine-tuned on the collection (measured by ``clir
demo``; fine-tuning encodes every candidate, which use-m3 does fastest)."""
FILE_NAME = "pipeline.json"
FORMAT = "clir-pipeline/1"
"""The version of the file's layout; a file of another layout is refused."""


@dataclass(frozen=True)
class FirstStage:
    """The hybrid first stage's settings
    (:func:`clir_toolkit.search.hybrid.hybrid_search_to_run`)."""

    k1: float
    b: float
    translate: str
    structure: str
    encoder: str
    hybrid_weight: float
    hits: int
    towers: str | None = None
    """A fine-tuned encoder (a file of the pipeline directory) whose query and document towers
    carry the dense run (``clir search --hybrid --model``); None: the pretrained encoder."""


@dataclass(frozen=True)
class Reranking:
    """The reranking stage: ``model`` (a file of the pipeline directory) rescoring the top
    ``depth`` of the first stage, interpolated with its scores at ``interpolate`` (λ)."""

    model: str
    depth: int
    interpolate: float
    chosen_on: str = "transfer"
    """Where λ was chosen: ``transfer`` (the default for a collection the model never saw) or
    ``dev of <collection>`` (in domain)."""


@dataclass(frozen=True)
class Pipeline:
    """What ``pipeline.json`` records (see the module docstring)."""

    first_stage: FirstStage
    reranking: Reranking | None
    trained_on: list[dict[str, Any]] = field(default_factory=list)
    """One entry per collection: its name, languages, fingerprint and train queries."""
    dev: list[dict[str, Any]] = field(default_factory=list)
    """One entry per collection with a dev split: nDCG@10 of the first stage and of the
    pipeline on it."""
    toolkit_version: str = __version__


def pipeline_file(directory: Path) -> Path:
    return Path(directory) / FILE_NAME


def write_pipeline(directory: Path, pipeline: Pipeline) -> Path:
    """Write ``pipeline.json`` into ``directory`` atomically; return its path."""
    from clir_toolkit.files import atomic_write

    path = pipeline_file(directory)
    record = {"format": FORMAT, **dataclasses.asdict(pipeline)}
    with atomic_write(path) as handle:
        json.dump(record, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    return path


def read_pipeline(directory: Path) -> Pipeline:
    """The pipeline of ``directory``, checked: its file's layout, the toolkit version that
    wrote it and its model's presence; each problem is one error naming the fix."""
    from clir_toolkit.formats.checks import parse_json

    path = pipeline_file(directory)
    retrain = f"train it again: clir pipeline train --output {directory}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ClirError(f"{path}: missing; {retrain}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(path, None, f"cannot read the file: {exc}") from None
    record = parse_json(path, None, text)
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else None
        raise FormatError(path, None, f"not a pipeline of layout {FORMAT} (found {found!r})",
                          retrain)  # fmt: skip
    version = record.get("toolkit_version")
    if version != __version__:
        raise FormatError(
            path, None, f"written by clir_toolkit {version}, this is {__version__}", retrain
        )
    try:
        pipeline = Pipeline(
            first_stage=FirstStage(**record["first_stage"]),
            reranking=Reranking(**record["reranking"]) if record["reranking"] else None,
            trained_on=list(record.get("trained_on", [])),
            dev=list(record.get("dev", [])),
            toolkit_version=version,
        )
    except (KeyError, TypeError) as exc:
        problem = f"a stage is incomplete or unknown ({exc})"
        raise FormatError(path, None, problem, retrain) from None
    for model in (model_path(directory, pipeline), towers_path(directory, pipeline)):
        if model is not None and not model.is_file():
            raise ClirError(f"{model}: missing, named by {path}; {retrain}")
    return pipeline


def model_path(directory: Path, pipeline: Pipeline) -> Path | None:
    """The reranking model's file in ``directory`` (None: no reranking stage)."""
    if pipeline.reranking is None:
        return None
    return Path(directory) / pipeline.reranking.model


def towers_path(directory: Path, pipeline: Pipeline) -> Path | None:
    """The fine-tuned encoder's file in ``directory`` (None: the pretrained encoder)."""
    towers = pipeline.first_stage.towers
    return None if towers is None else Path(directory) / towers
