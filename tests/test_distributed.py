"""Ray on a local cluster: query-parallel search and sharded indexes give the same run
files as one process over one index."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from clir_toolkit.distributed.cluster import ClusterSpec, chunks, parse_cluster
from tests.conftest import (
    TINY_FR,
    assert_one_line_error,
    run_clir,
    run_clir_killing_a_worker,
    write_big_collection,
)

pytest.importorskip("ray")  # installed by make setup (the [ray] extra is in [dev])


def test_chunks_are_contiguous_and_near_equal() -> None:
    items = list(range(10))
    parts = chunks(items, 3)
    assert [len(part) for part in parts] == [4, 3, 3]
    assert [item for part in parts for item in part] == items
    assert chunks(items, 50) == [[item] for item in items]
    assert chunks(["a"], 4) == [["a"]]


def test_cluster_values() -> None:
    assert parse_cluster("local:2") == ClusterSpec(local_cpus=2)
    assert parse_cluster("auto") == ClusterSpec(address="auto")
    assert parse_cluster("ray://head:10001") == ClusterSpec(address="ray://head:10001")
    assert parse_cluster("head:6379") == ClusterSpec(address="head:6379")


@pytest.mark.parametrize("workers", ["2", "3"])
def test_search_on_two_local_workers_writes_the_same_run(
    fr_index: Path, tmp_path: Path, workers: str
) -> None:
    """Dictionary translation with Pirkola's structure and Rocchio feedback, the topics cut
    into 2 or 3 chunks on a cluster of 2 CPUs: byte for byte the single process's run."""
    options = ["--topics", str(TINY_FR / "topics.dev.tsv"), "--translate", "dict",
               "--prf", "rocchio", "--fb-docs", "3", "--quiet"]  # fmt: skip
    one, spread = tmp_path / "one.trec", tmp_path / "ray.trec"
    assert run_clir("search", "--index", str(fr_index), "--output", str(one),
                    *options).returncode == 0  # fmt: skip
    result = run_clir("search", "--index", str(fr_index), "--output", str(spread), *options,
                      "--ray", "local:2", "--workers", workers)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()
    assert len(one.read_text().splitlines()) > 10


def test_a_bad_cluster_value_is_one_line(fr_index: Path, tmp_path: Path) -> None:
    result = run_clir("search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"),
                      "--ray", "local:0")  # fmt: skip
    assert_one_line_error(result, "--ray 'local:0'", "local:N", status=2)
    assert not (tmp_path / "r.trec").exists()


NOTHING_ANSWERS = "127.0.0.1:1"
"""A cluster address where nothing listens (port 1, which only root may bind)."""


@pytest.mark.parametrize("command", ["search", "index"])
def test_a_cluster_address_where_nothing_answers_is_one_line(
    fr_index: Path, tmp_path: Path, command: str
) -> None:
    """``--ray HOST:PORT`` where no cluster runs fails in one line that names the address
    and how to start a cluster there, before any work: not Ray's minutes of retries and
    warnings (which did not even let SIGTERM through)."""
    output = tmp_path / "out"
    arguments = {
        "search": ["search", "--index", str(fr_index), "--topics",
                   str(TINY_FR / "topics.dev.tsv"), "--output", str(output)],
        "index": ["index", "--collection", str(TINY_FR), "--index", str(output),
                  "--shards", "2"],
    }[command]  # fmt: skip
    result = run_clir(*arguments, "--ray", NOTHING_ANSWERS)
    assert_one_line_error(result, f"--ray {NOTHING_ANSWERS}: no Ray cluster answers",
                          "ray start --head --port=1", "--ray local:N")  # fmt: skip
    assert not output.exists()


def test_auto_without_a_running_cluster_is_one_line(fr_index: Path, tmp_path: Path) -> None:
    """``--ray auto`` takes the address ``ray start --head`` left in Ray's temporary
    directory: none there, or one where the cluster has since stopped, is one line."""
    search = ["search", "--index", str(fr_index), "--topics", str(TINY_FR / "topics.dev.tsv"),
              "--output", str(tmp_path / "r.trec"), "--ray", "auto"]  # fmt: skip
    environment = {"RAY_TMPDIR": str(tmp_path), "RAY_ADDRESS": ""}
    result = run_clir(*search, env=environment)
    assert_one_line_error(result, "--ray auto: no Ray cluster was started on this machine",
                          "ray start --head")  # fmt: skip
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text(NOTHING_ANSWERS + "\n")
    result = run_clir(*search, env=environment)
    assert_one_line_error(result, f"--ray auto (found {NOTHING_ANSWERS}): no Ray cluster "
                          "answers", "--ray local:N")  # fmt: skip
    assert not (tmp_path / "r.trec").exists()


