"""Where the project's own data folders are: the registry, grammars and built-in datasets.

In a checkout (or an editable install) they sit at the top of the repo, next to the
package; a wheel carries them inside the package under `_bundled/`.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    """Return the folder `name` ("models", "grammars" or "data")."""
    bundled = _PACKAGE_DIR / "_bundled" / name
    if bundled.is_dir():
        return bundled
    return _PACKAGE_DIR.parent / name


def repo_root() -> Path | None:
    """The checkout the package runs from, or None for an installed wheel."""
    root = _PACKAGE_DIR.parent
    return root if (root / "pyproject.toml").is_file() else None
