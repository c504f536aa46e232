"""An image in, an image out: the upload arrives as an ImageFile, the result goes back as one.

Accepts a multipart upload, a base64 string or a data URL for `image`.
"""
from io import BytesIO

from PIL import Image, ImageOps

from apipod import APIPod, ImageFile, JobProgress

app = APIPod(title="Image tools")


@app.endpoint("/grayscale")
def grayscale(image: ImageFile, job_progress: JobProgress = None) -> ImageFile:
    job_progress.set_status(0.1, "decoding")
    picture = Image.open(BytesIO(image.to_bytes()))
    job_progress.set_status(0.5, "converting")
    converted = ImageOps.grayscale(picture)
    encoded = BytesIO()
    converted.save(encoded, format="PNG")
    return ImageFile.from_bytes(encoded.getvalue(), "grayscale.png")


@app.endpoint("/thumbnail")
def thumbnail(image: ImageFile, size: int = 128) -> ImageFile:
    picture = Image.open(BytesIO(image.to_bytes()))
    picture.thumbnail((size, size))
    encoded = BytesIO()
    picture.save(encoded, format="PNG")
    return ImageFile.from_bytes(encoded.getvalue(), "thumbnail.png")


if __name__ == "__main__":
    app.start()
