"""`edgebench --version`: edgebench's version and its runtimes', from package metadata
(no runtime is imported). Light on purpose: the `edgebench` command answers a lone
`--version` from here without loading the commands (__main__.py)."""

from __future__ import annotations

from importlib import metadata

from edgebench import __version__
from edgebench.runtimes import runtime_packages
from edgebench.system.versions import package_versions

# The runtimes a run's numbers depend on, named by `--version` beside edgebench's own.
RUNTIMES = runtime_packages()


def version_line() -> str:
    """`edgebench 0.2.0 (llama-cpp-python 0.3.36, onnxruntime 1.31.1)`: the installed
    package's version (the source's when not installed) and each runtime's, if present."""
    versions = package_versions(RUNTIMES)
    try:
        own = metadata.version("edgebench")
    except metadata.PackageNotFoundError:
        own = __version__
    runtimes = ", ".join(f"{name} {versions[name] or 'not installed'}" for name in RUNTIMES)
    return f"edgebench {own} ({runtimes})"
