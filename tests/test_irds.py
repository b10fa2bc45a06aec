"""The ir_datasets adapter, offline: tiny hand-written files laid out as ir_datasets caches them.

``tests/fixtures/irds`` mirrors an ``IR_DATASETS_HOME``: WikiCLIR French
(``wikiclir/source/wiki-clir/...``, the unpacked archive) and HC4 Chinese (topic files, the
document file and the judgements). ir_datasets reads ``IR_DATASETS_HOME`` when it is
imported, so every build runs in a fresh Python process with its own copy of the cache. A
proxy that only counts connections stands in for the network: a build that tried to
download would connect to it (and a subprocess timeout guards against hangs).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from clir_toolkit.collection.irds import build_irds_collection
from clir_toolkit.collection.irds.datasets import FAMILIES, hashed_split, resolve
from clir_toolkit.errors import FormatError, OutputError, UsageError
from clir_toolkit.experiments.context import Workspace
from clir_toolkit.experiments.recipe import load_recipe
from clir_toolkit.files import sha256_file
from clir_toolkit.formats import iter_corpus, read_qrels, read_topics
from tests.conftest import FIXTURES, assert_one_line_error, run_clir

# Not imported here: ir_datasets fixes its cache directory when imported, and every build
# below runs in its own process with its own cache.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ir_datasets") is None,
    reason="ir_datasets is not installed (pip install ir_datasets)",
)

IRDS_CACHE = FIXTURES / "irds"
REPO = Path(__file__).resolve().parent.parent

# What the command line will do: build, print the summary, or print one error line.
BUILD_SCRIPT = """
import sys
from pathlib import Path
from clir_toolkit.errors import ClirError
from clir_toolkit.collection.irds import build_irds_collection, format_summary
dataset, out, *options = sys.argv[1:]
limit = next((int(o.split("=")[1]) for o in options if o.startswith("--limit-docs=")), None)
try:
    summary = build_irds_collection(
        dataset, Path(out), progress=False, limit_docs=limit, download="--download" in options
    )
except ClirError as exc:
    print(f"clir: error: {exc}", file=sys.stderr)
    sys.exit(1)
print(format_summary(summary))
"""


# ---------------------------------------------------------------------------------------------
# Helpers: a private ir_datasets cache, a proxy that counts connection attempts
# ---------------------------------------------------------------------------------------------


class CountingProxy:
    """A TCP server on localhost that accepts connections, counts them and hangs up."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self.running = False
        self.thread.join()
        self.server.close()


@pytest.fixture
def proxy() -> Iterator[CountingProxy]:
    trap = CountingProxy()
    yield trap
    trap.close()


