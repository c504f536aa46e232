"""Media files: every way in and out, and content types sniffed from the bytes."""
import base64
import io
import os
import tempfile
import unittest

from apipod import AudioFile, ImageFile, MediaFile, VideoFile
from apipod._runtime.content_type import guess_content_type

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PNG_BASE64 = base64.b64encode(PNG).decode()


def importable(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


class ContentTypeTest(unittest.TestCase):
    def test_magic_bytes_name_the_format(self):
        cases = {
            PNG: "image/png",
            b"\xff\xd8\xff\xe0rest": "image/jpeg",
            b"GIF89a...": "image/gif",
            b"RIFF\x00\x00\x00\x00WEBPVP8 ": "image/webp",
            b"RIFF\x00\x00\x00\x00WAVEfmt ": "audio/wav",
            b"ID3\x04\x00": "audio/mpeg",
            b"OggS\x00": "audio/ogg",
            b"fLaC\x00": "audio/flac",
            b"\x00\x00\x00\x18ftypmp42": "video/mp4",
            b"\x00\x00\x00\x14ftypqt  ": "video/quicktime",
            b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm": "video/webm",
            b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x88matroska": "video/x-matroska",
            b"%PDF-1.7": "application/pdf",
            b"\xff\xfb\x90\x64": "audio/mpeg",  # an MP3 that opens with a frame, no ID3 tag
            b"\xff\xe3\x38\xc0": "audio/mpeg",  # MPEG 2.5 (8 kHz)
            b"\xff\xf1\x6c\x40": "audio/aac",  # ADTS
            b"FORM\x00\x00\x00\x00AIFF": "audio/aiff",
            b"\x00\x00\x00\x08wide\x00\x00\x00\x00mdat": "video/quicktime",  # a QuickTime file before ftyp
            b"\x00\x00\x00\x18ftypmif1": "image/heif",
            b"BMW drives": "application/octet-stream",  # text, though it opens as a BMP does
            b"ID3 tags are...": "application/octet-stream",
        }
        for content, content_type in cases.items():
            self.assertEqual(guess_content_type(content), content_type, content)

    def test_the_file_name_decides_when_the_bytes_do_not(self):
        self.assertEqual(guess_content_type(b"a,b\n1,2\n", "table.csv"), "text/csv")
        self.assertEqual(guess_content_type(b"plain"), "application/octet-stream")


class MediaFileTest(unittest.TestCase):
    def test_from_bytes_as_a_class_method_and_as_an_instance_method(self):
        built = ImageFile.from_bytes(PNG, "a.png")
        filled = ImageFile()
        self.assertIs(filled.from_bytes(PNG, "a.png"), filled)
        for image in (built, filled):
            self.assertIsInstance(image, ImageFile)
            self.assertEqual((image.file_name, image.content_type, image.to_bytes()), ("a.png", "image/png", PNG))

    def test_base64_round_trip(self):
        image = MediaFile.from_base64(PNG_BASE64)
        self.assertEqual(image.to_bytes(), PNG)
        self.assertEqual(image.content_type, "image/png")
        self.assertEqual(image.to_base64(), PNG_BASE64)

    def test_base64_without_padding_or_url_safe_still_decodes(self):
        data = b"\xfb\xff\xfe?"
        self.assertEqual(MediaFile.from_base64(base64.b64encode(data).decode().rstrip("=")).to_bytes(), data)
        self.assertEqual(MediaFile.from_base64(base64.urlsafe_b64encode(data).decode()).to_bytes(), data)

    def test_a_data_url_carries_its_content_type(self):
        media = MediaFile.from_base64("data:audio/wav;base64," + base64.b64encode(b"anything").decode())
        self.assertEqual((media.content_type, media.to_bytes()), ("audio/wav", b"anything"))
        self.assertEqual(MediaFile.from_base64(media.to_data_url()).to_bytes(), b"anything")

    def test_a_percent_encoded_data_url(self):
        self.assertEqual(MediaFile.from_base64("data:text/plain,hello%20world").to_bytes(), b"hello world")

    def test_text_that_is_not_base64_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, "not valid base64"):
            MediaFile.from_base64("this is not base64!")
        # Words of base64's alphabet are still text: spaces are no part of base64.
        with self.assertRaisesRegex(ValueError, "it holds spaces"):
            MediaFile.from_base64("not base64 at all")

    def test_base64_wrapped_in_lines_as_mime_writes_it(self):
        encoded = base64.b64encode(b"x" * 100).decode()
        self.assertEqual(MediaFile.from_base64(encoded[:76] + "\r\n" + encoded[76:] + "\n").to_bytes(), b"x" * 100)

    def test_base64_broken_at_any_line_break_python_knows(self):
        # Text without one is decoded without the copy that joins its lines: each must still be found.
        encoded = base64.b64encode(b"x" * 100).decode()
        for line_break in ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"):
            with self.subTest(line_break=line_break):
                self.assertEqual(MediaFile.from_base64(encoded[:40] + line_break + encoded[40:]).to_bytes(), b"x" * 100)

    def test_to_json_and_back(self):
        image = ImageFile.from_bytes(PNG, "a.png")
        self.assertEqual(image.to_json(), {"file_name": "a.png", "content_type": "image/png", "content": PNG_BASE64})
        again = ImageFile.from_dict(image.to_json())
        self.assertEqual((again.file_name, again.content_type, again.to_bytes()), ("a.png", "image/png", PNG))

    def test_file_round_trip_through_save_and_from_file(self):
        with tempfile.TemporaryDirectory() as directory:
            path = ImageFile.from_bytes(PNG, "a.png").save(directory)
            self.assertEqual(path, os.path.join(directory, "a.png"))
            loaded = ImageFile.from_file(path)
            self.assertEqual((loaded.file_name, loaded.to_bytes()), ("a.png", PNG))
            nested = AudioFile.from_bytes(b"ID3rest").save(os.path.join(directory, "deep", "song.mp3"))
            self.assertTrue(os.path.isfile(nested))
            unnamed = VideoFile.from_bytes(b"\x00\x00\x00\x18ftypmp42").save(directory)
            self.assertEqual(os.path.basename(unnamed), "file.mp4")

    def test_from_file_reads_an_open_binary_file(self):
        media = MediaFile.from_file(io.BytesIO(PNG))
        self.assertEqual((media.to_bytes(), media.content_type), (PNG, "image/png"))

    def test_from_any_reads_each_kind_of_source(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "b.png")
            with open(path, "wb") as file:
                file.write(PNG)
            sources = [PNG, bytearray(PNG), PNG_BASE64, "data:image/png;base64," + PNG_BASE64, path,
                       ImageFile.from_bytes(PNG), {"content": PNG_BASE64}, io.BytesIO(PNG)]
            for source in sources:
                with self.subTest(source=type(source).__name__):
                    self.assertEqual(ImageFile.from_any(source).to_bytes(), PNG)

    def test_from_any_converts_between_media_classes(self):
        audio = AudioFile.from_any(MediaFile.from_bytes(b"ID3...", "a.mp3"))
        self.assertIsInstance(audio, AudioFile)
        self.assertEqual((audio.file_name, audio.content_type), ("a.mp3", "audio/mpeg"))

    def test_from_any_refuses_what_it_cannot_read(self):
        with self.assertRaisesRegex(TypeError, "ImageFile.from_any cannot read a int"):
            ImageFile.from_any(42)

    def test_an_explicit_content_type_wins_over_sniffing(self):
        self.assertEqual(MediaFile.from_bytes(PNG, content_type="image/x-custom").content_type, "image/x-custom")


