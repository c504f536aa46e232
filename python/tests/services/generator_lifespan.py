"""A plain generator function as the lifespan, as some services write it."""
import os

from apipod import APIPod

state = {}


def lifespan(app):
    state["model"] = "loaded by a generator"
    yield
    with open(os.environ["LIFESPAN_LOG"], "a") as log:
        log.write("generator shutdown\n")


app = APIPod(lifespan=lifespan)


@app.endpoint("/model")
def model() -> str:
    return state["model"]
