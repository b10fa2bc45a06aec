"""Rerank recipes end to end on the hand-made French collection: runs, models, RESULTS.md.

The tiny collection has only a dev split; copied into a workspace, its dev files stand in for
the train and test splits too (the reranker is trained and tested on the same six topics,
which is enough to check the plumbing, not the method).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from clir_toolkit.errors import FormatError
from clir_toolkit.experiments import rerank_runner
from clir_toolkit.experiments.context import Workspace
from clir_toolkit.experiments.kept_scores import read_scores
from clir_toolkit.experiments.recipe import load_recipe
from clir_toolkit.experiments.rerank_table import sweep_recipes
from clir_toolkit.experiments.runner import run_recipes
from clir_toolkit.experiments.search_runner import RUN_CODE
from clir_toolkit.formats import read_run, read_topics
from clir_toolkit.freshness import is_fresh
from clir_toolkit.rerank.word.model_file import load_model
from tests.conftest import TINY_FR, workspace_with_three_splits

FIRST_STAGE = """
name = "bm25-human"
group = "first stage"
languages = ["fr"]
topics = "human"
baseline = true
[search]
k1 = 1.2
b = 0.75
"""

TRAINING = """
first_stage = "bm25-human"
epochs = 2
dim = 16
negatives = 6
max_doc_len = 40
depth = 12
device = "cpu"
"""

DUAL = f"""
name = "dual-sosl"
title = "dual encoder, SOSL"
group = "loss"
kind = "rerank"
languages = ["fr"]
topics = "human"
[rerank]
{TRAINING}
model = "dual"
loss = "sosl"
epsilon = 0.5
thresholds = [0.1, 0.6]
interpolate = [0.0, 0.5, 1.0]
figure = "figure-3-densities"
"""

SWEEP = f"""
name = "eps"
group = "epsilon"
kind = "rerank"
languages = ["fr"]
topics = "human"
[rerank]
{TRAINING}
model = "dual"
figure = "figure-4-epsilon"
[rerank.sweep]
epsilon = [0.0, 1.0]
"""

KNRM = f"""
name = "knrm-mono"
group = "knrm"
kind = "rerank"
languages = ["fr"]
topics = "human"
[rerank]
{TRAINING}
model = "knrm"
tie_embeddings = true
"""

REUSE = """
name = "knrm-mono-again"
group = "knrm"
kind = "rerank"
languages = ["fr"]
topics = "human"
[rerank]
first_stage = "bm25-human"
model_from = "knrm-mono"
depth = 12
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A workspace whose fr collection is the tiny one, its dev split copied to train/test."""
    return workspace_with_three_splits(tmp_path)


def test_rerank_table_is_validated(tmp_path: Path) -> None:
    head = 'name = "x"\nkind = "rerank"\n'
    with pytest.raises(FormatError, match="needs \\[rerank\\] first_stage"):
        load_recipe(write(tmp_path / "a.toml", head))
    with pytest.raises(FormatError, match="unknown \\[rerank\\] keys colour"):
        load_recipe(write(tmp_path / "b.toml", head + '[rerank]\nfirst_stage = "s"\ncolour = 1\n'))
    with pytest.raises(FormatError, match="epochs: expected an integer at least 1, found 0"):
        load_recipe(write(tmp_path / "c.toml", head + '[rerank]\nfirst_stage = "s"\nepochs = 0\n'))
    with pytest.raises(FormatError, match='model: expected one of "knrm", "dual"'):
        load_recipe(write(tmp_path / "d.toml", head + '[rerank]\nfirst_stage = "s"\nmodel = "x"\n'))
    with pytest.raises(FormatError, match="cannot be set with model_from"):
        load_recipe(
            write(
                tmp_path / "e.toml",
                head + '[rerank]\nfirst_stage = "s"\nmodel_from = "m"\nepochs = 3\n',
            )
        )
    with pytest.raises(FormatError, match="lists of one length"):
        load_recipe(
            write(
                tmp_path / "f.toml",
                head
                + '[rerank]\nfirst_stage = "s"\n[rerank.sweep]\nepsilon = [0, 1]\ndepth = [5]\n',
            )
        )
    with pytest.raises(
        FormatError, match=r"\[rerank.sweep\] epsilon: expected a number at least 0"
    ):
        load_recipe(
            write(
                tmp_path / "g.toml",
                head + '[rerank]\nfirst_stage = "s"\n[rerank.sweep]\nepsilon = [1, -1]\n',
            )
        )


RERANK_HEAD = 'name = "x"\nkind = "rerank"\n[rerank]\nfirst_stage = "s"\n'


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('epochs = "3"\n', '[rerank] epochs: expected an integer, found "3"'),
        ("batch_size = 10.5\n", "[rerank] batch_size: expected an integer, found 10.5"),
        ("negatives = 0\n", "[rerank] negatives: expected an integer at least 1, found 0"),
        ("lr = 0\n", "[rerank] lr: expected a number greater than 0"),
        ("lr = inf\n", "[rerank] lr: expected a finite number, found inf"),
        ("seed = -1\n", "[rerank] seed: expected an integer between 0 and 4294967295, found -1"),
        ('tie_embeddings = "yes"\n', "[rerank] tie_embeddings: expected true or false"),
        ("interpolate = [0.5, 2]\n", "[rerank] interpolate: expected a number between 0 and 1"),
        ('interpolate = [0.5, "x"]\n', '[rerank] interpolate: expected a number, found "x"'),
        ("thresholds = [0.7, 0.2]\n", "[rerank] thresholds: expected a list of 2 numbers in"),
        ("thresholds = [0.2]\n", "[rerank] thresholds: expected a list of 2 numbers"),
        ('device = "gpu"\n', "[rerank] device: expected a device: auto, cpu, cuda or cuda:N"),
        ('figure = "../fig"\n', "[rerank] figure: expected a name made of letters"),
        ('train_first_stage = "../../s"\n', "[rerank] train_first_stage: expected a name"),
        ('translate = "none"\n', '[rerank] translate: expected one of "dict", "mt", "embed"'),
        ("embed_top = 0\n", "[rerank] embed_top: expected an integer at least 1"),
        ('[rerank.sweep]\nepsilon = [1, "x"]\n', "[rerank.sweep] epsilon: expected a number"),
        ("[rerank.sweep]\nthresholds = [[0.2, 0.7], 0.1]\n", "[rerank.sweep] thresholds"),
        ("epsilon = 1\n[rerank.sweep]\nepsilon = [0, 1]\n", "epsilon also set in [rerank]"),
        ("sweep = 5\n", "[rerank.sweep] must be a table of lists"),
    ],
)
def test_a_rerank_value_of_the_wrong_type_or_range_is_one_format_error(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = write(tmp_path / "x.toml", RERANK_HEAD + text)
    with pytest.raises(FormatError) as caught:
        load_recipe(path)
    assert str(caught.value).startswith(f"{path}: ") and problem in str(caught.value)


def test_a_rerank_option_is_checked_as_training_checks_it(tmp_path: Path) -> None:
    """The [rerank] keys are TrainConfig's and score_run's own declarations, renamed."""
    from clir_toolkit.experiments.tables import RERANK_PARAMS, TRAINING_KEYS
    from clir_toolkit.rerank.candidates import SCORE_PARAMS
    from clir_toolkit.rerank.word.train_config import TRAIN_PARAMS

    for key, field in TRAINING_KEYS.items():
        assert RERANK_PARAMS[key] == dataclasses.replace(TRAIN_PARAMS[field], name=key)
    assert RERANK_PARAMS["depth"] == SCORE_PARAMS["depth"]
    assert RERANK_PARAMS["thresholds"].flag == "--sosl-thresholds"


def test_a_sweep_of_pairs_names_its_points_with_safe_file_names(tmp_path: Path) -> None:
    recipe = load_recipe(
        write(
            tmp_path / "t.toml",
            RERANK_HEAD + "[rerank.sweep]\nthresholds = [[0.1, 0.6], [-0.2, 0.7]]\n",
        )
    )
    assert [p.name for p, _ in sweep_recipes(recipe)] == ["x-0.1_0.6", "x--0.2_0.7"]


def test_a_sweep_makes_one_recipe_per_point(tmp_path: Path) -> None:
    recipe = load_recipe(write(tmp_path / "eps.toml", SWEEP))
    points = sweep_recipes(recipe)
    assert [p.name for p, _ in points] == ["eps-0", "eps-1"]
    assert [values for _, values in points] == [{"epsilon": 0.0}, {"epsilon": 1.0}]
    assert points[1][0].rerank["epsilon"] == 1.0 and "sweep" not in points[1][0].rerank


@pytest.mark.java
def test_rerank_recipes_write_runs_models_and_results(workspace: Workspace, tmp_path: Path) -> None:
    recipes = tmp_path / "rerank"
    recipes.mkdir()
    paths = [
        write(recipes / "bm25-human.toml", FIRST_STAGE),
        write(recipes / "dual-sosl.toml", DUAL),
        write(recipes / "eps.toml", SWEEP),
        write(recipes / "knrm-mono-again.toml", REUSE),  # before the recipe that owns the model
        write(recipes / "knrm-mono.toml", KNRM),
    ]
    write(recipes / "NOTES.md", "## Notes\n\nHand-written.\n")
    results = run_recipes(paths, workspace, quiet=True)

    # Runs: the first stage of every split, the reranked dev and test runs of each row.
    first = load_recipe(paths[0])
    for split in ("train", "dev", "test"):
        assert is_fresh(
            workspace.run(first, "fr", split),
            _key_of(workspace.run(first, "fr", split)),
            RUN_CODE,
        )
    for name in ("dual-sosl", "eps-0", "eps-1", "knrm-mono", "knrm-mono-again"):
        for split in ("dev", "test"):
            run = read_run(workspace.runs / "manpages-en-fr" / split / f"{name}.trec")
            assert {r.tag for r in run} == {name}
            assert len({r.qid for r in run}) == 6

    # Models: one per trained row; epsilon and the reused model as asked.
    models = workspace.models / "manpages-en-fr"
    assert sorted(p.name for p in models.glob("*.pt")) == [
        "dual-sosl.pt",
        "eps-0.pt",
        "eps-1.pt",
        "knrm-mono.pt",
    ]
    assert load_model(models / "dual-sosl.pt").model.epsilon == 0.5
    assert load_model(models / "eps-0.pt").model.epsilon == 0.0
    assert not list(models.glob("*.ckpt"))

    text = results.read_text(encoding="utf-8")
    assert "## Reranked runs against their own first stage (nDCG@10)" in text
    rows = [line for line in text.splitlines() if line.startswith("| dual-sosl | bm25-human |")]
    assert len(rows) == 2  # dev and test
    assert "→" in rows[0] and rows[0].count("|") == 6
    assert "| knrm-mono-again | fr | knrm, hinge, tied |" in text
    assert "| eps-1 | fr | dual avg, sosl, ε=1 |" in text
    assert "fr: epoch=" in text and "λ=" in text  # chosen on dev
    for figure in ("figure-3-densities-fr.png", "figure-4-epsilon-fr.png"):
        assert f"]({figure})" in text
        assert (recipes / figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert text.rstrip().endswith("Hand-written.")

    # A second run reuses the first stage and the models: the same runs come out.
    before = (workspace.runs / "manpages-en-fr" / "test" / "knrm-mono.trec").read_bytes()
    stamp = (models / "knrm-mono.pt").stat().st_mtime_ns
    second = run_recipes(paths[3:], workspace, quiet=True)  # the first stage is no row now
    assert (models / "knrm-mono.pt").stat().st_mtime_ns == stamp
    after = (workspace.runs / "manpages-en-fr" / "test" / "knrm-mono.trec").read_bytes()
    assert before == after
    again = second.read_text(encoding="utf-8")
    assert "| knrm-mono | bm25-human |" in again  # still tested against its first stage
    assert "| bm25-human (baseline) |" not in again

    # --force trains again, once for the two recipes that share the model; same runs.
    run_recipes(paths[3:], workspace, quiet=True, force=True)
    assert (models / "knrm-mono.pt").stat().st_mtime_ns != stamp
    forced = (workspace.runs / "manpages-en-fr" / "test" / "knrm-mono.trec").read_bytes()
    assert forced == before


def test_scores_are_kept_shared_by_recipes_of_one_model_and_reused(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipes = tmp_path / "rerank"
    recipes.mkdir()
    paths = [write(recipes / "bm25-human.toml", FIRST_STAGE),
             write(recipes / "knrm-mono.toml", KNRM),
             write(recipes / "knrm-mono-again.toml", REUSE)]  # fmt: skip
    calls: list[int] = []
    scorer = rerank_runner._word_level_scores

    def counted(*args: object) -> dict[tuple[str, str], float]:
        calls.append(1)
        return scorer(*args)

    monkeypatch.setattr(rerank_runner, "_word_level_scores", counted)
    run_recipes(paths, workspace, quiet=True)
    # knrm-mono-again scores the same candidates with knrm-mono's model: dev and test are
    # scored once, for the first of the two.
    assert len(calls) == 2
    for split in ("dev", "test"):
        kept = list((workspace.runs / "manpages-en-fr" / split / "scores").glob("*.tsv"))
        assert len(kept) == 1
        first = read_run(workspace.runs / "manpages-en-fr" / split / "bm25-human.trec")
        assert set(read_scores(kept[0])) == {(r.qid, r.docid) for r in first if r.rank <= 12}
    runs = {name: (workspace.runs / "manpages-en-fr" / "test" / f"{name}.trec").read_bytes()
            for name in ("knrm-mono", "knrm-mono-again")}  # fmt: skip

    # Nothing changed: a second run scores nothing and writes nothing (the same files, not
    # files of the same bytes: a workspace that cannot be written works as well).
    inodes = {name: (workspace.runs / "manpages-en-fr" / "test" / f"{name}.trec").stat().st_ino
              for name in runs}  # fmt: skip
    run_recipes(paths[1:], workspace, quiet=True)
    assert len(calls) == 2
    for name, before in runs.items():
        path = workspace.runs / "manpages-en-fr" / "test" / f"{name}.trec"
        assert path.read_bytes() == before and path.stat().st_ino == inodes[name]

    # A kept file that changed is not fresh: the pairs are scored again, with the same run.
    (kept[0]).write_text("q\td\t0.5\n", encoding="utf-8")
    run_recipes(paths[1:2], workspace, quiet=True)
    assert len(calls) == 3
    assert set(read_scores(kept[0])) == {(r.qid, r.docid) for r in first if r.rank <= 12}
    after = (workspace.runs / "manpages-en-fr" / "test" / "knrm-mono.trec").read_bytes()
    assert after == runs["knrm-mono"]

    # Edited with its sidecar's sha256 recomputed (two columns, a pair missing, bytes that
    # are not text), or made a FIFO: scored again, neither trusted, nor an internal error,
    # nor a wait.
    import json
    import os

    from clir_toolkit.files import sha256_file

    lines = kept[0].read_text(encoding="utf-8").splitlines(keepends=True)
    for damage in ("two columns", "a pair missing", "binary", "fifo"):
        if damage == "fifo":
            kept[0].unlink()
            os.mkfifo(kept[0])
        else:
            kept[0].write_bytes({"two columns": b"q\t0.5\n",
                                 "a pair missing": "".join(lines[1:]).encode(),
                                 "binary": b"\xff\xfe\x00"}[damage])  # fmt: skip
            sidecar = kept[0].with_name(kept[0].name + ".json")
            record = json.loads(sidecar.read_text(encoding="utf-8"))
            record["sha256"] = sha256_file(kept[0])
            sidecar.write_text(json.dumps(record), encoding="utf-8")
        run_recipes(paths[1:2], workspace, quiet=True)
        assert set(read_scores(kept[0]) or ()) == {(r.qid, r.docid) for r in first
                                                   if r.rank <= 12}, damage  # fmt: skip
        after = (workspace.runs / "manpages-en-fr" / "test" / "knrm-mono.trec").read_bytes()
        assert after == runs["knrm-mono"], damage


def _key_of(path: Path) -> str:
    import json

    return str(json.loads(path.with_name(path.name + ".json").read_text())["key"])


ENGLISH_FIRST_STAGE = """
name = "bm25-en"
group = "first stage"
languages = ["fr"]
baseline = true
[search]
k1 = 1.2
b = 0.75
"""

TUNED = """
name = "tuned"
group = "reranking"
kind = "rerank"
languages = ["fr"]
[rerank]
first_stage = "bm25-en"
pretrained = "use-m3"
epochs = 1
negatives = 6
depth = 12
interpolate = [0.0, 1.0]
"""


def test_a_recipe_fine_tunes_a_pretrained_encoder(workspace: Workspace, tmp_path: Path) -> None:
    recipes = tmp_path / "rerank"
    recipes.mkdir()
    paths = [write(recipes / "bm25-en.toml", ENGLISH_FIRST_STAGE),
             write(recipes / "tuned.toml", TUNED)]  # fmt: skip
    results = run_recipes(paths, workspace, quiet=True)
    for split in ("dev", "test"):
        run = read_run(workspace.runs / "manpages-en-fr" / split / "tuned.trec")
        first = read_run(workspace.runs / "manpages-en-fr" / split / "bm25-en.trec")
        assert {r.tag for r in run} == {"tuned"}
        assert sorted((r.qid, r.docid) for r in run) == sorted((r.qid, r.docid) for r in first)
    model = workspace.models / "manpages-en-fr" / "tuned.pt"
    import torch

    assert torch.load(model, weights_only=True)["model_type"] == "tuned"
    text = results.read_text(encoding="utf-8")
    assert "| tuned | fr | use-m3 fine-tuned, sosl, ε=0.1 |" in text
    assert "λ=" in text
    made = model.stat().st_mtime_ns
    run_recipes(paths, workspace, quiet=True)  # fresh: the model is reused
    assert model.stat().st_mtime_ns == made


def test_a_model_made_by_other_code_is_made_again(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Models, translated queries and train-split runs are reused only when the toolkit's
    code is the code that made them (a changed model file must not reuse old models)."""
    from clir_toolkit import freshness

    recipes = tmp_path / "rerank"
    recipes.mkdir()
    paths = [write(recipes / "bm25-en.toml", ENGLISH_FIRST_STAGE),
             write(recipes / "tuned.toml", TUNED)]  # fmt: skip
    run_recipes(paths, workspace, quiet=True)
    model = workspace.models / "manpages-en-fr" / "tuned.pt"
    made = model.stat().st_mtime_ns
    run_recipes(paths, workspace, quiet=True)
    assert model.stat().st_mtime_ns == made  # same code: reused
    monkeypatch.setattr(freshness, "code_fingerprint", lambda modules=None, package=None: "0" * 64)
    run_recipes(paths, workspace, quiet=True)
    assert model.stat().st_mtime_ns != made  # other code: trained again
    assert freshness.read_sidecar(model)["code"] == "0" * 64


