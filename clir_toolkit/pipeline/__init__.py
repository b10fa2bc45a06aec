"""The best pipeline as data, trained once and run on any collection.

``clir pipeline train`` trains the pipeline's model on several collections at once
(:mod:`.train`, through :mod:`.mixture`) and writes a directory: the model and
``pipeline.json`` (:mod:`.definition`), the stages and their settings, the collections
trained on and their dev figures. ``clir pipeline search`` runs it on a collection of the
user's own, with no judgements (:mod:`.search`). Models are made once and reused while their
inputs are the same (:mod:`.models`). docs/pipeline.md tells the story, docs/transfer.md
where each setting was chosen.
"""

from clir_toolkit.pipeline.definition import (
    FirstStage,
    Pipeline,
    Reranking,
    read_pipeline,
    write_pipeline,
)
from clir_toolkit.pipeline.search import search_pipeline
from clir_toolkit.pipeline.train import DEFAULT_MIX, train_pipeline

__all__ = [
    "DEFAULT_MIX",
    "FirstStage",
    "Pipeline",
    "Reranking",
    "read_pipeline",
    "search_pipeline",
    "train_pipeline",
    "write_pipeline",
]
