"""Debian's man-page packages: the languages, the packages that install their pages, and
whether the installation can be read.

Each language of the man-page collections (:data:`LANGUAGES`) has its translated pages under
``/usr/share/man/<L>/``, installed by ``manpages-<L>`` (and ``manpages-<L>-dev``); the
English pages come from ``manpages`` and ``manpages-dev``. Before a build,
:func:`check_installation` refuses, with a one-line error naming the ``apt-get`` command
that fixes it, an installation the pages cannot be read from: packages missing, or a slim
image whose dpkg configuration drops every manual page (:func:`man_pages_excluded`). After
a build, :func:`owning_packages` gives the packages (and versions) the pages used came
from, for the manifest, and :data:`LICENCES` their licences.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from clir_toolkit.errors import ResourceError

__all__ = [
    "DPKG_CONFIG",
    "ENGLISH_PACKAGES",
    "LANGUAGES",
    "LICENCES",
    "SYSTEM_MAN_ROOT",
    "Language",
    "check_installation",
    "man_pages_excluded",
    "owning_packages",
]


class Language(NamedTuple):
    """Where a language's pages are installed and which Debian packages install them."""

    code: str  # ISO 639-1, as written in the manifest
    directory: str  # under /usr/share/man
    packages: tuple[str, ...]


LANGUAGES: dict[str, Language] = {
    "fr": Language("fr", "fr", ("manpages-fr", "manpages-fr-dev")),
    "de": Language("de", "de", ("manpages-de", "manpages-de-dev")),
    "es": Language("es", "es", ("manpages-es", "manpages-es-dev")),
    "it": Language("it", "it", ("manpages-it", "manpages-it-dev")),
    "ru": Language("ru", "ru", ("manpages-ru", "manpages-ru-dev")),
    "ja": Language("ja", "ja", ("manpages-ja", "manpages-ja-dev")),
    "zh": Language("zh", "zh_CN", ("manpages-zh",)),
}
ENGLISH_PACKAGES = ("manpages", "manpages-dev")
SYSTEM_MAN_ROOT = Path("/usr/share/man")
DPKG_CONFIG = Path("/etc/dpkg")

LICENCES = {
    "manpages-l10n (fr, de, es, it, ru translations)": "GPL-3.0-or-later",
    "manpages-ja": "various free licences of the original pages (see the package copyright)",
    "manpages-zh": "GFDL-1.2+ / GPL (see the package copyright)",
    "Linux man-pages (manpages, manpages-dev)": "various free licences (see the package "
    "copyright); other English pages: the licence of the package that installs them",
}


# ---------------------------------------------------------------------------------------------
# Refusing to build from a broken installation
# ---------------------------------------------------------------------------------------------


def _apt_command(lang: Language, *, reinstall: bool = False) -> str:
    packages = " ".join((*ENGLISH_PACKAGES, *lang.packages))
    extra = "--reinstall " if reinstall else ""
    return f"apt-get install {extra}-y --no-install-recommends {packages}"


def man_pages_excluded(dpkg_config: Path = DPKG_CONFIG) -> tuple[Path, int, str] | None:
    """Where dpkg is told not to install manual pages, as ``(file, line, text)``, or None.

    Slim Debian images (the ``debian:*-slim`` Docker images, for instance) ship a file in
    ``/etc/dpkg/dpkg.cfg.d/`` with ``path-exclude /usr/share/man/*``: the man-page packages
    then install "successfully" and leave the directories empty.
    """
    files = [dpkg_config / "dpkg.cfg"]
    config_dir = dpkg_config / "dpkg.cfg.d"
    if config_dir.is_dir():
        files += sorted(path for path in config_dir.iterdir() if path.is_file())
    probes = ("/usr/share/man/man1/ls.1.gz", "/usr/share/man/fr/man1/ls.1.gz")
    excluded: tuple[Path, int, str] | None = None
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, start=1):
            match = re.match(r"\s*(path-exclude|path-include)[\s=]+(\S+)", line)
            if match is None or not any(fnmatch.fnmatch(p, match.group(2)) for p in probes):
                continue
            # a later path-include puts the pages back
            excluded = (path, number, line.strip()) if match.group(1) == "path-exclude" else None
    return excluded


def _installed_packages(packages: Iterable[str]) -> dict[str, str]:
    """``{package: version}`` for those of ``packages`` that dpkg reports installed."""
    if shutil.which("dpkg-query") is None:
        raise ResourceError(
            "dpkg-query not found: the man-page collections are built from Debian's "
            "man-page packages; run on Debian or Ubuntu"
        )
    result = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package}\t${Version}\t${db:Status-Status}\n", *packages],
        capture_output=True,
        text=True,
        check=False,
    )
    installed: dict[str, str] = {}
    for line in result.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[2] == "installed":
            installed[parts[0]] = parts[1]
    return installed


def check_installation(lang: Language, man_root: Path, dpkg_config: Path) -> None:
    """Raise a one-line ResourceError naming the fix when the pages cannot be read."""
    system = man_root.resolve() == SYSTEM_MAN_ROOT
    if system:
        excluded = man_pages_excluded(dpkg_config)
        if excluded is not None:
            path, number, text = excluded
            raise ResourceError(
                f"{path}:{number}: dpkg is told not to install manual pages ({text}); "
                f"delete that line, then run `{_apt_command(lang, reinstall=True)}`"
            )
        required = (*ENGLISH_PACKAGES, *lang.packages)
        installed = _installed_packages(required)
        missing = [package for package in required if package not in installed]
        if missing:
            raise ResourceError(
                f"Debian packages not installed: {', '.join(missing)}; "
                f"run `{_apt_command(lang)}` (as root)"
            )
    for directory in (man_root / lang.directory, man_root):
        if not any(directory.glob("man*/*")):
            raise ResourceError(
                f"{directory}: no manual pages there: run `{_apt_command(lang)}` (as root)"
            )


# ---------------------------------------------------------------------------------------------
# Where the pages came from (for the manifest)
# ---------------------------------------------------------------------------------------------


def owning_packages(paths: Iterable[Path]) -> dict[str, str]:
    """``{package: version}`` of the Debian packages that installed ``paths``."""
    names = sorted({str(path) for path in paths})
    packages: set[str] = set()
    for start in range(0, len(names), 500):
        result = subprocess.run(
            ["dpkg-query", "-S", *names[start : start + 500]],
            capture_output=True,
            text=True,
            check=False,
        )
        for line in result.stdout.splitlines():  # "pkg1, pkg2:amd64: /path"
            if line.startswith("diversion by "):
                continue
            owners, _, _ = line.partition(": ")
            packages.update(owner.strip().split(":")[0] for owner in owners.split(","))
    return dict(sorted(_installed_packages(sorted(packages)).items())) if packages else {}