def test_word_level_keys_do_not_apply_to_a_fine_tuned_encoder(
    workspace: Workspace, tmp_path: Path
) -> None:
    recipes = tmp_path / "rerank"
    recipes.mkdir()
    paths = [write(recipes / "bm25-en.toml", ENGLISH_FIRST_STAGE),
             write(recipes / "tuned.toml", TUNED.replace("epochs = 1", "dim = 16"))]  # fmt: skip
    with pytest.raises(FormatError, match="dim does not apply with pretrained"):
        run_recipes(paths, workspace, quiet=True)


def test_a_sweep_over_training_queries_trains_on_the_first_n(
    workspace: Workspace, tmp_path: Path
) -> None:
    import torch

    recipes = tmp_path / "rerank"
    recipes.mkdir()
    swept = TUNED.replace('name = "tuned"', 'name = "size"') + (
        'figure = "size"\n[rerank.sweep]\ntrain_queries = [2, 4]\n'
    )
    paths = [write(recipes / "bm25-en.toml", ENGLISH_FIRST_STAGE),
             write(recipes / "size.toml", swept)]  # fmt: skip
    results = run_recipes(paths, workspace, quiet=True)
    for count in (2, 4):
        model = workspace.models / "manpages-en-fr" / f"size-{count}.pt"
        assert torch.load(model, weights_only=True)["training"]["train_queries"] == count
    assert (recipes / "size-fr.png").is_file()
    assert "| training queries (log scale) |" in results.read_text(encoding="utf-8")
    word_level = TUNED.replace('pretrained = "use-m3"', 'model = "dual"').replace(
        "epochs = 1", "epochs = 1\ntrain_queries = 2"
    )
    write(recipes / "tuned.toml", word_level)
    run_recipes([paths[0], recipes / "tuned.toml"], workspace, quiet=True)
    trained_on = torch.load(workspace.models / "manpages-en-fr" / "tuned.pt", weights_only=True)
    topics = read_topics(trained_on["training"]["topics"])  # a word-level model: the first 2
    assert [t.qid for t in topics] == [t.qid for t in read_topics(TINY_FR / "topics.dev.tsv")][:2]


