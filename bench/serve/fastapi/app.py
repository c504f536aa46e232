# Served by `uvicorn app:app` (FastAPI + uvicorn, one process): the same functions with pydantic bodies.
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI(title="bench")


class EchoIn(BaseModel):
    text: str


class SpinIn(BaseModel):
    n: int


@app.post("/echo")
def echo(body: EchoIn) -> dict:
    return {"text": body.text}


@app.post("/spin")
def spin(body: SpinIn) -> dict:
    total = 0
    for i in range(body.n):
        total += i * i % 7
    return {"n": body.n, "total": total}
