"""What defines fine-tuning a pretrained sentence encoder
(:mod:`clir_toolkit.rerank.sentence.tuned`):
:class:`TunedConfig` and its declared options :data:`TUNED_PARAMS` (the command line's
``clir rerank train --pretrained`` options and a recipe's ``[rerank]`` keys are generated
from them), and the format tag of the model files it writes. Importing it imports no torch.

The defaults are the best measured on ddtp-en-fr-hard dev (docs/encoders.md): 4 epochs, Adam
at 3e-5 with batches of 128 (the paper's size), 40 negatives per query and epoch (Liu et
al., *Smooth Learning*, §5), ε 0.1, SOSL.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.errors import UsageError
from clir_toolkit.params import Param, check_options, declare
from clir_toolkit.rerank import DEFAULT_ENCODER, LOSS_NAMES, is_pairwise

MODEL_FORMAT = "clir-toolkit-tuned-encoder/1"


MODEL_TYPE = "tuned"


#: λ of the interpolation with the first stage when ``clir rerank score --model`` gets a
#: fine-tuned encoder and no ``--interpolate``: the best of 0.5–0.9 on dev, on both
#: ddtp-en-fr-hard (0.7: 0.6103 nDCG@10; 0.6 0.5991, 0.8 0.6079) and ddtp-en-de-hard
#: (0.7: 0.5932; 0.6 0.5851, 0.8 0.5881). ``--interpolate 1`` ranks by the model alone.
INTERPOLATION = 0.7


TUNED_PARAMS = declare(
    Param("encoder", str, DEFAULT_ENCODER, "the pretrained sentence encoder",
          flag="--pretrained"),
    Param("epochs", int, 4, "epochs of training", minimum=1, flag="--epochs"),
    Param("lr", float, 3e-5, "Adam's learning rate", above=0, below=1, flag="--lr"),
    Param("batch_size", int, 128, "examples per step", minimum=1, flag="--batch-size"),
    Param("negatives", int, 40, "negatives drawn per query and epoch", minimum=1,
          flag="--negatives"),
    Param("depth", int, 100, "first-stage candidates negatives and dev reranking come from",
          minimum=1, flag="--depth"),
    Param("epsilon", float, 0.1, "ε of the smooth cosine (0: the plain cosine)", minimum=0,
          flag="--epsilon"),
    Param("loss", str, "sosl", "the training loss (pointwise)", choices=LOSS_NAMES,
          flag="--loss"),
    Param("sosl_thresholds", float, doc="SOSL's inner thresholds θ1 < θ2",
          above=-1, below=1, shape="list", length=2, increasing=True, optional=True,
          flag="--sosl-thresholds"),
    Param("seed", int, 42, "seed of every random choice", minimum=0, maximum=2**32 - 1,
          flag="--seed"),
    Param("train_queries", int, doc="train on the first N queries of the topics file "
          "(the thesis' Table 6.10 question)", minimum=1, optional=True,
          flag="--train-queries"),
)  # fmt: skip
"""The options of :class:`TunedConfig`, checked as the command line spells them."""


def _default(name: str) -> Any:
    """The declared default of the option ``name``."""
    return TUNED_PARAMS[name].default


@dataclass
class TunedConfig:
    """Everything that defines a fine-tuning run; the model file records it."""

    collection: Path
    topics: Path
    qrels: Path
    run: Path
    output: Path
    encoder: str = _default("encoder")
    dev_topics: Path | None = None
    dev_qrels: Path | None = None
    dev_run: Path | None = None
    epochs: int = _default("epochs")
    lr: float = _default("lr")
    batch_size: int = _default("batch_size")
    negatives: int = _default("negatives")
    depth: int = _default("depth")
    epsilon: float = _default("epsilon")
    loss: str = _default("loss")
    sosl_thresholds: tuple[float, float] | None = None
    seed: int = _default("seed")
    train_queries: int | None = None
    cache_dir: Path | None = None
    verbose: bool = True

    def __post_init__(self) -> None:
        """Check every option (a UsageError naming its flag) and the dev files' presence."""
        for name, value in check_options(vars(self), TUNED_PARAMS.values()).items():
            setattr(self, name, value)
        if is_pairwise(self.loss):
            pointwise = ", ".join(name for name in LOSS_NAMES if not is_pairwise(name))
            raise UsageError(
                f"--loss {self.loss} is pairwise; a fine-tuned encoder trains on "
                f"graded documents: choose {pointwise}"
            )
        dev = (self.dev_topics, self.dev_qrels, self.dev_run)
        if any(p is not None for p in dev) and any(p is None for p in dev):
            raise UsageError("give all three of --dev-topics, --dev-qrels and --dev-run, or none")