def offline_env(home: Path, proxy_url: str) -> dict[str, str]:
    """The environment of a build: its own ir_datasets cache, every request sent to ``proxy``."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "all_proxy")}
    env["IR_DATASETS_HOME"] = str(home)
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        env[name] = proxy_url
    env["IR_DATASETS_DL_TRIES"] = "1"  # when downloads are allowed: fail after one attempt
    env["IR_DATASETS_DL_TIMEOUT"] = "5"
    return env


def build(
    home: Path, dataset: str, out: Path, proxy_url: str, *options: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BUILD_SCRIPT, dataset, str(out), *options],
        capture_output=True,
        text=True,
        env=offline_env(home, proxy_url),
        cwd=REPO,
        timeout=120,
    )


def cache_copy(tmp_path: Path, *families: str) -> Path:
    """A private IR_DATASETS_HOME holding the fixture files of the given families."""
    home = tmp_path / "ir_datasets_home"
    home.mkdir()
    for family in families:
        shutil.copytree(IRDS_CACHE / family, home / family)
    return home


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@dataclass
class Built:
    out: Path
    stdout: str
    manifest: dict


@pytest.fixture(scope="module")
def wikiclir_fr(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("wikiclir")
    trap = CountingProxy()
    try:
        result = build(cache_copy(tmp, "wikiclir"), "wikiclir/fr", tmp / "out", trap.url)
    finally:
        trap.close()
    assert result.returncode == 0, result.stderr
    assert trap.connections == 0
    manifest = json.loads((tmp / "out" / "manifest.json").read_text(encoding="utf-8"))
    return Built(tmp / "out", result.stdout, manifest)


@pytest.fixture(scope="module")
def hc4_zh(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("hc4")
    trap = CountingProxy()
    try:
        result = build(cache_copy(tmp, "hc4"), "hc4/zh", tmp / "out", trap.url)
    finally:
        trap.close()
    assert result.returncode == 0, result.stderr
    assert trap.connections == 0
    manifest = json.loads((tmp / "out" / "manifest.json").read_text(encoding="utf-8"))
    return Built(tmp / "out", result.stdout, manifest)


# ---------------------------------------------------------------------------------------------
# WikiCLIR: the smooth-learning paper's data
# ---------------------------------------------------------------------------------------------


def test_wikiclir_writes_every_file_of_a_collection(wikiclir_fr: Built) -> None:
    assert sorted(p.name for p in wikiclir_fr.out.iterdir()) == [
        "corpus.jsonl",
        "manifest.json",
        "qrels.dev.txt",
        "qrels.test.txt",
        "qrels.train.txt",
        "topics.dev.tsv",
        "topics.test.tsv",
        "topics.train.tsv",
    ]  # no human topics and no second qrels: WikiCLIR has neither


def test_wikiclir_corpus_joins_title_and_text(wikiclir_fr: Built) -> None:
    records = [json.loads(line) for line in lines(wikiclir_fr.out / "corpus.jsonl")]
    assert len(records) == 10
    assert records[0] == {
        "id": "5001",
        "contents": "Paris\nParis est la capitale de la France et sa plus grande ville.",
    }
    assert records[6]["contents"].startswith("Échecs\n")  # UTF-8 kept, not escaped
    assert "Échecs" in (wikiclir_fr.out / "corpus.jsonl").read_text(encoding="utf-8")
    assert [doc.id for doc in iter_corpus(wikiclir_fr.out / "corpus.jsonl")][-1] == "5010"


def test_wikiclir_queries_are_first_sentences_split_by_hash(wikiclir_fr: Built) -> None:
    expected = {
        "train": [("101", "is a staple food prepared from a dough of flour and water."),
                  ("103", "is a human-powered vehicle with two wheels attached to a frame.")],
        "dev": [("106", "is a rupture in the crust of a planet through which lava escapes."),
                ("107", "is a board game for two players played on a checkered board.")],
        "test": [("100", "is the capital and largest city of France."),
                 ("108", "is liquid water in the form of droplets that fall from clouds.")],
    }  # fmt: skip
    for split, topics in expected.items():
        read = read_topics(wikiclir_fr.out / f"topics.{split}.tsv")
        assert [(t.qid, t.query) for t in read] == topics
    # Query 109 has no French judgement: ir_datasets leaves it out of wikiclir/fr.
    everything = "".join(p.read_text() for p in wikiclir_fr.out.glob("topics.*.tsv"))
    assert "109" not in everything


def test_hashed_split_is_sha256_of_the_qid_60_20_20() -> None:
    def by_hand(qid: str) -> str:
        bucket = int(hashlib.sha256(qid.encode()).hexdigest()[:16], 16) % 100
        return "train" if bucket < 60 else "dev" if bucket < 80 else "test"

    qids = [str(n) for n in range(3000)] + ["EN-0001", "q/7", "日本"]
    assigned = [hashed_split(qid) for qid in qids]
    assert assigned == [by_hand(qid) for qid in qids]
    shares = {split: assigned.count(split) / len(qids) for split in ("train", "dev", "test")}
    assert 0.57 < shares["train"] < 0.63
    assert 0.17 < shares["dev"] < 0.23
    assert 0.17 < shares["test"] < 0.23


def test_wikiclir_qrels_keep_grades_2_and_1(wikiclir_fr: Built) -> None:
    assert lines(wikiclir_fr.out / "qrels.test.txt") == [
        "100 0 5001 2",
        "100 0 5002 1",
        "108 0 5008 2",
        "108 0 5009 1",
    ]
    assert [
        (q.qid, q.docid, q.relevance) for q in read_qrels(wikiclir_fr.out / "qrels.dev.txt")
    ] == [
        ("106", "5006", 2),
        ("107", "5007", 2),
        ("107", "5099", 1),
    ]
    assert lines(wikiclir_fr.out / "qrels.train.txt") == [
        "101 0 5003 2",
        "101 0 5004 1",
        "103 0 5005 2",
    ]


def test_wikiclir_manifest(wikiclir_fr: Built) -> None:
    manifest = wikiclir_fr.manifest
    assert manifest["query_lang"] == "en"
    assert manifest["doc_lang"] == "fr"
    assert manifest["splits"] == ["train", "dev", "test"]
    irds, family = manifest["sources"]
    assert irds["name"] == "ir_datasets"
    assert irds["version"] == importlib.metadata.version("ir_datasets")
    assert irds["datasets"] == ["wikiclir/fr"]
    assert family["name"] == "wikiclir"
    assert "Sasaki" in family["citation"]
    assert "CC BY-SA" in family["licence"]
    assert "sha256" in manifest["build"]["splits"]
    assert manifest["build"]["query_field"] == "first_sent"
    counts = manifest["counts"]
    assert counts["documents"] == 10
    assert counts["topics"] == {"train": 2, "dev": 2, "test": 2}
    assert counts["topics_human"] == {}
    assert counts["qrels"] == {"train": 3, "dev": 3, "test": 4}
    assert counts["qrels_by_grade"]["dev"] == {"2": 2, "1": 1}
    assert counts["qrels_docs_not_in_corpus"] == 1  # 5099 is judged but not a document
    assert counts["qrels_without_topic"] == 0
    on_disk = {p.name for p in wikiclir_fr.out.iterdir()} - {"manifest.json"}
    assert set(manifest["files"]) == on_disk
    for name, digest in manifest["files"].items():
        assert sha256_file(wikiclir_fr.out / name) == digest


def test_wikiclir_summary_on_stdout(wikiclir_fr: Built) -> None:
    assert wikiclir_fr.stdout.splitlines()[0].startswith("wikiclir/fr (en→fr)")
    assert "documents: 10" in wikiclir_fr.stdout
    assert "test: 2 topics, 4 judgements" in wikiclir_fr.stdout
    assert "1 judgements name documents that are not in the corpus" in wikiclir_fr.stdout


# ---------------------------------------------------------------------------------------------
# HC4: the dataset's own splits, human translations, grades 0/1/3
# ---------------------------------------------------------------------------------------------


def test_hc4_topics_and_human_translations(hc4_zh: Built) -> None:
    out = hc4_zh.out
    assert lines(out / "topics.train.tsv") == ["201\tpanda conservation"]
    assert lines(out / "topics.dev.tsv") == ["202\thigh speed rail"]  # 203: Russian only
    assert lines(out / "topics.test.tsv") == ["204\ttea harvest", "205\tflood warning"]
    # The human translation, not the machine one ("熊猫 保存").
    assert lines(out / "topics-human.train.tsv") == ["201\t大熊猫保护"]
    assert lines(out / "topics-human.dev.tsv") == ["202\t高速铁路"]
    assert lines(out / "topics-human.test.tsv") == ["204\t茶叶采摘", "205\t洪水预警"]


def test_hc4_grades_3_1_0_become_2_1_0_and_the_originals_are_kept(hc4_zh: Built) -> None:
    out = hc4_zh.out
    assert lines(out / "qrels.train.txt") == ["201 0 d-01 2", "201 0 d-02 1", "201 0 d-07 0"]
    assert lines(out / "qrels.dev.txt") == ["202 0 d-03 2", "202 0 d-04 1"]
    assert lines(out / "qrels.test.txt") == [
        "204 0 d-05 2",
        "205 0 d-06 2",
        "205 0 d-07 0",
        "205 0 d-08 1",
    ]
    assert lines(out / "qrels-original.train.txt") == [
        "201 0 d-01 3",
        "201 0 d-02 1",
        "201 0 d-07 0",
    ]
    assert lines(out / "qrels-original.test.txt")[:2] == ["204 0 d-05 3", "205 0 d-06 3"]
    build_notes = hc4_zh.manifest["build"]
    assert build_notes["grade_map"] == {"3": 2, "1": 1, "0": 0}
    assert "qrels-original" in build_notes["grades"]


def test_hc4_corpus_and_manifest(hc4_zh: Built) -> None:
    records = [json.loads(line) for line in lines(hc4_zh.out / "corpus.jsonl")]
    assert [r["id"] for r in records] == [f"d-0{n}" for n in range(1, 8)]
    assert records[0]["contents"] == "大熊猫保护区\n四川的保护区里生活着许多大熊猫。"
    assert records[6]["contents"] == "市场上的蔬菜价格上涨了。"  # no title: the text alone
    assert set(records[0]) == {"id", "contents"}
    manifest = hc4_zh.manifest
    assert (manifest["query_lang"], manifest["doc_lang"]) == ("en", "zh")
    assert manifest["sources"][0]["datasets"] == [
        "hc4/zh",
        "hc4/zh/dev",
        "hc4/zh/test",
        "hc4/zh/train",
    ]
    assert "Lawrie" in manifest["sources"][1]["citation"]
    counts = manifest["counts"]
    assert counts["topics"] == {"train": 1, "dev": 1, "test": 2}
    assert counts["topics_human"] == {"train": 1, "dev": 1, "test": 2}
    assert counts["qrels_by_grade"]["test"] == {"2": 2, "1": 1, "0": 1}
    assert counts["qrels_docs_not_in_corpus"] == 1  # d-08
    for name, digest in manifest["files"].items():
        assert sha256_file(hc4_zh.out / name) == digest
    assert len(manifest["files"]) == len(list(hc4_zh.out.iterdir())) - 1


def test_hc4_one_split(tmp_path: Path, proxy: CountingProxy) -> None:
    result = build(cache_copy(tmp_path, "hc4"), "hc4/zh/dev", tmp_path / "dev", proxy.url)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "dev").iterdir()) == [
        "corpus.jsonl",
        "manifest.json",
        "qrels-original.dev.txt",
        "qrels.dev.txt",
        "topics-human.dev.tsv",
        "topics.dev.tsv",
    ]
    manifest = json.loads((tmp_path / "dev" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["splits"] == ["dev"]
    assert manifest["counts"]["documents"] == 7


# ---------------------------------------------------------------------------------------------
# Determinism, sampling, atomic replacement
# ---------------------------------------------------------------------------------------------


def test_rebuild_is_byte_identical(tmp_path: Path, proxy: CountingProxy, hc4_zh: Built) -> None:
    home = cache_copy(tmp_path, "hc4")
    result = build(home, "hc4/zh", tmp_path / "again", proxy.url)
    assert result.returncode == 0, result.stderr
    assert files_of(tmp_path / "again") == files_of(hc4_zh.out)


def test_rebuild_in_place_replaces_the_collection(tmp_path: Path, proxy: CountingProxy) -> None:
    home = cache_copy(tmp_path, "wikiclir")
    out = tmp_path / "wikiclir-fr"
    assert build(home, "wikiclir/fr", out, proxy.url, "--limit-docs=2").returncode == 0
    first = files_of(out)
    assert len(lines(out / "corpus.jsonl")) == 2
    result = build(home, "wikiclir/fr", out, proxy.url)
    assert result.returncode == 0, result.stderr
    assert len(lines(out / "corpus.jsonl")) == 10
    assert files_of(out) != first
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no leftovers


def test_limit_docs_keeps_the_first_documents(tmp_path: Path, proxy: CountingProxy) -> None:
    home = cache_copy(tmp_path, "hc4")
    result = build(home, "hc4/zh", tmp_path / "sample", proxy.url, "--limit-docs=3")
    assert result.returncode == 0, result.stderr
    ids = [json.loads(line)["id"] for line in lines(tmp_path / "sample" / "corpus.jsonl")]
    assert ids == ["d-01", "d-02", "d-03"]
    manifest = json.loads((tmp_path / "sample" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["build"]["limit_docs"] == 3
    assert manifest["counts"]["documents"] == 3
    # Judged documents beyond the first three: d-04, d-05, d-06, d-07 twice, d-08.
    assert manifest["counts"]["qrels_docs_not_in_corpus"] == 6
    assert "limited to the first 3" in result.stdout


def test_limit_docs_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="positive"):
        build_irds_collection("hc4/zh", tmp_path / "x", limit_docs=0)


# ---------------------------------------------------------------------------------------------
# Errors: one line, no download, nothing half-written
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["msmarco-passage", "wikiclir/xx", "hc4/de", "hc4/zh/eval"])
def test_unknown_dataset_lists_the_families(name: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as error:
        build_irds_collection(name, tmp_path / "x")
    message = str(error.value)
    assert "\n" not in message
    assert repr(name) in message
    for family in FAMILIES:
        assert family.usage in message
    assert not (tmp_path / "x").exists()


def test_registry_resolves_each_family() -> None:
    plan = resolve("wikiclir/it")
    assert (plan.family, plan.doc_lang, plan.docs_id) == ("wikiclir", "it", "wikiclir/it")
    assert plan.sources[0].split is None  # split by hash
    plan = resolve("hc4/fa")
    assert [(s.split, s.queries_id) for s in plan.sources] == [
        ("train", "hc4/fa/train"),
        ("dev", "hc4/fa/dev"),
        ("test", "hc4/fa/test"),
    ]
    plan = resolve("neuclir/1/ru")
    assert [(s.split, s.queries_id) for s in plan.sources] == [
        ("dev", "neuclir/1/ru/trec-2022"),
        ("test", "neuclir/1/ru/trec-2023"),
    ]
    plan = resolve("neuclir/1/zh/hc4-filtered")
    assert plan.docs_id == "neuclir/1/zh/hc4-filtered"
    assert [(s.split, s.queries_id, s.qrels_id) for s in plan.sources] == [
        ("dev", "hc4/zh/dev", "neuclir/1/zh/hc4-filtered"),
        ("test", "hc4/zh/test", "neuclir/1/zh/hc4-filtered"),
    ]


def test_every_planned_id_exists_in_ir_datasets(tmp_path: Path) -> None:
    names = [f"wikiclir/{lang}" for lang in ("fr", "it", "sw", "tl", "en-simple")]
    names += [f"hc4/{lang}{split}" for lang in ("fa", "ru", "zh") for split in ("", "/dev")]
    names += [f"neuclir/1/{lang}{s}" for lang in ("fa", "zh") for s in ("", "/hc4-filtered")]
    ids = sorted(
        {resolve(name).docs_id for name in names}
        | {i for name in names for source in resolve(name).sources for i in source[1:]}
    )
    code = "import sys, ir_datasets\nfor i in sys.argv[1:]: ir_datasets.load(i)"
    env = {**os.environ, "IR_DATASETS_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code, *ids], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr  # a KeyError names an unknown id
    assert "neuclir/1/zh/trec-2023" in ids and "hc4/zh/train" in ids


def test_absent_dataset_is_one_line_and_no_download(tmp_path: Path, proxy: CountingProxy) -> None:
    home = tmp_path / "empty_home"
    home.mkdir()
    result = build(home, "wikiclir/fr", tmp_path / "out", proxy.url)
    assert_one_line_error(result, "wikiclir/fr", "not in ir_datasets' cache", "IR_DATASETS_HOME")
    assert str(home / "wikiclir") in result.stderr
    assert "wiki-clir.tar.gz" in result.stderr  # what ir_datasets would have fetched
    assert proxy.connections == 0
    assert not (tmp_path / "out").exists()


def test_missing_hc4_documents_leave_the_old_collection(
    tmp_path: Path, proxy: CountingProxy, hc4_zh: Built
) -> None:
    home = cache_copy(tmp_path, "hc4")
    (home / "hc4" / "zho" / "hc4_docs.jsonl").unlink()
    out = tmp_path / "hc4-zh"
    shutil.copytree(hc4_zh.out, out)
    before = files_of(out)
    result = build(home, "hc4/zh", out, proxy.url)
    assert_one_line_error(result, "hc4/zh", str(home / "hc4" / "zho" / "hc4_docs.jsonl"))
    assert "https://github.com/hltcoe/HC4" in result.stderr  # how HC4's documents are made
    assert proxy.connections == 0
    assert files_of(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hc4-zh", "ir_datasets_home"]


def test_missing_topic_file_is_not_downloaded(tmp_path: Path, proxy: CountingProxy) -> None:
    home = cache_copy(tmp_path, "hc4")
    (home / "hc4" / "test.topics.v1-0.jsonl").unlink()
    result = build(home, "hc4/zh", tmp_path / "out", proxy.url)
    assert_one_line_error(result, "hc4/zh/test", "test.topics.v1-0.jsonl", "--download")
    assert proxy.connections == 0


def test_download_option_lets_ir_datasets_try_the_network(
    tmp_path: Path, proxy: CountingProxy
) -> None:
    """The same build with downloads allowed does reach the (trap) network: the guard works."""
    home = cache_copy(tmp_path, "hc4")
    (home / "hc4" / "test.topics.v1-0.jsonl").unlink()
    result = build(home, "hc4/zh", tmp_path / "out", proxy.url, "--download")
    assert_one_line_error(result, "hc4/zh/test", "ir_datasets could not download the topics")
    assert proxy.connections >= 1
    assert not (tmp_path / "out").exists()


def test_corrupt_cache_file_is_one_line(tmp_path: Path, proxy: CountingProxy) -> None:
    home = cache_copy(tmp_path, "wikiclir")
    rel = home / "wikiclir" / "source" / "wiki-clir" / "french" / "en2fr.rel"
    rel.write_text("100 5001\n", encoding="utf-8")
    result = build(home, "wikiclir/fr", tmp_path / "out", proxy.url)
    # wikiclir/fr reads its judgements to choose its topics: the first read reports it.
    assert_one_line_error(result, "wikiclir/fr", "expected 3 columns, got 2", "corrupt")


def test_refuses_to_replace_a_directory_that_is_not_a_collection(tmp_path: Path) -> None:
    out = tmp_path / "data"
    out.mkdir()
    (out / "thesis.tex").write_text("precious", encoding="utf-8")
    with pytest.raises(OutputError, match="not a collection directory"):
        build_irds_collection("hc4/zh", out)
    assert (out / "thesis.tex").read_text(encoding="utf-8") == "precious"


def test_importing_the_module_does_not_import_ir_datasets() -> None:
    code = "import sys, clir_toolkit.collection.irds; print('ir_datasets' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert result.stdout.strip() == "False", result.stderr


# ---------------------------------------------------------------------------------------------
# The command line (once `clir collection build irds` is wired)
# ---------------------------------------------------------------------------------------------


def test_command_line(tmp_path: Path, proxy: CountingProxy) -> None:
    if run_clir("collection", "build", "irds", "--help").returncode != 0:
        pytest.skip("`clir collection build irds` is not wired into cli.py yet")
    env = offline_env(cache_copy(tmp_path, "wikiclir"), proxy.url)
    out = tmp_path / "wikiclir-fr"
    result = run_clir(
        "collection", "build", "irds", "--dataset", "wikiclir/fr", "--out", str(out), env=env
    )
    assert result.returncode == 0, result.stderr
    assert "wikiclir/fr" in result.stdout
    assert len(lines(out / "corpus.jsonl")) == 10
    result = run_clir(
        "collection", "build", "irds", "--dataset", "trec-covid", "--out", str(out), env=env
    )
    assert_one_line_error(result, "unknown dataset", status=2)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_clir(
        "collection", "build", "irds", "--dataset", "wikiclir/fr", "--out", str(tmp_path / "o"),
        env=offline_env(empty, proxy.url),
    )  # fmt: skip
    assert_one_line_error(result, "IR_DATASETS_HOME")
    assert proxy.connections == 0


def test_each_dataset_family_is_a_collection_family_of_recipes_and_the_command_line(
    tmp_path: Path, proxy: CountingProxy, hc4_zh: Built
) -> None:
    env = offline_env(cache_copy(tmp_path, "hc4"), proxy.url)
    out = tmp_path / "hc4-en-zh"
    result = run_clir("collection", "build", "hc4", "--lang", "zh", "--out", str(out), env=env)
    assert result.returncode == 0, result.stderr
    assert files_of(out) == files_of(hc4_zh.out)  # what `irds --dataset hc4/zh` builds
    assert proxy.connections == 0
    refused = run_clir("collection", "build", "neuclir", "--lang", "fr", "--out", str(out),
                       env=env)  # fmt: skip
    assert_one_line_error(refused, "no neuclir collection for language 'fr'", "fa, ru, zh",
                          status=2)  # fmt: skip
    recipe = tmp_path / "bm25.toml"
    recipe.write_text('collection = "wikiclir"\nlanguages = ["fr", "sw"]\n', encoding="utf-8")
    assert load_recipe(recipe).languages == ("fr", "sw")
    assert Workspace().collection("wikiclir", "sw", "standard") == Path("data/wikiclir-en-sw")
    recipe.write_text('collection = "hc4"\nlanguages = ["zh"]\nvariant = "hard"\n')
    with pytest.raises(FormatError, match='variant: expected one of "standard", found "hard"'):
        load_recipe(recipe)


def test_documents_without_text_are_left_out_and_counted(
    tmp_path: Path, proxy: CountingProxy
) -> None:
    home = cache_copy(tmp_path, "hc4")
    docs = home / "hc4" / "zho" / "hc4_docs.jsonl"
    rows = [json.loads(line) for line in docs.read_text(encoding="utf-8").splitlines()]
    rows[1]["title"], rows[1]["text"] = "", "  "
    docs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    out = tmp_path / "hc4-zh"
    result = build(home, "hc4/zh", out, proxy.url)
    assert result.returncode == 0, result.stderr
    assert "1 documents without text were left out" in result.stdout
    ids = [json.loads(line)["id"] for line in lines(out / "corpus.jsonl")]
    assert rows[1]["id"] not in ids and len(ids) == len(rows) - 1
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["empty_documents"] == 1
