# Served by `uvicorn app:app` (FastAPI + uvicorn, one process): the same functions with pydantic
# bodies, each as a plain `def` (run in a thread pool) and as an `async def` (run on the loop).
import base64
import itertools
import json
import math
import time
import uuid

from fastapi import FastAPI, File, Response, UploadFile
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

app = FastAPI(title="bench")


class EchoIn(BaseModel):
    text: str


class SpinIn(BaseModel):
    n: int


class ImageIn(BaseModel):
    image: str


class MeanIn(BaseModel):
    values: list[float]


@app.post("/echo")
def echo(body: EchoIn) -> dict:
    return {"text": body.text}


@app.post("/echo-async")
async def echo_async(body: EchoIn) -> dict:
    return {"text": body.text}


@app.post("/image-async")
async def image_async(body: ImageIn) -> Response:
    # As svc's ImageFile takes it: base64 in, the image's bytes out.
    return Response(base64.b64decode(body.image), media_type="image/png")


@app.post("/upload-async")
async def upload_async(image: UploadFile = File(...)) -> Response:
    # As svc's ImageFile takes a multipart upload: the file in, the image's bytes out.
    return Response(await image.read(), media_type="image/png")


@app.post("/mean-async")
async def mean_async(body: MeanIn) -> dict:
    return {"count": len(body.values), "mean": sum(body.values) / len(body.values)}


@app.post("/spin")
def spin(body: SpinIn) -> dict:
    total = 0
    for i in range(body.n):
        total += i * i % 7
    return {"n": body.n, "total": total}


# An embedding model's answer: the same 1,536 floats as bench/serve/svc's, 64 lists taking turns.
def _embeddings():
    # Made at the first call: the idle-memory suite measures the server, not ~3 MiB of lists
    # that coglet's predictor (which has no /embed) does not hold.
    yield from itertools.cycle([[math.sin(index * 12.9898 + variant) * 0.05 for index in range(1536)] for variant in range(64)])


EMBEDDINGS = _embeddings()


@app.post("/embed")
def embed(body: EchoIn) -> dict:
    return {"embedding": next(EMBEDDINGS), "tokens": len(body.text.split())}


@app.post("/embed-async")
async def embed_async(body: EchoIn) -> dict:
    return {"embedding": next(EMBEDDINGS), "tokens": len(body.text.split())}


class TokensIn(BaseModel):
    n: int


class ChatIn(BaseModel):
    model: str
    messages: list[dict]
    stream: bool = False
    max_tokens: int = 16


@app.post("/tokens-async")
async def tokens_async(body: TokensIn) -> StreamingResponse:
    # As svc streams a generator's chunks: one server-sent event per token.
    async def events():
        for index in range(body.n):
            yield f"data: {json.dumps(f' token{index}')}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


@app.post("/v1/chat/completions")
async def chat_completions(body: ChatIn) -> StreamingResponse:
    # An OpenAI-compatible server's stream, as vLLM's (a FastAPI app) writes it: a
    # chat.completion.chunk per token, then the finish chunk and [DONE].
    ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

    def chunk(delta: dict, finish: str | None) -> str:
        return "data: " + json.dumps({"id": ident, "object": "chat.completion.chunk", "created": created, "model": body.model,
                                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"

    async def events():
        yield chunk({"role": "assistant", "content": ""}, None)
        for index in range(body.max_tokens):
            yield chunk({"content": f" token{index}"}, None)
        yield chunk({}, "stop")
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")
