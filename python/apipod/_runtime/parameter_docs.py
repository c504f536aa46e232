"""Each parameter's help, read from a docstring's parameter section in the three styles Python
projects write: Google (`Args:`), NumPy (`Parameters` underlined with dashes) and reST
(`:param name:`), as Sphinx's napoleon and numpydoc read them."""
from __future__ import annotations

import re

_GOOGLE_HEADERS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
                   "other parameters"}
_GOOGLE_ENTRY = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:(.*)$")
_NUMPY_HEADERS = {"parameters", "other parameters"}
_NUMPY_UNDERLINE = re.compile(r"-{3,}$")
_NUMPY_ENTRY = re.compile(r"(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")
_REST_FIELD = re.compile(r":(param|parameter|arg|argument|key|keyword|type)\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:(.*)$")


def split_parameter_docs(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """The docstring without its parameter sections, and each documented parameter's text.
    `doc` is already cleaned (inspect.getdoc)."""
    if not doc:
        return doc, {}
    lines = doc.split("\n")
    described: dict[str, str] = {}
    kept: list[str] = []
    index = 0
    while index < len(lines):
        end = (_google_section(lines, index, described) or _numpy_section(lines, index, described)
               or _rest_field(lines, index, described))
        if end is None:
            kept.append(lines[index])
            index += 1
        else:
            index = end
    rest = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return rest or None, described


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _paragraphs(lines: list[str]) -> str:
    """Continuation lines joined as one text: a blank line keeps a paragraph break."""
    text = "\n".join(line.strip() for line in lines).strip()
    return re.sub(r"(?<!\n)\n(?!\n)", " ", re.sub(r"\n{2,}", "\n\n", text))


def _google_section(lines: list[str], start: int, described: dict[str, str]) -> int | None:
    header = lines[start]
    if header.strip().rstrip(":").lower() not in _GOOGLE_HEADERS or not header.rstrip().endswith(":"):
        return None
    index, entry_indent, name, text = start + 1, None, None, []
    while index < len(lines):
        line = lines[index]
        if line.strip() and _indent(line) <= _indent(header):
            break
        if line.strip() and entry_indent is None:
            entry_indent = _indent(line)
        match = _GOOGLE_ENTRY.match(line.strip()) if line.strip() and _indent(line) == entry_indent else None
        if match:
            if name:
                described[name] = _paragraphs(text)
            name, text = match.group(1), [match.group(2)]
        else:
            text.append(line)
        index += 1
    if name is None:
        return None
    described[name] = _paragraphs(text)
    return index


def _numpy_section(lines: list[str], start: int, described: dict[str, str]) -> int | None:
    header = lines[start]
    if (header.strip().lower() not in _NUMPY_HEADERS or start + 1 >= len(lines)
            or not _NUMPY_UNDERLINE.match(lines[start + 1].strip())):
        return None
    index, names, text = start + 2, [], []

    def close() -> None:
        for each in names:
            described[each] = _paragraphs(text)

    while index < len(lines):
        line = lines[index]
        if index + 1 < len(lines) and line.strip() and _NUMPY_UNDERLINE.match(lines[index + 1].strip()):
            break  # the next section
        if line.strip() and _indent(line) <= _indent(header):
            match = _NUMPY_ENTRY.match(line.strip())
            if not match:
                break
            close()
            names, text = [name.strip().lstrip("*") for name in match.group(1).split(",")], []
        else:
            text.append(line)
        index += 1
    close()
    return index


def _rest_field(lines: list[str], start: int, described: dict[str, str]) -> int | None:
    match = _REST_FIELD.match(lines[start].strip())
    if not match:
        return None
    index, text = start + 1, [match.group(3)]
    while index < len(lines) and lines[index].strip() and _indent(lines[index]) > _indent(lines[start]):
        text.append(lines[index])
        index += 1
    if match.group(1) != "type":
        described[match.group(2)] = _paragraphs(text)
    return index
