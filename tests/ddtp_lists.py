"""Hand-made apt lists for the DDTP tests: deb822 records, lz4-compressed, under apt's
file names, as ``apt-get update`` leaves them in ``Dir::State::Lists``; no network.

:func:`write_lists` writes one suite with English descriptions and one translation;
:data:`PACKAGES`, :data:`ENGLISH` and :data:`FRENCH` are the descriptions most tests use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import lz4.frame

PREFIX = "example.org_debian_dists_testing_main"
RELEASE = "example.org_debian_dists_testing_InRelease"
DATE = "Sat, 10 May 2025 09:09:09 UTC"


def md5(key: str) -> str:
    return hashlib.md5(key.encode()).hexdigest()


# (package, Source field or None, description key)
PACKAGES = [
    ("widget-tools", "widget (1.2-3)", "widget-tools"),
    ("libwidget1", "widget", "libwidget1"),
    ("libwidget-dev", "widget (1.2-3)", "libwidget-dev"),
    ("widget-doc", "widget", "widget-doc"),  # no French translation
    ("gadget", None, "gadget"),
    ("alpha-cli", "alpha", "alpha"),  # two packages, one description
    ("alpha-gui", "alpha", "alpha"),
    ("beta", None, "beta"),
    ("gamma", None, "gamma"),
    ("delta", None, "delta"),
    ("epsilon", None, "epsilon"),  # no English text
    ("zeta", None, "zeta"),  # a synopsis without long text
]

ENGLISH = {
    "widget-tools": "Command-line tools for widgets\n Tools to create and inspect widgets.",
    "libwidget1": "shared library for widgets\n The runtime library.",
    "libwidget-dev": "development files for the widget library\n Headers.",
    "widget-doc": "documentation of the widget library\n HTML manual.",
    "gadget": "Gadget manager for gadgets\n Manages your gadgets.",
    "alpha": "Graphical and console frontends (alpha-cli, ALPHA-GUI)\n Two frontends.",
    "beta": "Beta: fast widget toolkit library\n Beta is fast.",
    "gamma": "fast widget toolkit library - gamma\n Gamma is fast too.",
    "delta": "Delta utility\n A utility.",
    "zeta": "tiny zeta calculator",
}

FRENCH = {
    "widget-tools": (
        "outils en ligne de commande pour widgets\n"
        " Outils pour créer et inspecter des widgets.\n .\n  – deuxième paragraphe,\n"
        " \u00a0\n suite après une ligne insécable."
    ),
    "libwidget1": "bibliothèque partagée pour widgets\n La bibliothèque d'exécution.",
    "libwidget-dev": "fichiers de développement de la bibliothèque widget\n En-têtes.",
    "gadget": "gestionnaire de gadgets Gadget\n Gère vos gadgets.",
    "alpha": "interfaces graphique et console (alpha-cli, alpha-gui)\n Deux interfaces.",
    "beta": "Beta : bibliothèque de widgets rapide\n Beta est rapide.",
    "gamma": "bibliothèque de widgets rapide – gamma\n Gamma est rapide aussi.",
    "delta": "utilitaire Delta\n Un utilitaire.",
    "epsilon": "epsilon en français seulement\n Pas d'anglais.",
    "zeta": "petite calculatrice zeta",
}


def deb822(records: Iterable[dict[str, str]]) -> bytes:
    blocks = ["".join(f"{name}: {value}\n" for name, value in r.items()) for r in records]
    return "\n".join(blocks).encode("utf-8")


def write_lists(
    lists: Path,
    packages: list[tuple[str, str | None, str]] = PACKAGES,
    english: dict[str, str] = ENGLISH,
    translated: dict[str, str] = FRENCH,
    code: str = "fr",
) -> Path:
    """The lists apt leaves in ``Dir::State::Lists`` for one suite with ``en`` and ``code``."""
    lists.mkdir(parents=True, exist_ok=True)
    (lists / RELEASE).write_text(
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nOrigin: Example\n"
        f"Suite: testing\nCodename: tiny\nDate: {DATE}\nMD5Sum:\n x 1 main/Release\n"
        "-----BEGIN PGP SIGNATURE-----\n\nxyz\n-----END PGP SIGNATURE-----\n",
        encoding="utf-8",
    )
    records = []
    for package, source, key in packages:
        record = {"Package": package, "Version": "1.0-1"}
        if source is not None:
            record["Source"] = source
        record["Description"] = (english.get(key) or "?").split("\n")[0]
        record["Description-md5"] = md5(key)
        records.append(record)
    compressed = {
        f"{PREFIX}_binary-amd64_Packages.lz4": deb822(records),
        f"{PREFIX}_i18n_Translation-en.lz4": _translation(packages, english, "en"),
        # apt writes "_" in a URI as "%5f": Translation-zh_CN is Translation-zh%5fCN.lz4
        f"{PREFIX}_i18n_Translation-{code.replace('_', '%5f')}.lz4": _translation(
            packages, translated, code
        ),
    }
    for name, data in compressed.items():
        (lists / name).write_bytes(lz4.frame.compress(data))
    return lists


def _translation(
    packages: list[tuple[str, str | None, str]], texts: dict[str, str], code: str
) -> bytes:
    records = []
    for package, _, key in packages:
        if key in texts:
            records.append(
                {"Package": package, "Description-md5": md5(key), f"Description-{code}": texts[key]}
            )
    return deb822(records)
