"""Importing the user's service file and finding the APIPod instance it creates."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

from ..app import APIPod
from .service_module import SERVICE_MODULE_NAME


def load_app(service_file: str) -> APIPod:
    """Imports the file as `__apipod_service__`, so its `if __name__ == "__main__":` block
    does not run, with its directory first on sys.path for its own imports."""
    path = os.path.abspath(service_file)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no service file at {path}")
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    loader = importlib.machinery.SourceFileLoader(SERVICE_MODULE_NAME, path)  # any file name, not only *.py
    spec = importlib.util.spec_from_loader(SERVICE_MODULE_NAME, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[SERVICE_MODULE_NAME] = module  # pickle and dataclasses look classes up here
    loader.exec_module(module)
    return find_app(module, path)


def find_app(module: ModuleType, path: str) -> APIPod:
    """The module's one APIPod instance; of several, the one named `app`."""
    names_by_app: dict[int, list[str]] = {}
    for name, value in vars(module).items():
        if isinstance(value, APIPod):
            names_by_app.setdefault(id(value), []).append(name)
    if not names_by_app:
        raise LookupError(f"{path} creates no APIPod instance; add `app = APIPod()` and decorate "
                          "endpoints with @app.endpoint(\"/path\")")
    if len(names_by_app) == 1:
        return getattr(module, next(iter(names_by_app.values()))[0])
    if isinstance(getattr(module, "app", None), APIPod):
        return module.app
    names = ", ".join(names[0] for names in names_by_app.values())
    raise LookupError(f"{path} creates several APIPod instances ({names}); name the one to serve `app`")
