"""How the apipod package (PyPI) spells an endpoint's route.

It serves `@app.endpoint("/make_fries")` at `/make-fries`: lower-cased, accents dropped, and
every run of characters other than a-z, 0-9 and `/` one `-` (its
`normalize_name(path, preserve_paths=True)`, then a leading `/`), and routes a provider job
whose path is any spelling with that form. test/fixtures/routes/upstream-route-names.json
holds examples computed with the package; src/serve/route-aliases.ts is the gateway's twin.
"""
from __future__ import annotations

import re
import unicodedata


def upstream_route_name(path: str) -> str:
    name = unicodedata.normalize("NFD", path.lower())
    name = "".join(character for character in name if not unicodedata.combining(character))
    name = re.sub(r"[^a-z0-9/]+", "-", name.replace("\\", "/"))
    name = re.sub(r"-+", "-", re.sub(r"/+", "/", name)).strip("-") or "no_name"
    return name if name.startswith("/") else "/" + name
