"""``clir pipeline train|search``: one model trained on several collections, run on another
collection as the stages would be run by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clir_toolkit.encoders import default_hybrid_weight
from clir_toolkit.pipeline.definition import IN_DOMAIN_ENCODER, TRANSFER_ENCODER
from tests.conftest import TINY_FR, assert_one_line_error, run_clir


def collection_with_train_split(root: Path, name: str) -> Path:
    """tiny-fr under another name, with a train split (its dev queries again: the plumbing,
    not a benchmark)."""
    collection = root / name
    shutil.copytree(TINY_FR, collection)
    shutil.copy(collection / "topics.dev.tsv", collection / "topics.train.tsv")
    shutil.copy(collection / "qrels.dev.txt", collection / "qrels.train.txt")
    manifest = json.loads((collection / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(name=name, splits=["train", "dev"])
    (collection / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return collection


def target_with_vectors(root: Path, encoder: str = TRANSFER_ENCODER) -> tuple[Path, Path, Path]:
    """A collection the pipeline was not trained on, its index with ``encoder``'s vectors
    (the pipeline's), and its dev topics."""
    collection = collection_with_train_split(root, "target")
    index = root / "index"
    built = run_clir("index", "--collection", str(collection), "--index", str(index),
                     "--dense", encoder)  # fmt: skip
    assert built.returncode == 0, built.stderr
    return collection, index, collection / "topics.dev.tsv"


def stages_by_hand(
    models: Path, collection: Path, index: Path, topics: Path, hybrid: Path, *first: str
) -> Path:
    """The pipeline of ``models`` run as its stages by hand, the first stage with the options
    ``first`` besides the dictionary translation (its run ``hybrid``), K-NRM at the
    transfer λ 0.4; the reranked run, ``hand.trec`` beside ``hybrid``."""
    hand = hybrid.with_name("hand.trec")
    by_hand = [
        ("search", "--hybrid", "--translate", "dict", *first, "--index", str(index), "--topics",
         str(topics), "--output", str(hybrid), "--tag", "pipeline"),
        ("rerank", "score", "--model", str(models / "knrm.pt"), "--collection", str(collection),
         "--topics", str(topics), "--run", str(hybrid), "--output", str(hand), "--depth", "100",
         "--interpolate", "0.4", "--tag", "pipeline"),
    ]  # fmt: skip
    for command in by_hand:
        step = run_clir(*command)
        assert step.returncode == 0, step.stderr
    return hand


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A pipeline trained on two collections, and the directory they are in."""
    root = tmp_path_factory.mktemp("pipeline")
    for name in ("tiny-a", "tiny-b"):
        collection_with_train_split(root, name)
    result = run_clir("pipeline", "train", "--output", "models", "--collection", "tiny-a",
                      "--collection", "tiny-b", cwd=root)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "tiny-a dev (6 queries): nDCG@10" in result.stdout
    return root, root / "models"


def test_train_writes_the_model_and_what_it_was_made_of(trained: tuple[Path, Path]) -> None:
    _, models = trained
    record = json.loads((models / "pipeline.json").read_text(encoding="utf-8"))
    assert [entry["name"] for entry in record["trained_on"]] == ["tiny-a", "tiny-b"]
    assert record["reranking"]["model"] == "knrm.pt" and (models / "knrm.pt").is_file()
    assert record["reranking"]["interpolate"] == 0.4  # the default chosen by transfer
    # The first stage chosen by transfer: BM25 and both encoders' dense runs, a third each.
    assert record["first_stage"]["encoder"] == TRANSFER_ENCODER == "e5-small,use-m3"
    assert record["first_stage"]["hybrid_weight"] == pytest.approx(2 / 3)
    assert record["first_stage"]["k1"] == 1.5 and record["first_stage"]["b"] == 0.75
    assert {entry["name"] for entry in record["dev"]} == {"tiny-a", "tiny-b"}
    # The mixture holds both collections' documents under their own ids.
    corpus = (models / "mixture" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in corpus]
    assert len(ids) == 24 and ids[:2] == ["tiny-a:ls.1", "tiny-b:ls.1"]


def test_a_second_train_retrains_nothing(trained: tuple[Path, Path]) -> None:
    root, models = trained
    made = (models / "knrm.pt").stat().st_mtime_ns
    result = run_clir("pipeline", "train", "--output", "models", "--collection", "tiny-a",
                      "--collection", "tiny-b", cwd=root)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "reusing" in result.stderr
    assert "training" not in result.stderr and "indexing" not in result.stderr
    assert "searching" not in result.stderr
    assert (models / "knrm.pt").stat().st_mtime_ns == made


def test_search_is_the_stages_run_by_hand(trained: tuple[Path, Path], tmp_path: Path) -> None:
    root, models = trained
    collection, index, topics = target_with_vectors(tmp_path)
    result = run_clir("pipeline", "search", "--models", str(models), "--index", str(index),
                      "--topics", str(topics), "--output", str(tmp_path / "run.trec"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["index", "run.trec", "target"]

    hybrid = tmp_path / "hybrid.trec"
    # --hybrid with several encoders shares w equally at its default n/(n + 1), the
    # pipeline's, as its help says.
    assert "several joined by commas" in " ".join(run_clir("search", "--help").stdout.split())
    hand = stages_by_hand(models, collection, index, topics, hybrid, "--encoder",
                          TRANSFER_ENCODER)  # fmt: skip
    assert (tmp_path / "run.trec").read_bytes() == hand.read_bytes()
    at_half = tmp_path / "half.trec"
    step = run_clir("search", "--hybrid", "--translate", "dict", "--index", str(index),
                    "--topics", str(topics), "--output", str(at_half), "--tag", "pipeline",
                    "--encoder", TRANSFER_ENCODER, "--hybrid-weight", "0.5")  # fmt: skip
    assert step.returncode == 0, step.stderr
    assert at_half.read_bytes() != hybrid.read_bytes()


def test_search_on_a_ray_cluster_writes_the_same_run(
    trained: tuple[Path, Path], tmp_path: Path
) -> None:
    """``--ray local:2``: the hybrid first stage's chunks and K-NRM's scoring actors on the
    cluster, the run byte for byte the one-process run; ``--workers`` alone is refused."""
    pytest.importorskip("ray")
    root, models = trained
    collection, index, topics = target_with_vectors(tmp_path)
    search = ("pipeline", "search", "--models", str(models), "--index", str(index), "--topics",
              str(topics), "--output")  # fmt: skip
    here = run_clir(*search, str(tmp_path / "here.trec"))
    there = run_clir(*search, str(tmp_path / "there.trec"), "--ray", "local:2", "--workers", "2")
    assert here.returncode == 0 and there.returncode == 0, here.stderr + there.stderr
    assert (tmp_path / "there.trec").read_bytes() == (tmp_path / "here.trec").read_bytes()
    refused = run_clir(*search, str(tmp_path / "w.trec"), "--workers", "2")
    assert_one_line_error(refused, "--workers is for --ray", status=2)
    assert not (tmp_path / "w.trec").exists()


def test_an_index_without_the_vectors_is_refused_with_the_command_that_adds_them(
    trained: tuple[Path, Path], tmp_path: Path
) -> None:
    _, models = trained
    index = tmp_path / "index"
    assert run_clir("index", "--collection", str(TINY_FR), "--index", str(index)).returncode == 0
    result = run_clir("pipeline", "search", "--models", str(models), "--index", str(index),
                      "--topics", str(TINY_FR / "topics.dev.tsv"), "--output",
                      str(tmp_path / "run.trec"))  # fmt: skip
    assert_one_line_error(result, "needs e5-small,use-m3's vectors", "clir index",
                          "--dense e5-small,use-m3")  # fmt: skip
    assert not (tmp_path / "run.trec").exists()


def test_a_first_stage_of_one_encoder_is_the_stages_run_by_hand(
    trained: tuple[Path, Path], tmp_path: Path
) -> None:
    """A pipeline whose first stage fuses BM25 with e5-small's dense run alone (``clir
    pipeline train --encoder e5-small``): its run is ``clir search --hybrid`` at the weight
    e5-small declares (0.6), reranked; an index without e5-small's vectors is refused with
    the command that adds them."""
    _, models = trained
    copy = tmp_path / "models"
    shutil.copytree(models, copy, ignore=shutil.ignore_patterns("mixture", "runs"))
    record = json.loads((copy / "pipeline.json").read_text(encoding="utf-8"))
    weight = default_hybrid_weight("e5-small")
    assert weight == 0.6
    record["first_stage"].update(encoder="e5-small", hybrid_weight=weight)
    (copy / "pipeline.json").write_text(json.dumps(record), encoding="utf-8")
    collection, index, topics = target_with_vectors(tmp_path, "use-m3")  # use-m3's alone
    search = ("pipeline", "search", "--models", str(copy), "--index", str(index), "--topics",
              str(topics), "--output", str(tmp_path / "run.trec"))  # fmt: skip
    refused = run_clir(*search)
    assert_one_line_error(refused, "needs e5-small's vectors", "has use-m3's",
                          f"--index {index} --dense e5-small")  # fmt: skip
    added = run_clir("index", "--collection", str(collection), "--index", str(index),
                     "--dense", "e5-small")  # fmt: skip
    assert added.returncode == 0, added.stderr
    result = run_clir(*search)
    assert result.returncode == 0, result.stderr
    # A bare --hybrid searches the vectors the index got last (e5-small's) at their weight.
    assert "0.6 with e5-small" in " ".join(run_clir("search", "--help").stdout.split())
    hand = stages_by_hand(copy, collection, index, topics, tmp_path / "hybrid.trec")
    assert (tmp_path / "run.trec").read_bytes() == hand.read_bytes()


@pytest.mark.parametrize("damage", ["version", "model"])
def test_a_pipeline_of_another_version_or_without_its_model_is_refused(
    trained: tuple[Path, Path], fr_index: Path, tmp_path: Path, damage: str
) -> None:
    _, models = trained
    copy = tmp_path / "models"
    shutil.copytree(models, copy, ignore=shutil.ignore_patterns("mixture", "runs"))
    if damage == "version":
        record = json.loads((copy / "pipeline.json").read_text(encoding="utf-8"))
        record["toolkit_version"] = "0.0.1"
        (copy / "pipeline.json").write_text(json.dumps(record), encoding="utf-8")
        expected = "written by clir_toolkit 0.0.1"
    else:
        (copy / "knrm.pt").unlink()
        expected = "knrm.pt: missing"
    result = run_clir("pipeline", "search", "--models", str(copy), "--index", str(fr_index),
                      "--topics", str(TINY_FR / "topics.dev.tsv"), "--output",
                      str(tmp_path / "run.trec"))  # fmt: skip
    assert_one_line_error(result, expected, "clir pipeline train")


def test_in_domain_the_towers_carry_the_dense_run_and_dev_chooses_lambda(tmp_path: Path) -> None:
    collection, index, topics = target_with_vectors(tmp_path, IN_DOMAIN_ENCODER)
    models = tmp_path / "models"
    trained = run_clir("pipeline", "train", "--in-domain", "--output", str(models),
                       "--collection", str(collection), "--workdir", str(tmp_path))  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    record = json.loads((models / "pipeline.json").read_text(encoding="utf-8"))
    assert record["first_stage"]["towers"] == "tuned-use-m3.pt"
    assert record["reranking"]["chosen_on"] == "dev of target"
    weight = record["reranking"]["interpolate"]
    assert f"(K-NRM, λ {weight:g}, chosen on dev of target)" in trained.stdout
    # Trained again with nothing changed: the dev run and its λ scores are reused too.
    again = run_clir("pipeline", "train", "--in-domain", "--output", str(models),
                     "--collection", str(collection), "--workdir", str(tmp_path))  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "reusing the dev run" in again.stderr and "choosing λ" not in again.stderr
    assert json.loads((models / "pipeline.json").read_text(encoding="utf-8")) == record

    run = tmp_path / "run.trec"
    result = run_clir("pipeline", "search", "--models", str(models), "--index", str(index),
                      "--topics", str(topics), "--output", str(run))  # fmt: skip
    assert result.returncode == 0, result.stderr
    hybrid = tmp_path / "hybrid.trec"
    by_hand = [
        ("search", "--hybrid", "--translate", "dict", "--index", str(index), "--topics",
         str(topics), "--output", str(hybrid), "--tag", "pipeline", "--model",
         str(models / "tuned-use-m3.pt")),
        ("rerank", "score", "--model", str(models / "knrm.pt"), "--collection", str(collection),
         "--topics", str(topics), "--run", str(hybrid), "--output", str(tmp_path / "hand.trec"),
         "--depth", "100", "--interpolate", str(weight), "--tag", "pipeline"),
    ]  # fmt: skip
    for command in by_hand:
        step = run_clir(*command)
        assert step.returncode == 0, step.stderr
    assert run.read_bytes() == (tmp_path / "hand.trec").read_bytes()


def test_in_domain_needs_one_collection_with_a_dev_split(tmp_path: Path) -> None:
    two = [collection_with_train_split(tmp_path, name) for name in ("tiny-a", "tiny-b")]
    result = run_clir("pipeline", "train", "--in-domain", "--output", str(tmp_path / "models"),
                      "--collection", str(two[0]), "--encoder", "use-m3,e5-small")  # fmt: skip
    assert_one_line_error(result, "one encoder's towers", status=2)
    assert not (tmp_path / "models").exists()
    result = run_clir("pipeline", "train", "--in-domain", "--output", str(tmp_path / "models"),
                      "--collection", str(two[0]), "--collection", str(two[1]))  # fmt: skip
    assert_one_line_error(result, "give one --collection", status=2)
    (two[0] / "topics.dev.tsv").unlink()
    result = run_clir("pipeline", "train", "--in-domain", "--output", str(tmp_path / "models"),
                      "--collection", str(two[0]), "--workdir", str(tmp_path))  # fmt: skip
    assert_one_line_error(result, "no dev split")
    assert not (tmp_path / "indexes").exists()


def test_training_on_a_collection_without_a_train_split_is_refused(tmp_path: Path) -> None:
    result = run_clir("pipeline", "train", "--output", str(tmp_path / "models"),
                      "--collection", str(TINY_FR), "--workdir", str(tmp_path))  # fmt: skip
    assert_one_line_error(result, "no train split")
    assert not (tmp_path / "indexes").exists()


def test_the_pyterrier_transformer_ranks_as_clir_pipeline_search(
    trained: tuple[Path, Path], tmp_path: Path
) -> None:
    pytest.importorskip("pyterrier")
    import pandas as pd

    from clir_toolkit.formats import read_run, read_topics
    from clir_toolkit.integrations.pyterrier import ClirPipeline

    _, models = trained
    collection = collection_with_train_split(tmp_path, "target")
    index, topics = tmp_path / "index", collection / "topics.dev.tsv"
    assert run_clir("index", "--collection", str(collection), "--index", str(index),
                    "--dense", TRANSFER_ENCODER).returncode == 0  # fmt: skip
    run = tmp_path / "run.trec"
    assert run_clir("pipeline", "search", "--models", str(models), "--index", str(index),
                    "--topics", str(topics), "--output", str(run)).returncode == 0  # fmt: skip
    frame = pd.DataFrame([{"qid": t.qid, "query": t.query} for t in read_topics(topics)])
    results = ClirPipeline(models, index).transform(frame)
    expected = [(row.qid, row.docid, row.rank - 1, row.score) for row in read_run(run)]
    got = zip(results["qid"], results["docno"], results["rank"], results["score"], strict=True)
    assert sorted(got) == sorted(expected)
