"""examples/hello's two endpoints as a plain FastAPI app: the peer image with nothing but pip."""
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI(title="Hello")


class HelloInput(BaseModel):
    name: str = "world"
    excited: bool = False


class AddInput(BaseModel):
    a: float
    b: float


@app.post("/hello")
def hello(body: HelloInput) -> dict:
    punctuation = "!" if body.excited else "."
    return {"greeting": f"Hello, {body.name}{punctuation}"}


@app.post("/add")
def add(body: AddInput) -> dict:
    return {"sum": body.a + body.b}
