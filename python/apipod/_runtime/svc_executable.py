"""Where the `svc` command is, for what hands over to it: `python service.py` (APIPod.start)
and the `apipod` command (apipod.cli). Either runs without Node until it execs svc."""
from __future__ import annotations

import os
from typing import Optional

# The npm package (and a built clone) holds this toolkit at python/apipod and svc at bin/svc.js,
# which loads dist/svc.js: what npm's bin/apipod.js finds when no svc is on PATH. Any svc will
# do, since svc serves with the toolkit bundled with it.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_BUNDLED_SVC = os.path.join(_PACKAGE_ROOT, "bin", "svc.js")
_BUNDLED_BUNDLE = os.path.join(_PACKAGE_ROOT, "dist", "svc.js")


def find_svc() -> Optional[list[str]]:
    """The command that runs svc: `svc` on PATH, else the one bundled beside this toolkit;
    None when there is neither."""
    import shutil  # here: the worker imports this module, and never calls this

    svc = shutil.which("svc")
    if svc is not None:
        return [svc]
    node = shutil.which("node")
    if node is not None and os.path.isfile(_BUNDLED_SVC) and os.path.isfile(_BUNDLED_BUNDLE):
        return [node, _BUNDLED_SVC]
    return None


def install_advice(command: str) -> str:
    """What to do when find_svc() finds none, for the svc command line `command`."""
    return ("apipod: svc is not installed (no `svc` on PATH). Install it with `npm install -g svc-ml`, "
            f"then run `{command}`; or run it once with `npx --package=svc-ml {command}`.")
