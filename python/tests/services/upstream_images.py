"""The apipod toolkit's README example, with what a service reads off an image's array."""
from apipod import APIPod, ImageFile

app = APIPod()


@app.endpoint("/pixel")
def pixel(image: ImageFile):
    array = image.to_np_array()
    return {"shape": list(array.shape), "top_left": array[0, 0].tolist(), "channels": image.channels,
            "dimensions": list(image.dimensions)}


@app.endpoint("/process-image")
def process_image(image: ImageFile):
    img_array = image.to_np_array()
    return ImageFile().from_np_array(img_array)


@app.endpoint("/as-jpeg")
def as_jpeg(image: ImageFile):
    return ImageFile().from_np_array(image.to_cv2_img(), "jpg")
