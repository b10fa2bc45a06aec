"""A training loss or a reranker architecture is one new file in its home package.

The built-in losses (``clir_toolkit/rerank/losses/``) and architectures
(``clir_toolkit/rerank/models/``) register themselves in :mod:`clir_toolkit.registry`; these
tests add one file of each to a home package, the way a contributor adds a built-in, and
check that ``--loss`` and ``--model`` accept the new names, that training takes the new
architecture's declared defaults, and that its model file is read back and scored.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from clir_toolkit import registry
from clir_toolkit.errors import UsageError
from clir_toolkit.rerank import LOSS_NAMES, MODEL_NAMES, is_pairwise
from clir_toolkit.rerank.losses import build_loss
from clir_toolkit.rerank.score import score_run
from clir_toolkit.rerank.word.model_file import load_model
from clir_toolkit.rerank.word.train import train_reranker
from clir_toolkit.rerank.word.train_config import TRAIN_PARAMS, TrainConfig, resolved_config
from tests.conftest import TINY_FR

TOPICS = TINY_FR / "topics.dev.tsv"
QRELS = TINY_FR / "qrels.dev.txt"

ABSOLUTE_LOSS = '''
"""The loss ``absolute``: mean absolute distance of a score to its grade's target."""

from clir_toolkit.registry import register

TARGETS = (-0.5, 0.4, 0.9)


@register("losses", "absolute", order=6, pairwise=False)
def absolute(scores, grades):
    """Mean absolute distance of each score to its grade's target."""
    import torch

    return (scores - torch.tensor(TARGETS, dtype=scores.dtype)[grades]).abs().mean()
'''

COARSE_KNRM = '''
"""The reranker ``knrm-coarse``: K-NRM with three wide kernels, trained with ``absolute``."""

from clir_toolkit.registry import register

COARSE_MUS = [1.0, 0.5, -0.5]


def coarse_options(config):
    return {"sigma": 0.3}


@register("rerankers", "knrm-coarse", order=3, default_loss="absolute", default_lr=0.005,
          train_options=coarse_options)
def knrm_coarse(query_vocab_size, doc_vocab_size, **options):
    """K-NRM over three wide kernels."""
    from clir_toolkit.rerank.word.knrm import KNRM

    options.setdefault("mus", COARSE_MUS)
    return KNRM(query_vocab_size, doc_vocab_size, **options)
'''


@pytest.fixture()
def new_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """One new loss file and one new architecture file, each in a home package of its kind
    (a second home beside the toolkit's own, so that the toolkit's files stay untouched)."""
    homes = {"losses": ("extra_losses", ABSOLUTE_LOSS), "rerankers": ("extra_models", COARSE_KNRM)}
    for kind, (package, source) in homes.items():
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "new.py").write_text(textwrap.dedent(source))
        declared = registry.KINDS[kind]
        monkeypatch.setitem(
            registry.KINDS, kind,
            registry.Kind(kind, declared.group, (*declared.homes, package), declared.what),
        )  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))  # also makes the names be read again
    yield
    for kind, (package, _) in homes.items():
        registry._IMPORTED_HOMES.discard(package)
        for name in ("absolute", "knrm-coarse"):
            registry._BUILTINS.get(kind, {}).pop(name, None)
    for module in [m for m in sys.modules if m.startswith(("extra_losses", "extra_models"))]:
        del sys.modules[module]


def _config(tmp_path: Path, run: Path, **options: object) -> TrainConfig:
    return TrainConfig(
        collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=run, dev_topics=TOPICS,
        dev_qrels=QRELS, dev_run=run, output=tmp_path / "model.pt", epochs=1, dim=16,
        negatives_per_query=10, batch_size=16, max_doc_len=40, device="cpu", verbose=False,
        cache_dir=tmp_path / "cache", **options,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_built_in_names_are_the_registered_files_in_their_order() -> None:
    assert MODEL_NAMES.builtin == ("knrm", "dual")
    assert LOSS_NAMES.builtin == ("sosl", "mse", "po", "3part", "hinge")  # sosl: the default
    assert TRAIN_PARAMS["model"].choices is MODEL_NAMES
    assert TRAIN_PARAMS["loss"].choices is LOSS_NAMES


def test_the_registry_lists_the_home_files_without_importing_torch() -> None:
    """Listing the names imports every home module: they keep torch for later, so that
    ``clir rerank train --help`` and a recipe's checks stay fast."""
    import json
    import subprocess

    code = (
        "import json, sys\nfrom clir_toolkit import registry\n"
        "print(json.dumps([list(registry.names('losses')), list(registry.names('rerankers')),"
        " 'torch' in sys.modules]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    losses, rerankers, torch_imported = json.loads(result.stdout.splitlines()[-1])
    assert losses[:5] == ["sosl", "mse", "po", "3part", "hinge"] and rerankers[:2] == [
        "knrm", "dual"
    ]
    assert torch_imported is False


def test_a_new_loss_file_is_a_loss_name_that_trains(new_files: None) -> None:
    assert list(LOSS_NAMES)[:6] == ["sosl", "mse", "po", "3part", "hinge", "absolute"]
    assert not is_pairwise("absolute") and is_pairwise("hinge")
    loss, module = build_loss("absolute")
    value = loss(torch.tensor([0.9, -0.5]), torch.tensor([2, 0]))
    assert module is None and float(value) == pytest.approx(0.0)


def test_a_new_architecture_file_trains_with_its_declared_defaults_and_scores(
    new_files: None, tmp_path: Path, first_stage: Path
) -> None:
    assert "knrm-coarse" in MODEL_NAMES and "knrm-coarse" in TRAIN_PARAMS["model"].choices
    resolved = resolved_config(_config(tmp_path, first_stage, model="knrm-coarse"))
    assert (resolved.loss, resolved.lr) == ("absolute", 0.005)
    report = train_reranker(_config(tmp_path, first_stage, model="knrm-coarse"))
    assert (report.model, report.loss) == ("knrm-coarse", "absolute")
    loaded = load_model(report.output)
    assert loaded.model_type == "knrm-coarse"
    assert loaded.model.mus == (1.0, 0.5, -0.5) and loaded.model.config()["sigma"] == 0.3
    output = tmp_path / "reranked.trec"
    score_run(report.output, TINY_FR, TOPICS, first_stage, output, device="cpu",
              cache_dir=tmp_path / "cache", verbose=False)  # fmt: skip
    assert output.read_text().split("\n")[0].split()[-1] == "knrm-coarse"


def test_the_command_line_accepts_the_new_names(new_files: None) -> None:
    from clir_toolkit.cli import build_parser

    args = build_parser({"rerank"}).parse_args([
        "rerank", "train", "--collection", "c", "--topics", "t", "--qrels", "q", "--run", "r",
        "--output", "m.pt", "--model", "knrm-coarse", "--loss", "absolute",
    ])  # fmt: skip
    assert (args.model, args.loss) == ("knrm-coarse", "absolute")


def test_an_unknown_name_lists_the_registered_ones(new_files: None) -> None:
    listed = r'--model must be one of "knrm", "dual", "knrm-coarse" \(got "bm25"\)'
    with pytest.raises(UsageError, match=listed):
        TrainConfig(collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=TOPICS, output="x",
                    model="bm25")  # fmt: skip