@unittest.skipUnless(importable("PIL.Image"), "Pillow is not installed")
class PillowTest(unittest.TestCase):
    def test_a_pil_image_round_trips(self):
        from PIL import Image
        picture = Image.new("RGB", (3, 2), (255, 0, 0))
        image = ImageFile.from_any(picture)
        self.assertEqual(image.content_type, "image/png")
        self.assertEqual(image.to_pil().size, (3, 2))
        self.assertEqual(ImageFile.from_pil(picture).to_pil().getpixel((0, 0)), (255, 0, 0))


@unittest.skipUnless(importable("numpy"), "numpy is not installed")
class NumpyTest(unittest.TestCase):
    def test_an_array_round_trips_as_npy(self):
        import numpy
        array = numpy.arange(6).reshape(2, 3)
        media = MediaFile.from_any(array)
        self.assertEqual(media.content_type, "application/x-npy")
        self.assertTrue((media.to_np_array() == array).all())

    @unittest.skipUnless(importable("PIL.Image"), "Pillow is not installed")
    def test_an_image_array_round_trips_as_png(self):
        import numpy
        array = numpy.zeros((2, 3, 3), dtype=numpy.uint8)
        image = ImageFile.from_any(array)
        self.assertEqual(image.content_type, "image/png")
        self.assertEqual(image.to_np_array().shape, (2, 3, 3))


if __name__ == "__main__":
    unittest.main()
