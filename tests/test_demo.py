"""``clir demo``: baselines and the neural reranker side by side, on the tiny collection."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.conftest import TINY_FR, run_clir


def tiny_with_train_split(tmp_path: Path) -> Path:
    """tiny-fr with a train split (its dev queries again: the plumbing, not a benchmark)."""
    collection = tmp_path / "tiny-fr"
    shutil.copytree(TINY_FR, collection)
    shutil.copy(collection / "topics.dev.tsv", collection / "topics.train.tsv")
    shutil.copy(collection / "qrels.dev.txt", collection / "qrels.train.txt")
    manifest = json.loads((collection / "manifest.json").read_text(encoding="utf-8"))
    manifest["splits"] = ["train", "dev"]
    (collection / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return collection


def demo(collection: Path, workdir: Path, *options: str) -> tuple[str, str]:
    result = run_clir("demo", "--collection", str(collection), "--workdir", str(workdir), *options)
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


def test_demo_trains_a_reranker_and_evaluates_it_beside_the_baselines(tmp_path: Path) -> None:
    collection = tiny_with_train_split(tmp_path)
    workdir = tmp_path / "work"
    report, progress = demo(collection, workdir, "--quiet")
    assert progress == ""  # --quiet: nothing on stderr
    rows = [
        line.split()[0]
        for line in report.splitlines()
        if line.startswith(("bm25", "tuned", "hybrid", "knrm"))
        and not line.split()[0].endswith(":")
    ]
    # One table against the untranslated run, then each stage against the run before it and
    # the pipeline against the zero-shot hybrid.
    assert rows == [
        "bm25-untranslated",
        "bm25-dict",
        "hybrid",
        "tuned-hybrid",
        "knrm+tuned-hybrid",
        "bm25-human",
        "hybrid",
        "tuned-hybrid",
        "tuned-hybrid",
        "knrm+tuned-hybrid",
        "hybrid",
        "knrm+tuned-hybrid",
    ]
    assert "Each stage against the run before it" in report
    assert re.search(r"\(λ (0\.[1-9]|1), chosen on dev\)", report)  # K-NRM's λ, from the grid
    assert "nDCG@10" in report and "paired t-test" in report
    # The demo is `clir pipeline train --in-domain` and `clir pipeline search`: its models are
    # a pipeline directory's.
    pipeline = workdir / "models" / "tiny-fr" / "pipeline"
    record = json.loads((pipeline / "pipeline.json").read_text(encoding="utf-8"))
    assert record["first_stage"]["towers"] == "tuned-use-m3.pt"
    assert record["reranking"]["chosen_on"] == "dev of tiny-fr"
    assert f"λ {record['reranking']['interpolate']:g}, chosen on dev" in report
    models = [pipeline / name for name in ("tuned-use-m3.pt", "knrm.pt")]
    assert all(model.is_file() for model in models)

    # A second demo on the same inputs reuses the models, vectors and the dev run λ was chosen
    # on, instead of making them.
    made = [model.stat().st_mtime_ns for model in models]
    again, progress = demo(collection, workdir)
    assert again == report
    assert progress.count("reusing") == 3 and "training the reranker" not in progress
    assert "reusing the dev run" in progress and "choosing λ" not in progress
    assert "adding the" not in progress and "indexing" not in progress
    assert [model.stat().st_mtime_ns for model in models] == made


def test_demo_without_a_train_split_shows_the_baselines_and_says_why(tmp_path: Path) -> None:
    report, progress = demo(TINY_FR, tmp_path)
    assert "bm25-human" in report and "tuned-hybrid" not in report and "knrm" not in report
    assert "\nhybrid " in report  # the pretrained encoder's vectors need no training
    assert "no train and dev splits" in progress
