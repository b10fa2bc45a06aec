"""The PyTerrier adapters in real PyTerrier pipelines over the hand-made French collection.

Each stage is compared with the command line's function it stands for: the translator with
``build_queries``, the retriever with ``search_to_run``, the reranker with ``score_run`` and
``train_reranker``, ``pt.Experiment`` with ``evaluate_runs``. PyTerrier is imported before
the toolkit starts its JVM (at collection time), and no Terrier Java is used.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pt = pytest.importorskip("pyterrier")

import pandas as pd  # noqa: E402

import clir_toolkit as ct  # noqa: E402
from clir_toolkit.errors import ClirError, UsageError  # noqa: E402
from clir_toolkit.integrations.pyterrier import (  # noqa: E402
    STRUCTURED_COLUMN,
    ClirReranker,
    ClirRetriever,
    ClirTranslator,
    query_text,
)
from tests.conftest import TINY_FR  # noqa: E402

pytestmark = pytest.mark.java

TOPICS = TINY_FR / "topics.dev.tsv"
QRELS = TINY_FR / "qrels.dev.txt"
OPTIONS = ct.TranslationOptions(translate="dict")
HITS = 10
#: A tiny K-NRM, one epoch on the CPU: seconds on the twelve pages.
TRAIN: dict[str, Any] = {"model": "knrm", "epochs": 1, "dim": 16, "negatives_per_query": 10,
                         "batch_size": 16, "max_doc_len": 40, "device": "cpu"}  # fmt: skip


@pytest.fixture(scope="module")
def topics() -> pd.DataFrame:
    return pd.DataFrame([{"qid": t.qid, "query": t.query} for t in ct.read_topics(TOPICS)])


@pytest.fixture(scope="module")
def qrels() -> pd.DataFrame:
    return pd.DataFrame(
        [{"qid": q.qid, "docno": q.docid, "label": q.relevance} for q in ct.read_qrels(QRELS)]
    )


@pytest.fixture(scope="module")
def run(fr_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The command line's run for dictionary translation and Pirkola's structure."""
    queries = ct.build_queries(ct.read_topics(TOPICS), OPTIONS, "fr")
    path = tmp_path_factory.mktemp("runs") / "dict-syn.trec"
    ct.search_to_run(fr_index, queries, path, hits=HITS, structure="syn", progress=False)
    return path


