"""The smallest svc service: JSON in, JSON out.

    svc start examples/hello
    curl -s localhost:8000/hello -H 'content-type: application/json' -d '{"name": "Ada"}'
"""
from apipod import APIPod

app = APIPod(title="Hello")


@app.endpoint("/hello")
def hello(name: str = "world", excited: bool = False) -> dict:
    punctuation = "!" if excited else "."
    return {"greeting": f"Hello, {name}{punctuation}"}


@app.endpoint("/add")
def add(a: float, b: float) -> dict:
    return {"sum": a + b}


if __name__ == "__main__":
    app.start()
