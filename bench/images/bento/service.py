"""examples/hello's two endpoints as a BentoML service, for `bentoml build` and `containerize`."""
import bentoml


@bentoml.service
class Hello:
    @bentoml.api
    def hello(self, name: str = "world", excited: bool = False) -> dict:
        punctuation = "!" if excited else "."
        return {"greeting": f"Hello, {name}{punctuation}"}

    @bentoml.api
    def add(self, a: float, b: float) -> dict:
        return {"sum": a + b}
