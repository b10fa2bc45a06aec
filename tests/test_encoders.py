"""The sentence encoders as a kind of component: a new encoder is one file, or one plug-in.

The encoders used here are small deterministic ones (character trigrams hashed into 64
buckets, numpy only): the plug-in's written by the test, the new file of the home package
docs/extending.md's own, so that the whole path — ``clir index --dense NAME``, ``clir
search --dense``, ``clir rerank train --pretrained NAME`` — runs without the encoders'
packages.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from clir_toolkit import freshness, registry
from clir_toolkit.encoders import (
    ENCODER_NAMES,
    default_interpolation,
    encoder_fingerprint,
    load_encoder,
)
from clir_toolkit.formats import iter_corpus, read_run, read_topics
from clir_toolkit.index import SIDECAR
from tests.conftest import TINY_FR, assert_one_line_error, run_clir
from tests.extending_examples import worked_files

HASHED_TRIGRAMS = '''
import zlib

import numpy as np

from clir_toolkit.encoders import SentenceEncoder


class HashedTrigrams(SentenceEncoder):
    """Counts of a text's character trigrams, hashed into 64 buckets."""

    distribution = "hashed_trigrams"
    interpolation = 0.4

    def __init__(self, threads=None, device="cpu"):
        self.dim = 64

    def embed(self, texts, query):
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower()}  "
            for start in range(len(padded) - 2):
                bucket = zlib.crc32(padded[start:start + 3].encode("utf-8")) % self.dim
                vectors[row, bucket] += 1.0
        return vectors
