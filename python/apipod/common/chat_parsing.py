"""`apipod.common.chat_parsing`: the apipod toolkit's parser of an open chat model's raw text,
which services written for it import (`from apipod.common.chat_parsing import ChatOutputParser`).

Open models mark structure inline: reasoning as `<think>...</think>` and a tool call as
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes; or Qwen's XML form,
`<function=name><parameter=key>value</parameter></function>`, inside the same tags). The
parser turns text, fed in fragments of any size as a model streams it, into chat deltas:

- content:    a `str`
- reasoning:  `{"reasoning_content": str}`
- a tool call, once whole: `{"tool_calls": [{"index", "id", "type": "function", "function": {"name", "arguments"}}]}`

which svc's chat endpoints stream as they are (a delta dict is a `chat.completion.chunk` delta).
"""
from __future__ import annotations

import json
import re
from typing import Iterator, List, Optional, Tuple, Union

Delta = Union[str, dict]

THINK_TAGS = ("<think>", "</think>")
TOOL_CALL_TAGS = ("<tool_call>", "</tool_call>")


class ChatOutputParser:
    """Parses one assistant turn: `feed` each fragment and emit what it returns, then `flush`
    once at the end. Text that could still be the start of a tag is held back until it is
    known not to be one."""

    def __init__(self, think_tags: Tuple[str, str] = THINK_TAGS, tool_call_tags: Tuple[str, str] = TOOL_CALL_TAGS):
        self.think_open, self.think_close = think_tags
        self.tool_open, self.tool_close = tool_call_tags
        self.saw_tool_call = False
        self._pending = ""
        self._tool_text = ""
        self._state = "content"  # content, reasoning or tool
        self._tool_count = 0

    def feed(self, text: str) -> List[Delta]:
        self._pending += text
        return list(self._deltas(at_end=False))

    def flush(self) -> List[Delta]:
        """What is still held back; an unclosed tool call is given as the text it was."""
        deltas = list(self._deltas(at_end=True))
        if self._state == "tool" and self._tool_text:
            deltas.append(self.tool_open + self._tool_text)
            self._tool_text = ""
        self._state = "content"
        return deltas

    def _deltas(self, at_end: bool) -> Iterator[Delta]:
        while True:
            tag_at, tag = self._next_tag()
            if tag is None:
                keep = 0 if at_end else self._partial_tag_length()
                ready, self._pending = self._pending[:len(self._pending) - keep], self._pending[len(self._pending) - keep:]
                yield from self._text(ready)
                return
            yield from self._text(self._pending[:tag_at])
            self._pending = self._pending[tag_at + len(tag):]
            yield from self._enter(tag)

    def _tags(self) -> Tuple[str, ...]:
        if self._state == "reasoning":
            return (self.think_close,)
        if self._state == "tool":
            return (self.tool_close,)
        return (self.think_open, self.tool_open)

    def _next_tag(self) -> Tuple[int, Optional[str]]:
        found = [(self._pending.find(tag), tag) for tag in self._tags()]
        found = [(index, tag) for index, tag in found if index >= 0]
        return min(found) if found else (-1, None)

    def _partial_tag_length(self) -> int:
        """How much of the end of the pending text is the start of a tag."""
        longest = 0
        for tag in self._tags():
            for length in range(1, len(tag)):
                if self._pending.endswith(tag[:length]):
                    longest = max(longest, length)
        return longest

    def _text(self, text: str) -> Iterator[Delta]:
        if not text:
            return
        if self._state == "tool":
            self._tool_text += text
        elif self._state == "reasoning":
            yield {"reasoning_content": text}
        else:
            yield text

    def _enter(self, tag: str) -> Iterator[Delta]:
        if tag == self.think_open:
            self._state = "reasoning"
        elif tag == self.tool_open:
            self._state, self._tool_text = "tool", ""
        elif tag == self.think_close:
            self._state = "content"
        elif tag == self.tool_close:
            self._state = "content"
            yield self._tool_call()

    def _tool_call(self) -> Delta:
        text, self._tool_text = self._tool_text, ""
        call = _read_tool_call(text)
        if call is None:
            return text  # not a call it can read: the client sees the text
        name, arguments = call
        self.saw_tool_call = True
        import uuid  # here, not with the module: uuid brings `platform`, ~0.4 MiB in every worker
        delta = {"tool_calls": [{
            "index": self._tool_count,
            "id": f"call_{uuid.uuid4().hex[:8]}",
            "type": "function",
            "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)},
        }]}
        self._tool_count += 1
        return delta


_XML_FUNCTION = re.compile(r"<function=([\w.\-]+)>(.*?)</function>", re.S)
_XML_PARAMETER = re.compile(r"<parameter=([\w.\-]+)>\s*(.*?)\s*</parameter>", re.S)


def _read_tool_call(text: str) -> Optional[Tuple[str, Union[str, dict]]]:
    """(name, arguments) of a Hermes JSON call or a Qwen XML one; None for anything else."""
    text = text.strip()
    try:
        call = json.loads(text)
    except ValueError:
        call = None
    if isinstance(call, dict) and isinstance(call.get("name"), str):
        return call["name"], call.get("arguments", {})
    match = _XML_FUNCTION.search(text)
    if match is None:
        return None
    arguments = {}
    for key, value in _XML_PARAMETER.findall(match.group(2)):
        try:
            arguments[key] = json.loads(value)
        except ValueError:
            arguments[key] = value
    return match.group(1), arguments


def combine_deltas(deltas: List[Delta]) -> dict:
    """The assistant message the deltas make: content and reasoning joined, tool calls
    joined by their index (fragments of one call's name and arguments concatenated)."""
    content, reasoning, calls = [], [], {}
    for delta in deltas:
        if isinstance(delta, str):
            content.append(delta)
            continue
        content.append(delta.get("content") or "")
        reasoning.append(delta.get("reasoning_content") or "")
        for call in delta.get("tool_calls") or []:
            joined = calls.setdefault(int(call.get("index", len(calls))), {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
            joined["id"] = call.get("id") or joined["id"]
            joined["type"] = call.get("type") or joined["type"]
            function = call.get("function") or {}
            joined["function"]["name"] += function.get("name") or ""
            joined["function"]["arguments"] += function.get("arguments") or ""
    message = {"role": "assistant", "content": "".join(content).strip() or None}
    if "".join(reasoning):
        message["reasoning_content"] = "".join(reasoning).strip()
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


def parse_chat_output(text: str, **parser_options) -> dict:
    """The assistant message of one whole generated text."""
    parser = ChatOutputParser(**parser_options)
    return combine_deltas(parser.feed(text) + parser.flush())
