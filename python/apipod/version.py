"""The toolkit's version, `apipod.__version__`: svc's own, read from the package.json beside
python/ (in a clone, an npm install and an image's staged runtime), else "0.0.0" as the
upstream toolkit answers when it cannot tell."""
from __future__ import annotations

import json
import os

_PACKAGE_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "package.json")


def toolkit_version() -> str:
    try:
        with open(_PACKAGE_JSON, encoding="utf-8") as file:
            package = json.load(file)
    except (OSError, ValueError):
        return "0.0.0"
    version = package.get("version") if isinstance(package, dict) and package.get("name") == "svc-ml" else None
    return version if isinstance(version, str) else "0.0.0"
