"""The command line as users run it: real subprocesses, real files, one-line errors."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from clir_toolkit.formats import read_run
from tests.conftest import TINY_FR, assert_one_line_error, run_clir

pytestmark = pytest.mark.java


def test_help_starts_neither_java_nor_torch() -> None:
    code = (
        "import sys\n"
        "from clir_toolkit.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('torch', 'jnius', 'pyserini', 'ir_measures', 'scipy', 'matplotlib') "
        "if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_help_lists_every_command_without_importing_any_of_them() -> None:
    """`clir --help` lists the commands from their table: no command module, and nothing
    their options are declared in (search, translation, reranking), is imported."""
    code = (
        "import sys\n"
        "from clir_toolkit.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('clir_toolkit.cli.search', "
        "'clir_toolkit.cli.rerank', 'clir_toolkit.search', 'clir_toolkit.translate', "
        "'clir_toolkit.rerank', 'clir_toolkit.evaluate'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    listed = result.stdout
    assert listed.strip().splitlines()[-1] == "[]"
    from clir_toolkit.cli.commands import COMMANDS

    for name, command in COMMANDS.items():
        assert f"{name}" in listed and command.help.split()[0] in listed


def test_python_dash_m_runs_the_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clir_toolkit", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stdout.startswith("clir_toolkit ")


def test_shell_completion_knows_the_commands_options_and_choices(tmp_path: Path) -> None:
    result = run_clir("completion", "bash")
    assert result.returncode == 0, result.stderr
    script = tmp_path / "clir.bash"
    script.write_text(result.stdout)
    # Complete `clir rerank train --model ` in a real bash with the script loaded.
    probe = (
        f"source {script}\n"
        "COMP_WORDS=(clir rerank train --model ''); COMP_CWORD=4\n"
        "COMP_LINE='clir rerank train --model '; COMP_POINT=${#COMP_LINE}\n"
        "_shtab_clir; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    completed = subprocess.run(["bash", "-c", probe], capture_output=True, text=True)
    assert {"knrm", "dual"} <= set(completed.stdout.split()), completed.stderr
    assert run_clir("completion", "zsh").stdout.startswith("#compdef clir")


def test_index_search_eval_from_the_shell(tmp_path: Path) -> None:
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(index), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "indexed 12 documents" in result.stdout
    runs = []
    for name in ("topics", "topics-human"):
        run = tmp_path / f"{name}.trec"
        result = run_clir("search", "--index", str(index), "--topics",
                          str(TINY_FR / f"{name}.dev.tsv"), "--output", str(run),
                          "--hits", "5", "--tag", name, "--quiet")
        assert result.returncode == 0, result.stderr
        rows = read_run(run)
        assert {r.tag for r in rows} == {name} and max(r.rank for r in rows) <= 5
        runs.append(run)
    result = run_clir("eval", "--qrels", str(TINY_FR / "qrels.dev.txt"), *map(str, runs),
                      "--baseline", str(runs[0]), "--measures", "nDCG@10 AP", "--format", "csv")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("run,nDCG@10")
    assert [line.split(",")[0] for line in lines[1:]] == ["topics", "topics-human"]


def test_bad_topics_give_one_line_and_keep_the_old_output(tmp_path: Path,
                                                          fr_index: Path) -> None:
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tlist directory contents\nq2\tcopy\tfiles\n", encoding="utf-8")
    output = tmp_path / "run.trec"
    output.write_text("previous content\n")
    result = run_clir("search", "--index", str(fr_index), "--topics", str(topics),
                      "--output", str(output))
    assert_one_line_error(result, f"{topics}:2")
    assert output.read_text() == "previous content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.trec", "topics.tsv"]


def test_missing_index_is_named(tmp_path: Path) -> None:
    result = run_clir("search", "--index", str(tmp_path / "nope"), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"))
    assert_one_line_error(result, "no such index", "clir index")
    assert not (tmp_path / "r.trec").exists()


def test_bad_run_in_eval_names_file_and_line(tmp_path: Path) -> None:
    run = tmp_path / "dup.trec"
    run.write_text("q1 Q0 ls.1 1 2.0 x\nq1 Q0 ls.1 2 1.0 x\n")
    result = run_clir("eval", "--qrels", str(TINY_FR / "qrels.dev.txt"), str(run))
    assert_one_line_error(result, f"{run}:2", "ls.1")


def test_unknown_measure_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 ls.1 1 2.0 x\n")
    result = run_clir("eval", "--qrels", str(TINY_FR / "qrels.dev.txt"), str(run),
                      "--measures", "nDCG@10 Bogus@3")
    assert_one_line_error(result, "Bogus@3")


def test_invalid_option_values_are_usage_errors(tmp_path: Path, fr_index: Path) -> None:
    result = run_clir("search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"),
                      "--hits", "0")
    assert_one_line_error(result, "--hits", status=2)
    assert not (tmp_path / "r.trec").exists()


def test_index_without_language_asks_for_one(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text('{"id": "a", "contents": "bonjour"}\n', encoding="utf-8")
    result = run_clir("index", "--collection", str(corpus), "--index", str(tmp_path / "idx"))
    assert_one_line_error(result, "--language")
    assert not (tmp_path / "idx").exists()


def test_bad_corpus_leaves_no_index(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text('{"id": "a", "contents": "un"}\n{"id": "a", "contents": "deux"}\n',
                      encoding="utf-8")
    result = run_clir("index", "--collection", str(corpus), "--index", str(tmp_path / "idx"),
                      "--language", "fr")
    assert_one_line_error(result, f"{corpus}:2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]


def test_demo_prints_the_evaluation_table(tmp_path: Path) -> None:
    result = run_clir("demo", "--collection", str(TINY_FR), "--workdir", str(tmp_path), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "bm25-human" in result.stdout and "nDCG@10" in result.stdout


def test_outputs_get_ordinary_permissions(tmp_path: Path, fr_index: Path) -> None:
    output = tmp_path / "run.trec"
    result = run_clir("search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(output), "--quiet")
    assert result.returncode == 0, result.stderr
    assert output.stat().st_mode & 0o044 == 0o044  # readable by group and others (umask 022)
    assert fr_index.stat().st_mode & 0o055 == 0o055


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    run = tmp_path / "r.trec"
    run.write_text("".join(f"q{i} Q0 ls.1 1 1.0 x\n" for i in range(1, 7)))
    code = ("import sys\nfrom clir_toolkit.cli import main\n"
            f"sys.exit(main(['eval', '--qrels', '{TINY_FR / 'qrels.dev.txt'}', '{run}', "
            "'--per-query']))\n")
    # A reader that closes at once: `clir eval ... | head -0`.
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert b"Traceback" not in stderr and b"error" not in stderr
    assert process.returncode == 141


def test_error_boundary_turns_every_failure_into_one_line() -> None:
    import errno

    from clir_toolkit.cli import error_line
    from clir_toolkit.errors import FormatError, Interrupted, UsageError

    cases = [
        (FormatError("runs/a.trec", 3, "rank 'x' is not an integer"),
         "clir: error: runs/a.trec:3: rank 'x' is not an integer", 1),
        (UsageError("--hits must be at least 1"), "clir: error: --hits must be at least 1", 2),
        (KeyboardInterrupt(), "clir: interrupted", 130),
        (Interrupted(15), "clir: interrupted", 143),
        (PermissionError(errno.EACCES, "Permission denied", "/srv/x"),
         "clir: error: /srv/x: Permission denied (check the permissions", 1),
        (MemoryError(), "clir: error: out of memory", 1),
        (ZeroDivisionError("division by zero\nsecond line"),
         "clir: internal error: ZeroDivisionError: division by zero (run again with --debug", 1),
    ]
    for exc, start, status in cases:
        line, code = error_line(exc)
        assert line.startswith(start), line
        assert "\n" not in line
        assert code == status


def test_sigterm_during_a_command_is_reported_as_interrupted(tmp_path: Path) -> None:
    code = (
        "import os, signal, sys\n"
        "import clir_toolkit.cli as cli\n"
        "import clir_toolkit.cli.evaluate as command\n"
        "def handler(args):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return 0\n"
        "command.cmd_eval = handler  # the parser binds handlers when main() builds it\n"
        "sys.exit(cli.main(['eval', '--qrels', 'q', 'r']))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 143
    assert result.stderr.strip() == "clir: interrupted"


def test_ctrl_c_while_the_command_imports_is_one_line_not_a_traceback() -> None:
    """Ctrl-C in the first moments, while the command's modules (numpy, Lucene's helpers)
    are imported to build its parser: `clir: interrupted`, exit 130."""
    code = (
        "import os, signal, sys\n"
        "import clir_toolkit.cli.evaluate as command\n"
        "import clir_toolkit.cli as cli\n"
        "def register(*args):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "command.register = register\n"
        "sys.exit(cli.main(['eval', '--qrels', 'q', 'r']))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (130, "clir: interrupted\n")


def test_clir_search_defaults_are_the_librarys() -> None:
    """A bare `clir search` translates, searches and feeds back as the library's defaults do
    (one declaration per option: flags, defaults and choices are generated from it)."""
    from clir_toolkit.cli import build_parser
    from clir_toolkit.cli.options import _feedback, _translation
    from clir_toolkit.search import BM25_PARAMS, search_to_run
    from clir_toolkit.translate.pipeline import TranslationOptions

    args = build_parser().parse_args(["search", "--index", "i", "--topics", "t", "--output", "o"])
    assert _translation(args) == TranslationOptions()
    assert _feedback(args) is None
    signature = inspect.signature(search_to_run).parameters
    for name in ("hits", "k1", "b"):
        assert getattr(args, name) == signature[name].default == BM25_PARAMS[name].default
    given = build_parser().parse_args(
        ["search", "--index", "i", "--topics", "t", "--output", "o", "--translate", "dict",
         "--keep-source", "0", "--prf", "rm3", "--fb-docs", "5"]
    )  # fmt: skip
    assert _translation(given) == TranslationOptions(translate="dict", keep_source=0.0)
    feedback = _feedback(given)
    assert feedback is not None and (feedback.method, feedback.fb_docs) == ("rm3", 5)


def test_clir_rerank_train_options_are_the_configs_declared_options() -> None:
    """An option not given leaves the config's own default (fine-tuning's or the word-level
    models'), and --help says both defaults, read from the declarations."""
    from clir_toolkit.cli import build_parser
    from clir_toolkit.cli.options import given_values
    from clir_toolkit.cli.rerank import _training_params
    from clir_toolkit.rerank.sentence.tuned_config import TUNED_PARAMS
    from clir_toolkit.rerank.word.train_config import (
        DEFAULT_EPOCHS,
        FROZEN_EPOCHS,
        SUBWORD_EPOCHS,
        TRAIN_PARAMS,
    )

    base = ["rerank", "train", "--collection", "c", "--topics", "t", "--qrels", "q",
            "--run", "r", "--output", "o"]  # fmt: skip
    tuned, word_level = _training_params()
    args = build_parser().parse_args(base)
    assert given_values(args, tuned.values()) == given_values(args, word_level.values()) == {}
    args = build_parser().parse_args(
        [*base, "--model", "dual", "--epochs", "3", "--sosl-thresholds", "0.1", "0.6",
         "--query-lang", "fr", "--tie-embeddings", "--negatives", "20"]
    )  # fmt: skip
    assert given_values(args, word_level.values()) == {
        "model": "dual", "epochs": 3, "sosl_thresholds": (0.1, 0.6), "query_language": "fr",
        "tie_embeddings": True, "negatives_per_query": 20,
    }  # fmt: skip
    result = run_clir("rerank", "train", "--help")
    text = " ".join(result.stdout.split())
    epochs = f"default: {TUNED_PARAMS['epochs'].default}; with --model: "
    assert TRAIN_PARAMS["epochs"].default is None  # the source's default, said in words
    assert epochs + (
        f"{SUBWORD_EPOCHS} on use-m3-tokens trained, {FROZEN_EPOCHS} on it frozen, "
        f"{DEFAULT_EPOCHS} otherwise"
    ) in text
    # The document reading is chosen from the collection; --help says how.
    assert "300 pieces when the collection's median document fits in them, else 50" in text


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("--hits", "2147483648", "an integer at least 1 and at most 2147483647"),
        ("--hits", "abc", "an integer at least 1"),
        ("--threads", "0", "an integer between 1 and 1024"),
        ("--threads", "-1", "an integer between 1 and 1024"),
        ("--alpha", "nan", "a finite number between 0 and 1000"),
        ("--original-weight", "-1", "a number between 0 and 1"),
        ("--wordnet-synonyms", "-1", "an integer at least 0"),
        ("--wordnet-weight", "inf", "a finite number between 0 and 1000"),
        ("--k1", "1e39", "a number at least 0 and at most 3.40282e+38"),
    ],
)
def test_an_option_out_of_its_range_is_one_line_before_any_work(
    tmp_path: Path, option: str, value: str, expected: str
) -> None:
    """Every declared option is checked as the command line reads it, by the check a
    recipe's value gets: one line naming the option and what it accepts, exit 2. The index
    does not exist: the option is refused before it is looked for."""
    result = run_clir("search", "--index", str(tmp_path / "no-index"), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"),
                      option, value)  # fmt: skip
    assert_one_line_error(result, f"argument {option}: expected {expected}, found ", status=2)
    assert not (tmp_path / "r.trec").exists()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # counts that would make one thread, shard or process each
        (["search", "--threads", "2147483647"],
         "--threads: expected an integer between 1 and 1024"),
        (["search", "--ray", "local:2", "--workers", "2147483648"],
         "--workers: expected an integer between 1 and 1024"),
        (["index", "--shards", "2147483648"], "--shards: expected an integer between 1 and 1024"),
        (["index", "--threads", "2147483648"], "--threads: expected an integer between 1 and 1024"),
        (["bench", "search", "--repeat", "0"], "--repeat: expected an integer between 1 and 1000"),
        (["bench", "search", "--repeat", "-1"], "--repeat: expected an integer between 1 and 1000"),
        (["rerank", "bins", "--depth", "0"], "--depth: expected an integer at least 1"),
        (["rerank", "bins", "--depth", "1e20"], "--depth: expected an integer"),
        (["resource", "coverage", "--top", "0"], "--top: expected an integer at least 1"),
        (["compare", "--top", "2147483648"],
         "--top: expected an integer at least 1 and at most 2147483647"),
        (["embed", "train", "--seed", "-1"],
         "--seed: expected an integer between 0 and 2147483647"),
        (["assignment", "check", "sosl", "--time-limit", "1e308"],
         "--time-limit: expected a number greater than 0 and at most 604800"),
        (["assignment", "check", "sosl", "--memory-limit", "1e30"],
         "--memory-limit: expected a number greater than 0 and at most 1048576"),
        (["index", "--dense", "--hnsw", "2147483648"], "--hnsw: expected an integer"),
        # weights that overflow Lucene's float boosts once normalised
        (["search", "--keep-source", "3e38"],
         "--keep-source: expected a number between 0 and 1000"),
        (["search", "--alpha", "3e38"], "--alpha: expected a number between 0 and 1000"),
        (["search", "--wordnet-weight", "3e38"],
         "--wordnet-weight: expected a number between 0 and 1000"),
    ],
)  # fmt: skip
def test_a_count_or_weight_out_of_its_range_is_one_line_before_any_work(
    tmp_path: Path, command: list[str], expected: str
) -> None:
    """Counts and weights without a range in the past: refused as argparse reads them (exit
    2), before any other option is looked at; nothing is written."""
    result = run_clir(*command, cwd=tmp_path)
    assert_one_line_error(result, f"argument {expected}", status=2)
    assert list(tmp_path.iterdir()) == []