'''


@pytest.fixture
def plugin(tmp_path: Path) -> dict[str, str]:
    """The environment in which the package ``hashed_trigrams`` is installed, declaring the
    encoder ``trigrams`` in the entry-point group ``clir_toolkit.encoders``."""
    site = tmp_path / "site"
    info = site / "hashed_trigrams-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "hashed_trigrams.py").write_text(HASHED_TRIGRAMS, encoding="utf-8")
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hashed_trigrams\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[clir_toolkit.encoders]\ntrigrams = hashed_trigrams:HashedTrigrams\n", encoding="utf-8"
    )
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path}


def expected_dense_run(
    collection: Path, hits: int, encoder_name: str = "trigrams"
) -> dict[str, list[tuple[str, float]]]:
    """The definition of a dense run: each topic's documents by the cosine of the encoder's
    query and document vectors (computed in this process, with the encoder's file on
    sys.path)."""
    encoder = load_encoder(encoder_name)
    documents = list(iter_corpus(collection / "corpus.jsonl"))
    vectors = encoder.encode_documents([doc.contents for doc in documents])
    expected = {}
    for topic in read_topics(collection / "topics.dev.tsv"):
        scores = vectors @ encoder.encode_queries([topic.query])[0]
        order = np.argsort(-scores, kind="stable")[:hits]
        expected[topic.qid] = [(documents[i].id, float(scores[i])) for i in order]
    return expected


@pytest.mark.java
def test_a_plugin_encoder_indexes_searches_and_fine_tunes(
    tmp_path: Path, plugin: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    collection = tmp_path / "tiny-fr"
    shutil.copytree(TINY_FR, collection)
    index = tmp_path / "index"
    indexed = run_clir("index", "--collection", str(collection), "--index", str(index),
                       "--dense", "trigrams", "--quiet", env=plugin)  # fmt: skip
    assert indexed.returncode == 0, indexed.stderr
    dense = json.loads((index / SIDECAR).read_text(encoding="utf-8"))["dense"]
    assert (dense["encoder"], dense["fingerprint"]) == ("trigrams", "hashed_trigrams 1.0")
    assert (dense["dim"], dense["documents"]) == (64, 12)

    run = tmp_path / "dense.run"
    searched = run_clir("search", "--index", str(index), "--topics",
                        str(collection / "topics.dev.tsv"), "--output", str(run), "--dense",
                        "--hits", "3", "--quiet", env=plugin)  # fmt: skip
    assert searched.returncode == 0, searched.stderr
    monkeypatch.syspath_prepend(plugin["PYTHONPATH"].split(os.pathsep)[0])
    expected = expected_dense_run(collection, hits=3)
    for qid, ranking in expected.items():
        rows = [row for row in read_run(run) if row.qid == qid]
        assert [row.docid for row in rows] == [docid for docid, _ in ranking]
        assert [row.score for row in rows] == pytest.approx([s for _, s in ranking], abs=1e-4)

    model = tmp_path / "tuned.pt"
    topics = collection / "topics.dev.tsv"
    trained = run_clir("rerank", "train", "--pretrained", "trigrams", "--collection",
                       str(collection), "--topics", str(topics), "--qrels",
                       str(collection / "qrels.dev.txt"), "--run", str(run), "--epochs", "1",
                       "--output", str(model), "--quiet", env=plugin)  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    import torch

    record = torch.load(model, weights_only=True)
    assert (record["encoder"], record["encoder_fingerprint"]) == ("trigrams",
                                                                   "hashed_trigrams 1.0")
    # Without the package the name is refused in one line that lists the encoders.
    refused = run_clir("index", "--collection", str(collection), "--index",
                       str(tmp_path / "other"), "--dense", "trigrams", "--quiet")  # fmt: skip
    assert_one_line_error(refused, "unknown pretrained encoder 'trigrams' (choose e5-small, "
                          "use-m3 or hf:DIR)", status=2)  # fmt: skip


def test_a_plugin_encoder_declares_its_interpolation_and_fingerprint(
    plugin: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(plugin["PYTHONPATH"].split(os.pathsep)[0])
    assert list(ENCODER_NAMES) == ["e5-small", "use-m3", "trigrams", "hf:DIR"]
    assert "trigrams" in ENCODER_NAMES and "hf:/models/e5" in ENCODER_NAMES
    assert "bert" not in ENCODER_NAMES
    assert ENCODER_NAMES.is_plugin("trigrams")
    assert not ENCODER_NAMES.is_plugin("use-m3") and not ENCODER_NAMES.is_plugin("hf:DIR")
    assert default_interpolation("trigrams") == 0.4
    assert encoder_fingerprint("trigrams") == "hashed_trigrams 1.0"
    encoder = load_encoder("trigrams")
    assert (encoder.name, encoder.fingerprint, encoder.dim) == (
        "trigrams", "hashed_trigrams 1.0", 64)
    rows = encoder.encode_documents(["une page", "x" * 10_000])
    assert rows.shape == (2, 64) and np.allclose(np.linalg.norm(rows, axis=1), 1.0)


@pytest.fixture
def new_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """docs/extending.md's encoder file in a second home package of the encoders kind, as
    if it were one of clir_toolkit/encoders/ (the registry imports the modules of every
    home)."""
    with worked_files(tmp_path / "homes", monkeypatch, "clir_toolkit/encoders/char_trigrams.py"):
        yield


def test_a_new_file_in_the_home_package_is_a_new_encoder(new_home: None) -> None:
    assert list(registry.names("encoders")) == ["e5-small", "use-m3", "char-trigrams"]
    assert registry.describe("encoders")["char-trigrams"] == "hashed character trigrams, 64-d"
    assert default_interpolation("char-trigrams") == 0.7  # declared when it registers
    encoder = load_encoder("char-trigrams", threads=1, device="cpu")
    numpy = f"numpy {importlib.metadata.version('numpy')}"
    assert (encoder.name, encoder.fingerprint) == ("char-trigrams", numpy)
    assert encoder_fingerprint("char-trigrams") == numpy
    rows = encoder.encode_documents(["une page", "x" * 10_000])
    assert rows.shape == (2, 64) and np.allclose(np.linalg.norm(rows, axis=1), 1.0)


@pytest.mark.java
def test_the_new_encoder_file_indexes_and_searches_the_tiny_collection(
    new_home: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clir_toolkit.cli import main

    collection = tmp_path / "tiny-fr"
    shutil.copytree(TINY_FR, collection)
    index = tmp_path / "index"
    indexed = main(["index", "--collection", str(collection), "--index", str(index),
                    "--dense", "char-trigrams", "--quiet"])  # fmt: skip
    assert indexed == 0, capsys.readouterr().err
    dense = json.loads((index / SIDECAR).read_text(encoding="utf-8"))["dense"]
    assert dense["encoder"] == "char-trigrams"
    assert dense["fingerprint"] == f"numpy {importlib.metadata.version('numpy')}"
    assert (dense["dim"], dense["documents"]) == (64, 12)
    run = tmp_path / "dense.run"
    searched = main(["search", "--index", str(index), "--topics",
                     str(collection / "topics.dev.tsv"), "--output", str(run), "--dense",
                     "--hits", "3", "--quiet"])  # fmt: skip
    assert searched == 0, capsys.readouterr().err
    expected = expected_dense_run(collection, hits=3, encoder_name="char-trigrams")
    for qid, ranking in expected.items():
        rows = [row for row in read_run(run) if row.qid == qid]
        assert [row.docid for row in rows] == [docid for docid, _ in ranking]
        assert [row.score for row in rows] == pytest.approx([s for _, s in ranking], abs=1e-4)


def test_editing_a_built_in_encoder_makes_what_it_encoded_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The built-ins are imported by name, yet their code is part of the code of what the
    dense searches and the fine-tuned models make (the freshness rule reads the home)."""
    copy = tmp_path / "src" / "clir_toolkit"
    shutil.copytree(freshness.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(freshness, "PACKAGE", copy)
    products = (("clir_toolkit.search.dense",), ("clir_toolkit.rerank.sentence.tuned",),
                ("clir_toolkit.rerank.sentence.pretrained",))  # fmt: skip
    translation = ("clir_toolkit.translate.pipeline",)  # translated queries: no encoder
    before = [freshness.code_fingerprint(code, copy) for code in (*products, translation)]
    with (copy / "encoders" / "use_m3.py").open("a", encoding="utf-8") as handle:
        handle.write("\nEDITED_BY_A_TEST = 1\n")
    after = [freshness.code_fingerprint(code, copy) for code in (*products, translation)]
    assert [old != new for old, new in zip(before, after, strict=True)] == [True, True, True, False]