def test_the_thesis_training_data_variants_change_the_queries_the_model_reads(
    workspace: Workspace, tmp_path: Path
) -> None:
    """Tables 6.5 and 6.9 of the thesis: ``query_case`` lower-cases the train, dev and test
    queries the model reads (the first stage stays the same); ``train_max_relevant`` leaves
    out the training queries with more relevant documents, ``train_drop_at_random`` as many
    at random."""
    import torch

    from clir_toolkit.experiments.topic_variants import relevant_counts

    recipes = tmp_path / "rerank"
    recipes.mkdir()
    collection = workspace.collection("manpages", "fr", "standard")
    with (collection / "qrels.train.txt").open("a", encoding="utf-8") as qrels:
        qrels.write("q1 0 cp.1 1\nq2 0 ls.1 1\n")  # two queries with longer lists
    counts = relevant_counts(collection / "qrels.train.txt")
    threshold = 2
    ambiguous = {qid for qid, count in counts.items() if count > threshold}
    assert ambiguous == {"q1", "q2"}
    knrm = (
        KNRM.replace('topics = "human"', 'topics = "english"')
        .replace('first_stage = "bm25-human"', 'first_stage = "bm25-en"')
        .replace("tie_embeddings = true", 'query_case = "lower"')
    )
    variants = [
        knrm.replace('name = "knrm-mono"', 'name = "lower"'),
        knrm.replace('name = "knrm-mono"', 'name = "clean"').replace(
            'query_case = "lower"', f"train_max_relevant = {threshold}"
        ),
        knrm.replace('name = "knrm-mono"', 'name = "control"').replace(
            'query_case = "lower"',
            f"train_max_relevant = {threshold}\ntrain_drop_at_random = true",
        ),
    ]
    paths = [write(recipes / "bm25-en.toml", ENGLISH_FIRST_STAGE)]
    paths += [write(recipes / f"v{i}.toml", text) for i, text in enumerate(variants)]
    for split in ("train", "dev", "test"):  # queries as a person types them: capitalised
        topics = collection / f"topics.{split}.tsv"
        write(topics, "".join(f"{t.qid}\t{t.query.capitalize()}\n" for t in read_topics(topics)))
    english = {t.qid: t.query for t in read_topics(collection / "topics.dev.tsv")}
    run_recipes(paths, workspace, quiet=True)
    models = workspace.models / "manpages-en-fr"

    def trained_on(name: str) -> dict[str, str]:
        training = torch.load(models / f"{name}.pt", weights_only=True)["training"]
        return {t.qid: t.query for t in read_topics(training["topics"])}

    assert trained_on("lower") == {qid: query.lower() for qid, query in english.items()}
    assert any(query != query.lower() for query in english.values())
    tested = read_topics(workspace.runs / "manpages-en-fr" / "test" / "lower.queries.tsv")
    assert {t.qid: t.query for t in tested} == trained_on("lower")
    assert set(trained_on("clean")) == set(english) - ambiguous
    control = set(trained_on("control"))
    assert len(control) == len(english) - len(ambiguous) and control != set(english)
    for name in ("lower", "clean", "control"):  # one shared first stage, reranked
        run = read_run(workspace.runs / "manpages-en-fr" / "test" / f"{name}.trec")
        first = read_run(workspace.runs / "manpages-en-fr" / "test" / "bm25-en.trec")
        assert sorted((r.qid, r.docid) for r in run) == sorted((r.qid, r.docid) for r in first)