def test_a_ray_client_address_is_one_line(fr_index: Path, tmp_path: Path) -> None:
    """``--ray ray://HOST:PORT`` needs Ray Client (the ``ray[client]`` extra): without it,
    one line says what to install or which address to give instead; with it, the address
    is probed as any other."""
    import importlib.util

    result = run_clir("search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"),
                      "--ray", f"ray://{NOTHING_ANSWERS}")  # fmt: skip
    if importlib.util.find_spec("grpc") is None:
        assert_one_line_error(result, f"--ray ray://{NOTHING_ANSWERS}: a ray:// address needs "
                              "Ray Client", "pip install 'ray[client]'", "HOST:PORT")  # fmt: skip
    else:
        assert_one_line_error(result, "no Ray cluster answers")
    assert not (tmp_path / "r.trec").exists()


def test_sigterm_while_ray_looks_for_the_cluster_stops_as_the_command_line_says(
    fr_index: Path, tmp_path: Path
) -> None:
    """A port that accepts connections but is no Ray cluster: the probe's connection is
    the first, ``ray.init``'s the second; SIGTERM then gives ``clir: interrupted`` and exit
    143, not the silent exit 15 of the handler Ray installs while ``ray.init`` runs."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(120)
        port = listener.getsockname()[1]
        output = tmp_path / "r.trec"
        command = [sys.executable, "-m", "clir_toolkit.cli", "search", "--index", str(fr_index),
                   "--topics", str(TINY_FR / "topics.dev.tsv"), "--output", str(output),
                   "--ray", f"127.0.0.1:{port}"]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)  # fmt: skip
        try:
            connections = [listener.accept()[0] for _ in range(2)]
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=120)
            for connection in connections:
                connection.close()
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert process.returncode == 143, stderr
    assert stderr == "clir: interrupted\n"
    assert not output.exists()


def test_a_killed_worker_is_retried_and_the_run_is_the_same(tmp_path: Path) -> None:
    """kill -9 a worker in the middle of its chunk: Ray runs the chunk again elsewhere, and
    the run file is still byte for byte the single process's; nothing is left half-written."""
    collection = write_big_collection(tmp_path / "big-fr", documents=20_000, topics=400)
    index = tmp_path / "idx"
    assert run_clir("index", "--collection", str(collection), "--index", str(index),
                    "--quiet").returncode == 0  # fmt: skip
    search = ["search", "--index", str(index), "--topics", str(collection / "topics.dev.tsv"),
              "--prf", "rocchio", "--quiet"]  # fmt: skip
    one, spread = tmp_path / "one.trec", tmp_path / "ray.trec"
    assert run_clir(*search, "--output", str(one)).returncode == 0
    result, killed = run_clir_killing_a_worker(
        *search, "--output", str(spread), "--ray", "local:2", "--workers", "2",
        name="_search_chunk",
    )  # fmt: skip
    assert killed is not None, "no worker was caught running its chunk"
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_bench_search_on_ray_prints_both_rates(fr_index: Path) -> None:
    topics = str(TINY_FR / "topics.dev.tsv")
    result = run_clir("bench", "search", "--index", str(fr_index), "--topics", topics,
                      "--ray", "local:2", "--repeat", "1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("one process") and lines[2].startswith("Ray, 2 workers")
    assert lines[3].startswith("ratio Ray / one process (queries/s): ")


def test_shards_built_on_ray_search_exactly_as_one_index(fr_index: Path, tmp_path: Path) -> None:
    """``clir index --shards N --ray``: 1, 2 and 4 shards built by the tasks of one 2-CPU
    cluster; searched with Pirkola's pseudo-terms (weighted by the English kept at 0.5) and
    Rocchio, and untranslated, each gives byte for byte the run of the one index."""
    from clir_toolkit.distributed.cluster import _native_handlers, connected
    from clir_toolkit.distributed.index import build_shards_on
    from clir_toolkit.index import build_index, read_index_info

    def handlers() -> dict[int, bytes]:  # the handler functions (a struct's first 8 bytes)
        return {signum: raw[:8] for signum, raw in _native_handlers().items()}

    jvm_handlers = handlers()  # the JVM runs in this process (the fr_index fixture)
    with connected(ClusterSpec(local_cpus=2)) as ray:
        assert handlers() == jvm_handlers, "ray.init took the JVM's SIGSEGV handler"
        for shards in (1, 2, 4):
            build_index(TINY_FR, tmp_path / f"s{shards}", shards=shards, threads=1,
                        shard_builder=lambda spec, jobs, progress: build_shards_on(ray, spec, jobs),
                        verbose=False)  # fmt: skip
    assert handlers() == jvm_handlers, "ray.shutdown reset the JVM's handlers"
    assert read_index_info(tmp_path / "s4").shards == 4
    assert sorted(p.name for p in (tmp_path / "s4").iterdir()) == [
        "clir-index.json", "shard-00", "shard-01", "shard-02", "shard-03"]  # fmt: skip
    topics = ["--topics", str(TINY_FR / "topics.dev.tsv"), "--quiet"]
    for name, options in {
        "pirkola": ["--translate", "dict", "--structure", "syn", "--prf", "rocchio",
                    "--fb-docs", "3"],
        "untranslated": ["--translate", "none"],
    }.items():  # fmt: skip
        expected = tmp_path / f"one.{name}.trec"
        assert run_clir("search", "--index", str(fr_index), "--output", str(expected),
                        *topics, *options).returncode == 0  # fmt: skip
        assert len(expected.read_text().splitlines()) >= 4
        for shards in (1, 2, 4):
            run = tmp_path / f"s{shards}.{name}.trec"
            result = run_clir("search", "--index", str(tmp_path / f"s{shards}"),
                              "--output", str(run), *topics, *options)  # fmt: skip
            assert result.returncode == 0, result.stderr
            assert run.read_bytes() == expected.read_bytes(), (name, shards)


def test_bench_search_on_ray_with_shards_builds_both_and_compares(fr_index: Path) -> None:
    """``clir bench search --shards 4 --ray local:2``: both copies built and searched, the
    scratch copies removed, and the runs found identical."""
    before = sorted(fr_index.parent.iterdir())
    result = run_clir("bench", "search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--translate", "dict",
                      "--ray", "local:2", "--shards", "4", "--repeat", "1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("indexing 12 documents: one process, one index ")
    assert "Ray local:2, 4 shards" in lines[0]
    assert lines[3].startswith("Ray, 2 workers, 4 shards")
    assert lines[-1] == "runs: identical"
    assert sorted(fr_index.parent.iterdir()) == before


def test_shards_must_be_positive_and_need_ray_in_the_bench(fr_index: Path, tmp_path: Path) -> None:
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(tmp_path / "i"),
                      "--shards", "0")  # fmt: skip
    assert_one_line_error(result, "argument --shards: expected an integer between 1 and 1024",
                          status=2)
    assert not (tmp_path / "i").exists()
    result = run_clir("bench", "search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--shards", "2")  # fmt: skip
    assert_one_line_error(result, "--shards needs --ray", status=2)


class _SwallowingPut:
    """What Ray's ``put`` does with an exception raised while it serialises a value: it
    raises ``TypeError("Could not serialize the put value ...")`` instead (seen in CI when
    SIGTERM arrived while the training data were being pickled)."""

    def put(self, value: object) -> object:
        import os
        import time

        try:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler raises here, mid-serialisation
            time.sleep(5)
        except BaseException:
            raise TypeError(f"Could not serialize the put value {value!r}") from None
        return value


def test_sigterm_while_ray_serialises_a_value_is_an_interruption_not_an_internal_error():
    from clir_toolkit.cli import signals_as_exceptions
    from clir_toolkit.distributed.cluster import put
    from clir_toolkit.errors import Interrupted

    with signals_as_exceptions(), pytest.raises(Interrupted) as stopped:
        put(_SwallowingPut(), "prepared training")
    assert stopped.value.signum == signal.SIGTERM


def test_a_value_ray_cannot_serialise_is_still_its_own_error():
    from clir_toolkit.distributed.cluster import put

    class Unpicklable:
        def put(self, value: object) -> object:
            raise TypeError("Could not serialize the put value <lock>")

    with pytest.raises(TypeError, match="Could not serialize"):
        put(Unpicklable(), "a lock")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def test_ctrl_c_as_ray_starts_ends_in_one_line_with_the_local_cluster_stopped(
    fr_index: Path, tmp_path: Path
) -> None:
    """Ctrl-C at a state, not a time: just as the driver has joined the local cluster it
    started (``ray.init`` half done, its core worker running). The command prints ``clir:
    interrupted`` and exits 130, and the cluster's processes (the raylet's agents included)
    have stopped when it returns. The crash of issue 37 (SIGSEGV after the line, Ray's
    C-level exit handler destroying the core worker under its own metrics timer) came at a
    time, about 1 try in 4 by hand, not at this state: this test guards the ending, the
    launcher's exit past Ray's C-level handlers removes the crash."""
    pids = tmp_path / "ray-pids"
    code = textwrap.dedent(f"""
        import os, signal, sys
        import ray._private.worker as worker

        joined = worker.connect

        def connect_then_ctrl_c(node, *args, **kwargs):
            joined(node, *args, **kwargs)
            started = [info.process.pid for infos in node.all_processes.values()
                       for info in infos if info.process is not None]
            for entry in os.listdir("/proc"):  # the agents the raylet started, too
                try:
                    parent = int(open(f"/proc/{{entry}}/stat").read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                if parent in started:
                    started.append(int(entry))
            open({str(pids)!r}, "w").write(" ".join(map(str, started)))
            os.kill(os.getpid(), signal.SIGINT)

        worker.connect = connect_then_ctrl_c
        sys.argv = ["clir", "search", "--index", {str(fr_index)!r}, "--topics",
                    {str(TINY_FR / "topics.dev.tsv")!r}, "--output",
                    {str(tmp_path / "r.trec")!r}, "--ray", "local:2"]
        from clir_toolkit.launcher import main
        sys.exit(main())
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 130, result.stderr
    assert result.stderr == "clir: interrupted\n"
    assert not (tmp_path / "r.trec").exists()
    started = [int(pid) for pid in pids.read_text().split()]
    assert started and not [pid for pid in started if _alive(pid)]
