"""The toolkit's version, `apipod.__version__`: svc's own. The copy bundled with svc (a clone,
an npm install, an image's staged runtime) reads it from the package.json beside python/; the
svc-apipod distribution from its metadata, which its build took from that same package.json
(python/pyproject.toml). Else "0.0.0", as the upstream toolkit answers when it cannot tell."""
from __future__ import annotations

import json
import os
from typing import Optional

_PACKAGE_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir, "package.json")
_DISTRIBUTION_NAME = "svc-apipod"  # python/pyproject.toml
_NPM_NAME = "svc-ml"  # package.json


def toolkit_version() -> str:
    return _bundled_version() or _installed_version() or "0.0.0"


def _bundled_version() -> Optional[str]:
    try:
        with open(_PACKAGE_JSON, encoding="utf-8") as file:
            package = json.load(file)
    except (OSError, ValueError):
        return None
    version = package.get("version") if isinstance(package, dict) and package.get("name") == _NPM_NAME else None
    return version if isinstance(version, str) else None


def _installed_version() -> Optional[str]:
    # Imported here: importlib.metadata takes ~10 ms to import, which every worker's start
    # paid, though svc's own copy finds its version in package.json first.
    from importlib import metadata

    try:
        distribution = metadata.distribution(_DISTRIBUTION_NAME)
    except metadata.PackageNotFoundError:
        return None
    # Only when these files are the distribution's: another copy of apipod on the path must not
    # claim the version of an svc-apipod installed elsewhere in the environment.
    mine = os.path.realpath(str(distribution.locate_file("apipod/_runtime/version.py"))) == os.path.realpath(__file__)
    return distribution.version if mine else None