def _without_times(text: str) -> str:
    """RESULTS.md without what a clock decides: the total time and the training times."""
    lines = [line for line in text.splitlines() if not line.startswith("Took ")]
    return "\n".join(re.sub(r"\| [0-9.]+ (s|min)( \(reused\))? \|$", "| T |", line)
                     for line in lines)  # fmt: skip


def test_recipes_on_a_two_worker_ray_cluster_make_the_same_runs_and_results(
    tmp_path: Path,
) -> None:
    """clir run --ray local:2: search recipes, rerank recipes (a sweep, a model reused by
    another recipe) as parallel jobs; every run file and RESULTS.md's tables are those of
    one process."""
    pytest.importorskip("ray")
    from clir_toolkit.distributed.cluster import ClusterSpec

    made = {}
    for where, cluster in (("one", None), ("ray", ClusterSpec(local_cpus=2))):
        root = tmp_path / where
        space = workspace_with_three_splits(root)
        recipes = root / "rerank"
        recipes.mkdir()
        paths = [
            write(recipes / "bm25-human.toml", FIRST_STAGE),
            write(recipes / "eps.toml", SWEEP),
            write(recipes / "knrm-mono-again.toml", REUSE),
            write(recipes / "knrm-mono.toml", KNRM),
        ]
        results = run_recipes(paths, space, quiet=True, cluster=cluster)
        made[where] = (
            {p.relative_to(space.runs): p.read_bytes() for p in space.runs.rglob("*.trec")},
            _without_times(results.read_text(encoding="utf-8").replace(str(root), "ROOT")),
        )
    assert made["ray"][0] == made["one"][0] and made["one"][0]
    assert made["ray"][1] == made["one"][1]


