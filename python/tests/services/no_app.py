def hello():
    return "no APIPod here"
