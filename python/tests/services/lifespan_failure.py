from contextlib import asynccontextmanager

from apipod import APIPod


@asynccontextmanager
async def lifespan(app):
    raise RuntimeError("model weights missing")
    yield


app = APIPod(lifespan=lifespan)


@app.endpoint("/never")
def never():
    return None
