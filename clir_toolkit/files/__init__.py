"""Writing files so that nothing is lost and nothing is half-written.

Every output of the toolkit goes through :func:`atomic_write` (one file) or
:func:`atomic_directory` (a directory such as an index or a collection). Both write into a
temporary sibling and rename it into place only when it is complete, so an interrupted or
failed command leaves the destination exactly as it was. The guarantees, and their limits:

* **Only our own outputs are replaced.** A directory is replaced only if it is empty or
  holds the marker file of the kind of output being written (``clir-index.json`` for an
  index, ``manifest.json`` for a collection); anything else is refused before anything is
  touched (:func:`check_replaceable`).
* **One writer at a time.** A directory's writer holds an exclusive lock on the sibling
  ``.NAME.lock`` (``fcntl.flock``, released by the kernel if the process dies); a second
  writer is refused with the first one's process id.
* **Safe at every instant.** Replacing a directory takes two renames
  (``NAME → .NAME.old``, ``.NAME.*.tmp → NAME``). A crash between them leaves the old
  directory as ``.NAME.old``; the next writer or reader of ``NAME`` renames it back
  (:func:`recover_directory`). Temporary ``.NAME.*.tmp`` leftovers of a killed process are
  removed by the next writer, under the lock.
* **Signals.** SIGINT and SIGTERM become Python exceptions in the command line, so the
  temporaries are removed on the way out. ``kill -9`` cannot be cleaned up after at once:
  its leftovers are what the next writer removes.
* **OS errors are one line.** An unwritable, full or read-only destination raises
  :class:`~clir_toolkit.errors.OutputError` naming the path and the fix.
* **Special destinations.** ``-`` is standard output. A symbolic link is followed: its
  target is replaced atomically and the link stays. A device, FIFO or other file that is
  not a regular file is written through, in place, with no rename (``/dev/null`` stays a
  device, a reader of a FIFO gets the data); a socket cannot be written and is refused.
* **An output is never an input.** :func:`check_not_an_input` refuses, before any work, an
  output that is (through links or hard links) one of the command's inputs, or that lies
  inside an index or a collection directory.

Data the toolkit sets up or caches for itself (dictionaries, WordNet, the DDTP lists,
trained embeddings) lives under :func:`data_dir`.

One module a concern: :mod:`.atomic` (one file written atomically, its temporaries,
standard output and special files, OS errors in one line), :mod:`.directories` (a
directory replaced atomically: ownership checks, the lock, recovery), :mod:`.inputs` (an
output that is an input), :mod:`.hashing` (files' fingerprints) and :mod:`.data`
(:func:`data_dir`). Every public name is re-exported here: callers import from
:mod:`clir_toolkit.files`.
"""

from clir_toolkit.files.atomic import (
    STDOUT,
    absolute,
    atomic_write,
    describe_os_error,
    is_stdout,
    output_error,
    scratch,
)
from clir_toolkit.files.data import data_dir
from clir_toolkit.files.directories import (
    ForeignEntry,
    atomic_directory,
    check_only_ours,
    check_replaceable,
    directory_lock,
    recover_directory,
)
from clir_toolkit.files.hashing import file_stamps, sha256_file
from clir_toolkit.files.inputs import check_not_an_input

__all__ = [
    "STDOUT", "ForeignEntry", "absolute", "atomic_directory", "atomic_write", "check_not_an_input",
    "check_only_ours", "check_replaceable", "data_dir", "describe_os_error", "directory_lock",
    "file_stamps", "is_stdout", "output_error", "recover_directory", "scratch", "sha256_file",
]  # fmt: skip