@pytest.fixture(scope="module")
def model(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reranker trained by ``train_reranker`` on the run's candidates."""
    directory = tmp_path_factory.mktemp("model")
    config = ct.TrainConfig(collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=run,
                            output=directory / "knrm.pt", cache_dir=directory / "cache",
                            verbose=False, **TRAIN)  # fmt: skip
    return Path(ct.train_reranker(config).output)


@pytest.fixture(scope="module")
def retriever(fr_index: Path) -> Any:
    with ClirRetriever(fr_index, structure="syn", hits=HITS) as opened:
        yield opened


def _rankings(frame: pd.DataFrame) -> dict[str, list[tuple[str, int, float]]]:
    """Each query's (docno, rank, score), best first, ranks counted from 1 as in a run."""
    rankings: dict[str, list[tuple[str, int, float]]] = {}
    for row in frame.sort_values(["qid", "rank"]).itertuples():
        rankings.setdefault(row.qid, []).append((row.docno, row.rank + 1, row.score))
    return rankings


def _run_rankings(path: Path) -> dict[str, list[tuple[str, int, float]]]:
    rankings: dict[str, list[tuple[str, int, float]]] = {}
    for row in sorted(ct.read_run(path), key=lambda row: (row.qid, row.rank)):
        rankings.setdefault(row.qid, []).append((row.docid, row.rank, row.score))
    return rankings


def test_the_translator_keeps_the_english_in_query_0(topics: pd.DataFrame) -> None:
    out = ClirTranslator(OPTIONS, "fr").transform(topics)
    assert list(out["qid"]) == list(topics["qid"])
    assert list(out["query_0"]) == list(topics["query"])
    expected = ct.build_queries(ct.read_topics(TOPICS), OPTIONS, "fr")
    assert list(out[STRUCTURED_COLUMN]) == expected
    assert list(out["query"]) == [query_text(query) for query in expected]
    # The query is French now: "list directory contents" → liste, contenu, with the English
    # word kept beside its translations as clir search keeps it by default (--keep-source 0.5);
    # with keep_source 0 only the translations are left.
    assert {"liste", "contenu", "list"} <= set(out.loc[out["qid"] == "q1", "query"].item().split())
    french = ClirTranslator(replace(OPTIONS, keep_source=0.0), "fr").transform(topics)
    assert {"liste", "contenu"} <= set(french.loc[french["qid"] == "q1", "query"].item().split())
    assert "list" not in french.loc[french["qid"] == "q1", "query"].item().split()


def test_translator_then_retriever_ranks_as_search_to_run(
    topics: pd.DataFrame, retriever: Any, run: Path
) -> None:
    results = (ClirTranslator(OPTIONS, "fr") >> retriever).transform(topics)
    assert {"qid", "query", "query_0", "docno", "score", "rank"} <= set(results.columns)
    assert _rankings(results) == _run_rankings(run)
    # The structure is what was searched: the translation's plain text ranks otherwise.
    translated = ClirTranslator(OPTIONS, "fr").transform(topics)
    as_text = retriever.transform(translated.drop(columns=[STRUCTURED_COLUMN]))
    assert _rankings(as_text) != _rankings(results)


def test_a_query_rewritten_after_translation_is_searched_as_written(
    topics: pd.DataFrame, retriever: Any
) -> None:
    rewrite = pt.apply.query(lambda row: "liste fichiers")
    results = (ClirTranslator(OPTIONS, "fr") >> rewrite >> retriever).transform(topics)
    plain = retriever.transform(topics.assign(query="liste fichiers"))
    assert _rankings(results) == _rankings(plain)


def test_the_reranker_scores_as_score_run(
    topics: pd.DataFrame, retriever: Any, run: Path, model: Path, tmp_path: Path
) -> None:
    options: dict[str, Any] = {"depth": 5, "device": "cpu", "cache_dir": tmp_path / "cache"}
    reranker = ClirReranker(model, TINY_FR, **options)
    results = (ClirTranslator(OPTIONS, "fr") >> retriever >> reranker).transform(topics)
    expected = tmp_path / "reranked.trec"
    ct.score_run(model, TINY_FR, TOPICS, run, expected, verbose=False, **options)
    assert _rankings(results) == _run_rankings(expected)
    assert _rankings(results) != _run_rankings(run)  # the order did change
    # Rows come back as PyTerrier lists results: queries in order, each best first.
    assert list(dict.fromkeys(results["qid"])) == list(topics["qid"])
    for _, ranks in results.groupby("qid", sort=False)["rank"]:
        assert list(ranks) == list(range(len(ranks)))


def test_fitting_the_pipeline_trains_the_model_train_reranker_trains(
    topics: pd.DataFrame, qrels: pd.DataFrame, retriever: Any, model: Path, run: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    fitted = tmp_path / "fitted.pt"
    reranker = ClirReranker(fitted, TINY_FR, device="cpu", cache_dir=tmp_path / "cache",
                            train=TRAIN)  # fmt: skip
    pipeline = ClirTranslator(OPTIONS, "fr") >> retriever >> reranker
    pipeline.fit(topics, qrels)
    assert fitted.is_file()
    scored = {}
    for name, path in (("fitted", fitted), ("trained", model)):
        scored[name] = tmp_path / f"{name}.trec"
        ct.score_run(path, TINY_FR, TOPICS, run, scored[name], device="cpu", verbose=False,
                     cache_dir=tmp_path / "cache")  # fmt: skip
    assert _run_rankings(scored["fitted"]) == _run_rankings(scored["trained"])


def test_fitting_without_a_model_name_fine_tunes_the_encoder_as_train_tuned(
    topics: pd.DataFrame, qrels: pd.DataFrame, retriever: Any, run: Path, tmp_path: Path
) -> None:
    fitted, tuned = tmp_path / "fitted.pt", tmp_path / "tuned.pt"
    reranker = ClirReranker(fitted, TINY_FR, cache_dir=tmp_path / "cache", train={"epochs": 1})
    (ClirTranslator(OPTIONS, "fr") >> retriever >> reranker).fit(topics, qrels)
    ct.train_tuned(ct.TunedConfig(collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=run,
                                  output=tuned, epochs=1, cache_dir=tmp_path / "cache",
                                  verbose=False))  # fmt: skip
    scored = {}
    for path in (fitted, tuned):
        scored[path] = tmp_path / f"{path.stem}.trec"
        ct.score_run(path, TINY_FR, TOPICS, run, scored[path], verbose=False,
                     cache_dir=tmp_path / "cache")  # fmt: skip
    assert _run_rankings(scored[fitted]) == _run_rankings(scored[tuned])
    assert _run_rankings(scored[fitted]) != _run_rankings(run)


def test_experiment_evaluates_the_pipelines_as_evaluate_runs(
    topics: pd.DataFrame, qrels: pd.DataFrame, retriever: Any, run: Path, model: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    translator = ClirTranslator(OPTIONS, "fr")
    reranker = ClirReranker(model, TINY_FR, device="cpu", cache_dir=tmp_path / "cache")
    table = pt.Experiment(
        [translator >> retriever, translator >> retriever >> reranker],
        topics,
        qrels,
        eval_metrics=["map", "ndcg_cut_10"],
        names=["bm25", "bm25+knrm"],
        plan="tree",  # the two pipelines share translator >> retriever: run it once
    )
    assert list(table["name"]) == ["bm25", "bm25+knrm"]
    reranked = tmp_path / "reranked.trec"
    ct.score_run(model, TINY_FR, TOPICS, run, reranked, device="cpu", verbose=False,
                 cache_dir=tmp_path / "cache")  # fmt: skip
    expected = ct.evaluate_runs(QRELS, [run, reranked], "AP nDCG@10").to_dataframe()
    for row, (name, values) in zip(table.itertuples(), expected.iterrows(), strict=True):
        assert row.map == pytest.approx(values["AP"]), name
        assert row.ndcg_cut_10 == pytest.approx(values["nDCG@10"]), name


def test_a_directory_that_is_not_an_index_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ClirError, match="not built by 'clir index'") as error:
        ClirRetriever(tmp_path)
    assert "\n" not in str(error.value)
    with pytest.raises(ClirError, match="no such index"):
        ClirRetriever(tmp_path / "missing")


def test_bad_options_and_frames_are_one_line_usage_errors(
    fr_index: Path, retriever: Any, topics: pd.DataFrame
) -> None:
    # The options are refused by clir search's own rule, in its words.
    with pytest.raises(UsageError, match=r'--structure must be one of "and", "or", "syn" '
                       r'\(got "pirkola"\)'):  # fmt: skip
        ClirRetriever(fr_index, structure="pirkola")
    with pytest.raises(UsageError, match=r"--hits must be at least 1 \(got 0\)"):
        ClirRetriever(fr_index, hits=0)
    with pytest.raises(UsageError, match=r"--hits must be an integer \(got true\)"):
        ClirRetriever(fr_index, hits=True)
    with pytest.raises(UsageError, match="needs the column.s. query; the DataFrame has: qid"):
        retriever.transform(topics[["qid"]])
    with pytest.raises(UsageError, match="topic q1 appears twice"):
        ClirTranslator(OPTIONS, "fr").transform(pd.concat([topics, topics.head(1)]))
    with pytest.raises(UsageError, match="unknown training option 'epoch'"):
        ClirReranker("model.pt", TINY_FR, train={"epoch": 1})


def test_without_pyterrier_the_import_says_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['pyterrier'] = None  # as if it were not installed\n"
        "from clir_toolkit.errors import ResourceError\n"
        "try:\n"
        "    import clir_toolkit.integrations.pyterrier\n"
        "except ResourceError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=Path(__file__).parents[1])  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "pip install 'clir_toolkit[pyterrier]'" in result.stdout