def test_more_hits_than_documents_are_every_document_and_a_long_query_names_its_topic(
    fr_index: Path, tmp_path: Path
) -> None:
    topics = str(TINY_FR / "topics.dev.tsv")
    runs = []
    for hits in ("2147483647", "12"):
        runs.append(tmp_path / f"{hits}.trec")
        result = run_clir("search", "--index", str(fr_index), "--topics", topics, "--output",
                          str(runs[-1]), "--hits", hits, "--prf", "rocchio", "--fb-docs",
                          hits)  # fmt: skip
        assert result.returncode == 0, result.stderr
    assert runs[0].read_bytes() == runs[1].read_bytes()
    long = tmp_path / "long.tsv"
    long.write_text("q9\t" + " ".join(f"w{i}" for i in range(1500)) + "\n", encoding="utf-8")
    result = run_clir("search", "--index", str(fr_index), "--topics", str(long), "--output",
                      str(tmp_path / "long.trec"))  # fmt: skip
    assert_one_line_error(result, "topic q9: its query has more terms than Lucene searches")


def test_a_recipe_value_too_large_for_java_fails_before_anything_is_built(
    tmp_path: Path,
) -> None:
    recipe = tmp_path / "huge.toml"
    recipe.write_text('name = "huge"\n[search]\nhits = 2147483648\n', encoding="utf-8")
    result = run_clir("run", str(recipe), cwd=tmp_path)
    assert_one_line_error(
        result, f"{recipe}: [search] hits: expected an integer at least 1 and at most 2147483647"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge.toml"]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ((), ["give a command: collection, index, encode, search", "clir --help"]),
        (("nosuch",), ["unknown command 'nosuch'", "collection, index, encode, search"]),
        (("rerank",), ["give an action: train, score", "clir rerank --help"]),
        (("completion", "fish"), ["argument shell", "'fish'", "'bash', 'zsh', 'tcsh'"]),
        (("assignment", "check", "nosuch"), ["'nosuch'", "'pirkola'"]),
        (("eval", "--qrels", "q", "r", "--format", "xml"), ["argument --format", "'json'"]),
    ],
)
def test_a_usage_error_is_one_line_not_the_usage(args: tuple[str, ...],
                                                 fragments: list[str]) -> None:
    """argparse's own errors (an unknown or missing command, a choice not offered) are one
    line naming what is accepted, as every other error is, for every command."""
    assert_one_line_error(run_clir(*args), *fragments, status=2)


def test_python_dash_m_without_a_command_is_one_line() -> None:
    result = subprocess.run([sys.executable, "-m", "clir_toolkit"], capture_output=True,
                            text=True)  # fmt: skip
    assert_one_line_error(result, "give a command:", status=2)
