# A no-op endpoint on the PyPI `apipod` package (SocAIty) in its serverless localhost mode:
# with APIPOD_COMPUTE=serverless (provider localhost, the default) APIPod() is FastAPI plus its
# in-process JobQueue, the toolkit's "serverless emulation": a submit answers with a job
# (`job_id`, `status`, `links.status`), a thread runs the job, GET /status/{job_id} reads it.
# Run with its own virtualenv (bench/serve/.venv-apipod or bench/jobs/.venv-apipod):
#   APIPOD_COMPUTE=serverless APIPOD_HOST=127.0.0.1 APIPOD_PORT=8003 .venv-apipod/bin/python service.py
import os

from apipod import APIPod

app = APIPod(title="bench-jobs")


# The default queue holds 500 jobs per endpoint; the throughput run keeps more in flight.
@app.endpoint("/noop", queue_size=100_000)
def noop() -> dict:
    return {"ok": True}


if __name__ == "__main__":
    app.start(port=int(os.environ.get("APIPOD_PORT", "8000")), host=os.environ.get("APIPOD_HOST", "127.0.0.1"))
