# The no-op endpoint for `svc start --compute serverless` (run.js), and a short pause (crash.js).
import time

from apipod import APIPod

app = APIPod(title="bench-jobs")


@app.endpoint("/noop")
def noop() -> dict:
    return {"ok": True}


@app.endpoint("/pause")
def pause(seconds: float = 0.01) -> dict:
    """A job that takes a little time, so that a crash finds some running and many queued (crash.js)."""
    time.sleep(seconds)
    return {"ok": True}
