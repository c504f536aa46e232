"""Compiles a service file without running it: `python -m apipod._runtime.compile_check service.py`.

The generated Dockerfile runs this with the image's own Python right after copying the
project, so a file that Python refuses (a syntax error the scan missed, syntax newer than
that Python) fails `docker build` with Python's message, not the container at start.
Nothing is imported or executed, and no bytecode is written.
"""
from __future__ import annotations

import sys


def compile_error(path: str) -> str | None:
    """`service.py:9: SyntaxError: f-string: unmatched '['`, or None when Python compiles the file."""
    with open(path, "rb") as file:
        source = file.read()  # bytes: Python applies the file's coding comment or BOM itself
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as error:  # IndentationError and TabError among them
        where = f"{path}:{error.lineno}" if error.lineno else path
        return f"{where}: {type(error).__name__}: {error.msg}"
    except ValueError as error:  # a NUL byte, before Python 3.12
        return f"{path}: {type(error).__name__}: {error}"
    return None


def main(arguments: list[str]) -> int:
    if len(arguments) != 1:
        print("usage: python -m apipod._runtime.compile_check SERVICE_FILE", file=sys.stderr)
        return 2
    error = compile_error(arguments[0])
    if error is None:
        return 0
    print(error, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
