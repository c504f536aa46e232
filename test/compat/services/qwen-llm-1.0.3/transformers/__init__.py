"""Stand-in for transformers: a tokenizer and a "model" whose answers are fixed words, so
the service's code paths run without weights and both servers answer alike."""
import queue

import numpy as np
from torch import Tensor

REPLY = ["Hello", "from", "the", "stand-in", "model."]
_PROMPT_ID = 1000  # every prompt word; generated ids index REPLY


class _Encoding(dict):
    def to(self, _device):
        return self


class AutoTokenizer:
    pad_token = None
    eos_token = "</s>"
    eos_token_id = 0

    @classmethod
    def from_pretrained(cls, _name, **_kwargs):
        return cls()

    def apply_chat_template(self, chat, tokenize=False, add_generation_prompt=True):
        return " ".join(f"{message['role']}: {message['content']}" for message in chat)

    def encode(self, text):
        return [_PROMPT_ID] * len(text.split())

    def __call__(self, text, return_tensors="pt", **_kwargs):
        texts = [text] if isinstance(text, str) else list(text)
        width = max(len(t.split()) for t in texts)
        return _Encoding(input_ids=Tensor(np.full((len(texts), width), _PROMPT_ID)))

    def decode(self, ids, skip_special_tokens=True):
        return " ".join(REPLY[i] for i in Tensor(ids).tolist() if 0 <= i < len(REPLY))


class _Output:
    def __init__(self, hidden):
        self.hidden_states = [hidden]


class AutoModelForCausalLM:
    @classmethod
    def from_pretrained(cls, _name, **_kwargs):
        return cls()

    def to(self, _device):
        return self

    def generate(self, input_ids, max_new_tokens=512, streamer=None, **_kwargs):
        reply = list(range(min(len(REPLY), max_new_tokens)))
        if streamer is not None:
            for i in reply:
                streamer.put(REPLY[i] + " ")
            streamer.end()
        prompt = input_ids.tolist()[0]
        return Tensor(np.array([prompt + reply]))

    def __call__(self, input_ids, output_hidden_states=True, **_kwargs):
        batch, width = input_ids.shape
        hidden = np.arange(batch * width * 4, dtype=np.float32).reshape(batch, width, 4) / 10
        return _Output(Tensor(hidden))


class TextIteratorStreamer:
    def __init__(self, tokenizer, skip_prompt=True, skip_special_tokens=True):
        self._queue = queue.Queue()

    def put(self, text):
        self._queue.put(text)

    def end(self):
        self._queue.put(None)

    def __iter__(self):
        while (text := self._queue.get()) is not None:
            yield text
