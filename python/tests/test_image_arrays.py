"""ImageFile arrays as the apipod toolkit's OpenCV gives them: BGR(A), palettes expanded."""
import base64
import io
import struct
import sys
import unittest
import zlib
from unittest import mock

from apipod import ImageFile
from tests.test_media import importable
from tests.test_worker import WorkerTestCase
from tests.worker_process import service_path

needs_numpy_and_pillow = unittest.skipUnless(importable("numpy") and importable("PIL.Image"),
                                             "numpy and Pillow are not installed")


def encoded(image, format: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=format, **options)
    return buffer.getvalue()


def red_image(mode: str = "RGB", size=(4, 3)):
    from PIL import Image
    return Image.new(mode, size, {"RGB": (255, 0, 0), "RGBA": (255, 0, 0, 128)}[mode])


def png_16_bit(colour_type: int, channels: int, width: int = 2, height: int = 1) -> bytes:
    """A 16-bit PNG of a colour type Pillow cannot write: every sample 0x1234."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x12\x34" * channels * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 16, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def with_tiff_extra_samples(tiff: bytes, value: int) -> bytes:
    """A little-endian TIFF from Pillow with its ExtraSamples (tag 338) set to `value`."""
    data = bytearray(tiff)
    directory = struct.unpack_from("<I", data, 4)[0]
    for entry in range(struct.unpack_from("<H", data, directory)[0]):
        offset = directory + 2 + 12 * entry
        if struct.unpack_from("<H", data, offset)[0] == 338:
            struct.pack_into("<H", data, offset + 8, value)
            return bytes(data)
    raise AssertionError("no ExtraSamples tag")


@unittest.skipUnless(importable("numpy") and importable("cv2"), "numpy and OpenCV are not installed")
class WithoutPillowTest(unittest.TestCase):
    """What installing the apipod toolkit gives a service: OpenCV (through media-toolkit) and no Pillow."""

    def setUp(self):
        hidden = mock.patch.dict(sys.modules, {"PIL": None, "PIL.Image": None})
        hidden.start()
        self.addCleanup(hidden.stop)

    def test_opencv_decodes_and_encodes_as_media_toolkit_calls_it(self):
        import cv2
        import numpy
        png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==")
        image = ImageFile.from_bytes(png)
        array = image.to_np_array()
        self.assertEqual((array.shape, array[0, 0].tolist(), image.channels, image.dimensions), ((2, 2, 3), [0, 0, 255], 3, (2, 2)))
        written = ImageFile().from_np_array(array, "jpg")
        self.assertEqual((written.content_type, written.to_bytes()), ("image/jpeg", cv2.imencode(".jpg", array)[1].tobytes()))
        self.assertTrue(numpy.array_equal(numpy.array(ImageFile().from_np_array(array)), array))

    def test_bytes_that_are_no_image_say_so(self):
        with self.assertRaisesRegex(ValueError, "ImageFile.to_np_array: the file is not an image OpenCV can read"):
            ImageFile.from_bytes(b"no image").to_np_array()


@needs_numpy_and_pillow
class DecodeTest(unittest.TestCase):
    def test_colour_images_come_in_bgr_order(self):
        for format in ("PNG", "BMP", "TIFF", "WEBP"):
            with self.subTest(format=format):
                array = ImageFile.from_bytes(encoded(red_image(), format, **({"lossless": True} if format == "WEBP" else {}))).to_np_array()
                self.assertEqual((array.shape, array[0, 0].tolist()), ((3, 4, 3), [0, 0, 255]))
        self.assertEqual(ImageFile.from_bytes(encoded(red_image(), "JPEG")).to_np_array()[0, 0].tolist(), [0, 0, 254])

    def test_alpha_comes_last_in_bgra_order(self):
        array = ImageFile.from_bytes(encoded(red_image("RGBA"), "PNG")).to_np_array()
        self.assertEqual((array.shape, array[0, 0].tolist()), ((3, 4, 4), [0, 0, 255, 128]))

    def test_a_palette_png_or_gif_is_expanded_to_colour(self):
        palette = red_image().convert("P")
        for format in ("PNG", "GIF"):
            with self.subTest(format=format):
                array = ImageFile.from_bytes(encoded(palette, format)).to_np_array()
                self.assertEqual((array.shape, array[0, 0].tolist()), ((3, 4, 3), [0, 0, 255]))

    def test_a_transparent_palette_or_an_animated_gif_gets_an_alpha_channel(self):
        palette = red_image().convert("P")
        transparent = ImageFile.from_bytes(encoded(palette, "PNG", transparency=0)).to_np_array()
        self.assertEqual(transparent.shape, (3, 4, 4))
        blue = red_image().convert("P")
        blue.putpalette([0, 0, 255] * 256)
        animated = ImageFile.from_bytes(encoded(palette, "GIF", save_all=True, append_images=[blue])).to_np_array()
        self.assertEqual((animated.shape, animated[0, 0].tolist()), ((3, 4, 4), [0, 0, 255, 255]))

    def test_greyscale_stays_two_dimensional_and_16_bit_stays_16_bit(self):
        import numpy
        from PIL import Image
        grey = ImageFile.from_bytes(encoded(Image.new("L", (4, 3), 7), "PNG")).to_np_array()
        self.assertEqual((grey.shape, grey.dtype, int(grey[0, 0])), ((3, 4), numpy.uint8, 7))
        bilevel = ImageFile.from_bytes(encoded(Image.new("1", (4, 3), 1), "PNG")).to_np_array()
        self.assertEqual(int(bilevel[0, 0]), 255)
        deep = numpy.full((3, 4), 60000, numpy.uint16)
        decoded = ImageFile.from_bytes(encoded(Image.fromarray(deep), "PNG")).to_np_array()
        self.assertEqual((decoded.dtype, int(decoded[0, 0])), (numpy.uint16, 60000))

    def test_16_bit_colour_is_refused_rather_than_cut_to_8_bits(self):
        # OpenCV gives uint16 BGR(A); Pillow opens these as 8-bit RGB(A), which would be silently wrong.
        for colour_type, channels in ((2, 3), (6, 4), (4, 2)):
            with self.subTest(colour_type=colour_type):
                with self.assertRaisesRegex(ValueError, "16-bit colour image.*decode it with OpenCV"):
                    ImageFile.from_bytes(png_16_bit(colour_type, channels)).to_np_array()
        self.assertEqual(int(ImageFile.from_bytes(png_16_bit(0, 1)).to_np_array()[0, 0]), 0x1234)

    def test_signed_16_bit_greyscale_tiff_stays_int16(self):
        import numpy
        pixels = numpy.array([-5, 300], "<i2").tobytes()
        # Pillow writes int16 as 32 bits: a one-strip greyscale TIFF of 16-bit signed samples by hand.
        tags = [(256, 2), (257, 1), (258, 16), (259, 1), (262, 1), (273, 8 + 2 + 10 * 12 + 4), (277, 1),
                (278, 1), (279, len(pixels)), (339, 2)]
        tiff = (b"II*\x00" + struct.pack("<IH", 8, len(tags))
                + b"".join(struct.pack("<HHII", tag, 4, 1, value) for tag, value in tags) + bytes(4) + pixels)
        decoded = ImageFile.from_bytes(tiff).to_np_array()
        self.assertEqual((decoded.dtype, decoded.tolist()), (numpy.int16, [[-5, 300]]))

    def test_tiff_alpha_is_premultiplied_as_libtiff_gives_it_whether_associated_or_not(self):
        import numpy
        from PIL import Image
        straight = numpy.array([[[30, 20, 10, 128], [200, 100, 50, 0]]], numpy.uint8)
        tiff = encoded(Image.fromarray(straight), "TIFF")
        unassociated = ImageFile.from_bytes(with_tiff_extra_samples(tiff, 2)).to_np_array()
        self.assertEqual(unassociated.tolist(), [[[5, 10, 15, 128], [0, 0, 0, 0]]])
        # Associated: the file holds premultiplied colours, which OpenCV returns as stored.
        premultiplied = numpy.array([[[15, 10, 5, 128], [0, 0, 0, 0]]], numpy.uint8)
        tiff = encoded(Image.fromarray(premultiplied), "TIFF")
        associated = ImageFile.from_bytes(with_tiff_extra_samples(tiff, 1)).to_np_array()
        self.assertEqual(associated.tolist(), [[[5, 10, 15, 128], [0, 0, 0, 0]]])

    def test_grey_with_alpha_becomes_bgra(self):
        from PIL import Image
        array = ImageFile.from_bytes(encoded(Image.new("LA", (4, 3), (9, 200)), "PNG")).to_np_array()
        self.assertEqual(array[0, 0].tolist(), [9, 9, 9, 200])

    def test_each_array_is_new_and_writable_and_to_cv2_img_gives_the_same(self):
        image = ImageFile.from_bytes(encoded(red_image(), "PNG"))
        array = image.to_np_array()
        array[0, 0] = 0
        self.assertEqual(image.to_cv2_img()[0, 0].tolist(), [0, 0, 255])

    def test_channels_and_dimensions_are_read_from_the_header(self):
        image = ImageFile.from_bytes(encoded(red_image("RGBA", (5, 2)), "PNG"))
        self.assertEqual((image.channels, image.dimensions), (4, (5, 2)))
        self.assertEqual(ImageFile.from_bytes(encoded(red_image().convert("P"), "GIF")).channels, 3)

    def test_bytes_that_are_no_image_say_so(self):
        with self.assertRaisesRegex(ValueError, "ImageFile.to_np_array: the file is not an image Pillow can read"):
            ImageFile.from_bytes(b"not an image").to_np_array()


def without_pillow():
    """Pillow made unimportable, as in an environment that has only what media-toolkit brings
    (OpenCV, numpy): a None in sys.modules makes `import PIL` raise ImportError."""
    return mock.patch.dict(sys.modules, {"PIL": None, "PIL.Image": None})


@unittest.skipUnless(importable("numpy") and importable("PIL.Image") and importable("cv2"),
                     "numpy, Pillow and OpenCV are not installed")
class OpenCVWithoutPillowTest(unittest.TestCase):
    def test_an_upload_decodes_with_opencv_when_pillow_is_missing_into_the_same_bgr_array(self):
        import numpy
        images = {"png": encoded(red_image(), "PNG"), "rgba png": encoded(red_image("RGBA"), "PNG"),
                  "jpeg": encoded(red_image(), "JPEG"), "greyscale": encoded(red_image().convert("L"), "PNG"),
                  "palette gif": encoded(red_image().convert("P"), "GIF")}
        with_pillow = {name: ImageFile.from_bytes(content).to_np_array() for name, content in images.items()}
        with without_pillow():
            with self.assertRaises(ImportError):
                import PIL.Image  # noqa: F401
            for name, content in images.items():
                with self.subTest(image=name):
                    image = ImageFile.from_bytes(content)
                    self.assertEqual(numpy.array(image).tolist(), with_pillow[name].tolist())
                    self.assertEqual((image.channels, image.dimensions), (with_pillow[name].shape[2] if with_pillow[name].ndim == 3 else 1, (4, 3)))

    def test_an_array_encodes_with_opencv_when_pillow_is_missing(self):
        import numpy
        bgr = numpy.zeros((3, 4, 3), numpy.uint8)
        bgr[:, :, 2] = 255
        with without_pillow():
            image = ImageFile.from_np_array(bgr, "png")
            self.assertEqual((image.content_type, image.to_np_array().tolist()), ("image/png", bgr.tolist()))
            with self.assertRaisesRegex(ValueError, "not an image OpenCV can read"):
                ImageFile.from_bytes(b"no image here").to_np_array()
        self.assertEqual(ImageFile.from_bytes(image.to_bytes()).to_np_array().tolist(), bgr.tolist())  # Pillow reads it alike


@needs_numpy_and_pillow
class EncodeTest(unittest.TestCase):
    def setUp(self):
        import numpy
        self.numpy = numpy
        self.blue_green_red = numpy.zeros((3, 4, 3), numpy.uint8) + numpy.array([255, 0, 0], numpy.uint8)

    def test_an_array_is_read_as_bgr_and_written_as_png_by_default(self):
        image = ImageFile().from_np_array(self.blue_green_red)
        self.assertEqual((image.content_type, image.file_name), ("image/png", "imagefile"))
        self.assertEqual(image.to_pil().getpixel((0, 0)), (0, 0, 255))  # blue, in Pillow's RGB

    def test_the_second_argument_is_the_image_format(self):
        image = ImageFile.from_np_array(self.blue_green_red, "jpg")
        self.assertEqual((image.content_type, image.extension, image.to_bytes()[:3]), ("image/jpeg", "jpg", b"\xff\xd8\xff"))
        self.assertEqual(ImageFile.from_np_array(self.blue_green_red, "webp").content_type, "image/webp")

    def test_without_a_format_an_image_keeps_its_own(self):
        image = ImageFile.from_bytes(encoded(red_image(), "JPEG"))
        self.assertEqual(image.from_np_array(image.to_np_array()).content_type, "image/jpeg")

    def test_arrays_round_trip_through_lossless_formats(self):
        numpy = self.numpy
        generator = numpy.random.default_rng(7)
        for shape in ((5, 6, 3), (5, 6, 4), (5, 6)):
            array = generator.integers(0, 256, shape, dtype=numpy.uint8)
            for img_type in ("png", "bmp", "tiff", "webp"):
                if img_type == "webp" and len(shape) == 2:
                    continue  # WebP has no greyscale: it comes back BGR
                with self.subTest(shape=shape, img_type=img_type):
                    again = ImageFile.from_np_array(array, img_type).to_np_array()
                    self.assertTrue(numpy.array_equal(again, array))

    def test_other_depths_are_rounded_and_clipped_to_8_bits_as_opencv_does(self):
        array = self.numpy.array([[[-3.0, 100.7, 300.0]]])
        self.assertEqual(ImageFile.from_np_array(array, "png").to_np_array()[0, 0].tolist(), [0, 101, 255])

    def test_an_rgba_tiff_is_written_without_declaring_its_alpha_as_opencv_writes_it(self):
        # Declared unassociated (Pillow's default), libtiff would hand it back premultiplied.
        from PIL import Image
        array = self.numpy.array([[[30, 20, 10, 128], [200, 100, 50, 0]]], self.numpy.uint8)
        tiff = ImageFile.from_np_array(array, "tiff").to_bytes()
        self.assertNotIn(338, Image.open(io.BytesIO(tiff)).tag_v2)
        self.assertEqual(ImageFile.from_bytes(tiff).to_np_array().tolist(), array.tolist())

    def test_tiff_keeps_float32_and_int32_greyscale_as_opencv_does(self):
        numpy = self.numpy
        for array in (numpy.array([[0.25, -3.5e6]], numpy.float32), numpy.array([[5, -70000]], numpy.int32)):
            with self.subTest(dtype=array.dtype):
                again = ImageFile.from_np_array(array, "tiff").to_np_array()
                self.assertEqual((again.dtype, again.tolist()), (array.dtype, array.tolist()))
        self.assertEqual(ImageFile.from_np_array(numpy.array([[7, -8]]), "tiff").to_np_array().dtype, numpy.int32)

    def test_tiff_depths_pillow_cannot_write_are_refused_rather_than_clipped_to_8_bits(self):
        numpy = self.numpy
        for array in (numpy.zeros((2, 2)), numpy.zeros((2, 2, 3), numpy.float32), numpy.zeros((2, 2), numpy.int16)):
            with self.subTest(dtype=array.dtype, shape=array.shape):
                with self.assertRaisesRegex(ValueError, f"cannot write a {array.dtype} .* image as TIFF with its depth"):
                    ImageFile.from_np_array(array, "tiff")

    def test_a_file_name_is_not_an_image_format(self):
        with self.assertRaisesRegex(ValueError, "img_type is an image format, one of png, jpg"):
            ImageFile.from_np_array(self.blue_green_red, "out.png")

    def test_an_array_of_no_image_shape_is_refused(self):
        with self.assertRaisesRegex(ValueError, r"shape \(2, 2, 2\)"):
            ImageFile.from_np_array(self.numpy.zeros((2, 2, 2), self.numpy.uint8))


@needs_numpy_and_pillow
class WorkerImageTest(WorkerTestCase):
    def setUp(self):
        self.worker, _ = self.start_ready_worker(service_path("upstream_images.py"))

    def send_image(self, endpoint: str, content: bytes) -> dict:
        [event] = self.call(self.worker, "c-1", endpoint, {"image": base64.b64encode(content).decode()})
        self.assertEqual(event["type"], "result", event)
        return event["value"]

    def test_an_uploaded_red_png_reads_as_bgr_in_the_function(self):
        self.assertEqual(self.send_image("/pixel", encoded(red_image(), "PNG")),
                         {"shape": [3, 4, 3], "top_left": [0, 0, 255], "channels": 3, "dimensions": [4, 3]})

    def test_an_uploaded_palette_gif_reads_as_colour(self):
        self.assertEqual(self.send_image("/pixel", encoded(red_image().convert("P"), "GIF"))["top_left"], [0, 0, 255])

    def test_the_readme_round_trip_returns_the_same_colours(self):
        result = self.send_image("/process-image", encoded(red_image(), "PNG"))
        self.assertEqual((result["file_name"], result["content_type"]), ("imagefile", "image/png"))
        from PIL import Image
        self.assertEqual(Image.open(io.BytesIO(base64.b64decode(result["content"]))).getpixel((0, 0)), (255, 0, 0))

    def test_a_jpeg_asked_for_by_format_comes_back_as_jpeg(self):
        result = self.send_image("/as-jpeg", encoded(red_image(), "PNG"))
        self.assertEqual(result["content_type"], "image/jpeg")


if __name__ == "__main__":
    unittest.main()
