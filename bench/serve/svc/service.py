# Served by `svc start bench/serve/svc` (svc's own python/apipod toolkit).
from apipod import APIPod, ImageFile

app = APIPod(title="bench")


@app.endpoint("/echo")
def echo(text: str) -> dict:
    return {"text": text}


@app.endpoint("/image")
def image(image: ImageFile) -> ImageFile:
    return image


@app.endpoint("/spin")
def spin(n: int) -> dict:
    total = 0
    for i in range(n):
        total += i * i % 7
    return {"n": n, "total": total}


@app.endpoint("/mean")
def mean(values: list[float]) -> dict:
    return {"count": len(values), "mean": sum(values) / len(values)}
