from apipod import APIPod

app = APIPod()


class Model:
    pass


@app.endpoint("/predict")
def predict(prompt: str, model: Model) -> str:
    return prompt