TRANSFERRED = REUSE.replace('"knrm-mono-again"', '"knrm-from-ddtp"').replace(
    "depth = 12", 'train_collection = "ddtp"\ntrain_variant = "hard"\ndepth = 12'
)


def test_a_model_trained_on_another_collection_reranks_this_one(
    workspace: Workspace, tmp_path: Path
) -> None:
    """``train_collection``/``train_variant``: the model of ``model_from`` is trained on
    another family's collection (its first stage searched there), then reranks this one.
    Here the other collection is a copy of this one, so the seeded model is the in-domain
    model and the runs are the same; what differs is where the model and its runs live."""
    import shutil

    shutil.copytree(
        workspace.collection("manpages", "fr", "standard"),
        workspace.collection("ddtp", "fr", "hard"),
    )
    recipes = tmp_path / "transfer"
    recipes.mkdir()
    paths = [
        write(recipes / "bm25-human.toml", FIRST_STAGE),
        write(recipes / "knrm-mono.toml", KNRM),
        write(recipes / "knrm-from-ddtp.toml", TRANSFERRED),
    ]
    results = run_recipes(paths, workspace, quiet=True)

    assert (workspace.models / "ddtp-en-fr-hard" / "knrm-mono.pt").is_file()
    assert (workspace.runs / "ddtp-en-fr-hard" / "train" / "bm25-human.trec").is_file()
    here = workspace.runs / "manpages-en-fr" / "test"
    assert (here / "knrm-from-ddtp.trec").read_text().replace("knrm-from-ddtp", "x") == (
        (here / "knrm-mono.trec").read_text().replace("knrm-mono", "x")
    )
    assert "human fr queries of ddtp-en-fr-hard" in results.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ('train_language = "xx"', 'train_language = "xx": collection = "manpages" has no'),
        ('train_collection = "ddtp"\ntrain_variant = "soft"', "variant"),
        ('train_collection = "nowhere"', "train_collection"),
    ],
)
def test_a_training_collection_that_does_not_exist_is_one_line(
    workspace: Workspace, tmp_path: Path, keys: str, message: str
) -> None:
    recipes = tmp_path / "transfer"
    recipes.mkdir()
    paths = [
        write(recipes / "bm25-human.toml", FIRST_STAGE),
        write(recipes / "knrm-mono.toml", KNRM),
        write(recipes / "t.toml", TRANSFERRED.replace(
            'train_collection = "ddtp"\ntrain_variant = "hard"', keys)),
    ]  # fmt: skip
    with pytest.raises(FormatError, match=re.escape(message)):
        run_recipes(paths, workspace, quiet=True)
