from apipod import APIPod

app = APIPod(title="Large answers")


@app.endpoint("/large")
def large(mib: int = 40) -> str:
    """A text of `mib` MiB, as a large image's base64 would be."""
    return "x" * (mib * 2**20)
