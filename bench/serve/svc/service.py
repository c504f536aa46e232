# Served by `svc start bench/serve/svc` (svc's own python/apipod toolkit).
import itertools
import math

from apipod import APIPod, ChatCompletionRequest, ImageFile

app = APIPod(title="bench")


@app.endpoint("/echo")
def echo(text: str) -> dict:
    return {"text": text}


@app.endpoint("/image")
def image(image: ImageFile) -> ImageFile:
    return image


@app.endpoint("/spin")
def spin(n: int) -> dict:
    total = 0
    for i in range(n):
        total += i * i % 7
    return {"n": n, "total": total}


@app.endpoint("/mean")
def mean(values: list[float]) -> dict:
    return {"count": len(values), "mean": sum(values) / len(values)}


# An embedding model's answer: 1,536 floats of full precision. A model's differ at each call;
# here 64 lists take turns (the same as bench/serve/fastapi's), too many numbers for a cache of
# their texts (V8 keeps one) to hold.
def _embeddings():
    # Made at the first call: the idle-memory suite measures the server, not ~3 MiB of lists
    # that coglet's predictor (which has no /embed) does not hold.
    yield from itertools.cycle([[math.sin(index * 12.9898 + variant) * 0.05 for index in range(1536)] for variant in range(64)])


EMBEDDINGS = _embeddings()


@app.endpoint("/embed")
def embed(text: str) -> dict:
    return {"embedding": next(EMBEDDINGS), "tokens": len(text.split())}


# A language model's answer streamed: n short tokens, as fast as they are asked for (no model),
# to the client as server-sent events (`Accept: text/event-stream`).
@app.endpoint("/tokens")
def tokens(n: int):
    for index in range(n):
        yield f" token{index}"


# The same through the OpenAI Chat Completions route (`stream: true`), max_tokens tokens.
@app.endpoint("/chat")
def chat(request: ChatCompletionRequest):
    for index in range(request.max_tokens or 16):
        yield f" token{index}"
