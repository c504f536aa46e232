# The same no-op endpoint for `svc start --compute serverless`.
from apipod import APIPod

app = APIPod(title="bench-jobs")


@app.endpoint("/noop")
def noop() -> dict:
    return {"ok": True}
