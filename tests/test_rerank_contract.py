"""One reranker contract: a model file names its family, and each family trains, saves,
loads and scores the same way (``clir rerank score`` and ``--ray`` ask the file once)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from clir_toolkit.errors import ClirError
from clir_toolkit.rerank.contract import ScoreRequest
from clir_toolkit.rerank.model_io import read_model_file
from clir_toolkit.rerank.score import FAMILIES, reranker_of, score_run
from clir_toolkit.rerank.sentence.family import FINE_TUNED
from clir_toolkit.rerank.sentence.tuned_config import MODEL_FORMAT as TUNED_FORMAT
from clir_toolkit.rerank.word.family import WORD_LEVEL
from clir_toolkit.rerank.word.model_file import MODEL_FORMAT as WORD_FORMAT
from clir_toolkit.rerank.word.train_config import TrainConfig
from tests.conftest import TINY_FR

TOPICS = TINY_FR / "topics.dev.tsv"
QRELS = TINY_FR / "qrels.dev.txt"


def test_a_model_file_names_its_family_by_its_format() -> None:
    assert FAMILIES == (WORD_LEVEL, FINE_TUNED)
    assert reranker_of({"format": WORD_FORMAT}) is WORD_LEVEL
    assert reranker_of({"format": TUNED_FORMAT}) is FINE_TUNED
    assert WORD_LEVEL.distributable and not FINE_TUNED.distributable
    # Not a file of either: the word-level family's loading says what is wrong with it.
    assert reranker_of({"format": "something else"}) is WORD_LEVEL
    assert reranker_of(["not", "a", "dict"]) is WORD_LEVEL


def test_the_word_level_family_trains_loads_and_scores_through_the_contract(
    tmp_path: Path, first_stage: Path
) -> None:
    config = TrainConfig(
        collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=first_stage,
        output=tmp_path / "model.pt", model="knrm", epochs=1, dim=16, negatives_per_query=10,
        batch_size=16, max_doc_len=40, device="cpu", verbose=False,
        cache_dir=tmp_path / "cache",
    )  # fmt: skip
    report = WORD_LEVEL.train(config)
    data = read_model_file(report.output)
    family = reranker_of(data)
    assert family is WORD_LEVEL
    loaded = family.load(report.output, data, "cpu")
    assert loaded.model_type == "knrm" and not loaded.model.training
    request = ScoreRequest(
        TINY_FR, TOPICS, first_stage, depth=3, device=torch.device("cpu"), batch_size=4,
        precision="fp32", interpolate=None, cache_dir=tmp_path / "cache", verbose=False,
    )  # fmt: skip
    scored = family.score(report.output, data, request)
    assert (scored.model, scored.device, scored.interpolate) == ("knrm", "cpu", None)
    tops = {(qid, row.docid) for qid, rows in scored.ranked.items() for row in rows[:3]}
    assert set(scored.neural) == tops  # each query's top 3 scored, nothing else


def test_a_file_of_no_family_is_one_clir_error(tmp_path: Path, first_stage: Path) -> None:
    foreign = tmp_path / "foreign.pt"
    torch.save({"format": "someone-else/1"}, foreign)
    with pytest.raises(ClirError, match="not a reranker model file of this toolkit"):
        score_run(foreign, TINY_FR, TOPICS, first_stage, tmp_path / "out.run", device="cpu",
                  verbose=False)  # fmt: skip
    assert not (tmp_path / "out.run").exists()
