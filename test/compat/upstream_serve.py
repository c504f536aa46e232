"""Serves a service file with the apipod package from PyPI, as `python service.py` would.

Usage: python upstream_serve.py SERVICE_FILE PORT. The file is imported under its own name
(not `__main__`, so its own `app.start()` in an `if __name__` block does not run); an
unconditional `app.start()` in it runs at import and serves on APIPOD_PORT, which is set here.
Otherwise the module's `app` is started on PORT.
"""
import importlib.util
import os
import sys

path, port = os.path.abspath(sys.argv[1]), sys.argv[2]
os.environ["APIPOD_PORT"] = port
os.environ["APIPOD_HOST"] = "127.0.0.1"
sys.path.insert(0, os.path.dirname(path))
spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
module.app.start(port=int(port), host="127.0.0.1")
