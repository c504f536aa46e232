"""Writes each lifespan phase to the file named by LIFESPAN_LOG, so a test can count them."""
import os
from contextlib import asynccontextmanager

from apipod import APIPod


def record(phase: str) -> None:
    with open(os.environ["LIFESPAN_LOG"], "a") as log:
        log.write(phase + "\n")


@asynccontextmanager
async def lifespan(app):
    record("startup")
    app.model = "loaded"
    yield
    record("shutdown")


app = APIPod(title="lifespan", lifespan=lifespan)


@app.endpoint("/model")
def model() -> str:
    return app.model
