# The PyPI `apipod` package (SocAIty) in its default mode: `APIPod()` with no simulate target and
# no APIPOD_COMPUTE/APIPOD_PROVIDER is plain FastAPI without a job queue, and app.start() runs
# `uvicorn.run(app, host=APIPOD_HOST, port=APIPOD_PORT)`, one process. Run with its own virtualenv:
#   APIPOD_HOST=127.0.0.1 APIPOD_PORT=8002 bench/serve/.venv-apipod/bin/python bench/serve/apipod_pypi/service.py
import os

from apipod import APIPod

app = APIPod(title="bench")


@app.endpoint("/echo")
def echo(text: str) -> dict:
    return {"text": text}


@app.endpoint("/spin")
def spin(n: int) -> dict:
    total = 0
    for i in range(n):
        total += i * i % 7
    return {"n": n, "total": total}


if __name__ == "__main__":
    app.start(port=int(os.environ.get("APIPOD_PORT", "8000")), host=os.environ.get("APIPOD_HOST", "127.0.0.1"))
