"""The media-toolkit API that services written for the apipod toolkit use, on svc's media files."""
import base64
import http.server
import io
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import wave
from unittest import mock

from apipod import AudioFile, ImageFile, MediaFile, VideoFile
from apipod._runtime import url_download
from tests.test_media import PNG, importable
from tests.test_worker import WorkerTestCase
from tests.worker_process import PYTHON_DIRECTORY, service_path

needs_numpy = unittest.skipUnless(importable("numpy"), "numpy is not installed")


def wav_bytes(frames: bytes, channels: int = 1, width: int = 2, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(channels)
        writer.setsampwidth(width)
        writer.setframerate(rate)
        writer.writeframes(frames)
    return buffer.getvalue()


def tone(seconds: float = 1.0, rate: int = 16000, frequency: float = 440.0) -> bytes:
    import numpy
    time = numpy.arange(int(seconds * rate)) / rate
    return wav_bytes((0.5 * numpy.sin(2 * numpy.pi * frequency * time) * 32767).astype("<i2").tobytes(), rate=rate)


class FileFactsTest(unittest.TestCase):
    def test_extension_comes_from_the_content_type_else_the_file_name(self):
        self.assertEqual(ImageFile.from_bytes(PNG, "photo.data").extension, "png")
        self.assertEqual(ImageFile.from_bytes(b"\xff\xd8\xff\xe0").extension, "jpg")
        self.assertEqual(AudioFile.from_bytes(b"RIFF\x00\x00\x00\x00WAVEfmt ").extension, "wav")
        self.assertEqual(MediaFile.from_bytes(b"?", "notes.TXT", content_type="application/octet-stream").extension, "txt")
        self.assertIsNone(MediaFile.from_bytes(b"?").extension)

    def test_file_size_in_bytes_or_decimal_units(self):
        media = MediaFile.from_bytes(bytes(1500))
        self.assertEqual((media.file_size(), media.file_size("kb"), media.file_size("MB")), (1500, 1.5, 0.0015))
        self.assertIsInstance(media.file_size(), int)

    def test_read_bytes_and_bytes_io_all_give_the_content(self):
        media = MediaFile.from_bytes(PNG)
        stream = media.to_bytes_io()
        stream.read()
        self.assertEqual((media.read(), media.read(4), bytes(media), media.to_bytes_io().read()), (PNG, PNG[:4], PNG, PNG))

    def test_from_bytesio_reads_from_the_start_and_leaves_the_buffer_there(self):
        buffer = io.BytesIO(PNG)
        buffer.seek(5)
        image = ImageFile().from_bytesio(buffer)
        self.assertEqual((image.to_bytes(), image.content_type, buffer.tell()), (PNG, "image/png", 0))

    def test_a_file_read_from_disk_keeps_its_path(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "in.png")
            with open(path, "wb") as file:
                file.write(PNG)
            self.assertEqual(ImageFile.from_file(path).path, path)
        self.assertIsNone(ImageFile.from_bytes(PNG).path)

    def test_a_file_without_a_name_gets_media_toolkits_default_name(self):
        names = [kind.from_bytes(b"x").file_name for kind in (MediaFile, ImageFile, AudioFile, VideoFile)]
        self.assertEqual(names, ["file", "imagefile", "audiofile", "file"])
        self.assertEqual(ImageFile.from_base64(base64.b64encode(PNG).decode()).file_name, "imagefile")
        self.assertEqual(ImageFile.from_bytes(PNG, "mine.png").file_name, "mine.png")

    def test_saving_a_file_with_the_default_name_adds_its_extension(self):
        with tempfile.TemporaryDirectory() as directory:
            self.assertEqual(os.path.basename(ImageFile.from_bytes(PNG).save(directory)), "imagefile.png")
            self.assertEqual(os.path.basename(ImageFile.from_bytes(PNG, "x.png").save(directory)), "x.png")

    def test_media_toolkit_names_svc_lacks_say_what_to_use_instead(self):
        with self.assertRaisesRegex(AttributeError, r"ImageFile.peek is media-toolkit API .* use to_bytes\(\)"):
            ImageFile.from_bytes(PNG).peek(8)
        with self.assertRaisesRegex(AttributeError, "VideoFile.add_audio .* PyAV"):
            VideoFile().add_audio("song.mp3")
        with self.assertRaisesRegex(NotImplementedError, "VideoFile.__iter__ .* PyAV"):
            list(VideoFile.from_bytes(b"\x00\x00\x00\x18ftypmp42"))
        self.assertFalse(hasattr(ImageFile(), "no_such_name"))


@needs_numpy
class ArraysOfFilesTest(unittest.TestCase):
    def test_a_file_that_is_not_npy_is_its_bytes_as_media_toolkit_gives_them(self):
        array = VideoFile.from_bytes(b"\x00\x01\x02\x03").to_np_array()
        self.assertEqual((array.shape, array.tolist()), ((1, 4), [[0, 1, 2, 3]]))
        self.assertEqual(MediaFile.from_bytes(bytes(8)).to_np_array(shape=(2, 4)).shape, (2, 4))

    def test_numpy_array_of_a_media_file_is_its_array(self):
        import numpy
        saved = numpy.arange(6).reshape(2, 3)
        self.assertTrue(numpy.array_equal(numpy.array(MediaFile.from_np_array(saved)), saved))
        self.assertEqual(numpy.asarray(MediaFile.from_np_array(saved), dtype=numpy.float32).dtype, numpy.float32)


@needs_numpy
class WavTest(unittest.TestCase):
    def test_sample_rate_channels_and_duration(self):
        audio = AudioFile.from_bytes(wav_bytes(bytes(2 * 2 * 8000), channels=2, rate=16000))
        self.assertEqual((audio.sample_rate, audio.channels, audio.duration), (16000, 2, 0.5))
        self.assertEqual((audio.is_mono, audio.is_stereo), (False, True))

    def test_samples_are_float32_in_minus_one_to_one_shaped_samples_by_channels(self):
        import numpy
        interleaved = numpy.array([16384, -32768, 0, 32767], "<i2").tobytes()  # two frames, left then right
        samples = AudioFile.from_bytes(wav_bytes(interleaved, channels=2)).to_np_array()
        self.assertEqual((samples.dtype, samples.shape), (numpy.float32, (2, 2)))
        self.assertEqual(samples[:, 0].tolist(), [0.5, 0.0])
        self.assertEqual(samples[:, 1].tolist(), [-1.0, 32767 / 32768])

    def test_8_and_24_bit_samples_are_scaled_the_same_way(self):
        eight = AudioFile.from_bytes(wav_bytes(bytes([128, 192, 0]), width=1)).to_np_array()
        self.assertEqual(eight[:, 0].tolist(), [0.0, 0.5, -1.0])
        twenty_four = AudioFile.from_bytes(wav_bytes(b"\x00\x00\x40" + b"\x00\x00\x80", width=3)).to_np_array()
        self.assertEqual(twenty_four[:, 0].tolist(), [0.5, -1.0])

    def test_resampling_keeps_the_pitch(self):
        import numpy
        samples, rate = AudioFile.from_bytes(tone(rate=16000)).to_np_array(sr=8000, return_sample_rate=True)
        self.assertEqual((rate, samples.shape), (8000, (8000, 1)))
        spectrum = numpy.abs(numpy.fft.rfft(samples[:, 0]))
        self.assertEqual(int(numpy.argmax(spectrum) * rate / len(samples)), 440)

    def test_from_np_array_writes_16_bit_wav_in_either_layout(self):
        import numpy
        mono = AudioFile().from_np_array(numpy.array([0.0, 0.5, -1.0]), sample_rate=8000)
        self.assertEqual((mono.content_type, mono.file_name, mono.sample_rate, mono.channels), ("audio/wav", "audiofile", 8000, 1))
        self.assertEqual(mono.to_np_array()[:, 0].tolist(), [0.0, 16383 / 32768, -32767 / 32768])
        stereo_soundfile = numpy.array([[0.5, -0.5], [0.25, -0.25]])  # (samples, channels)
        written = AudioFile.from_np_array(stereo_soundfile, sample_rate=8000, array_layout="soundfile")
        self.assertEqual((written.channels, written.to_np_array().shape), (2, (2, 2)))
        chunks = AudioFile.from_np_array([numpy.zeros(3, numpy.int16), numpy.ones(2, numpy.int16)])
        self.assertEqual((chunks.sample_rate, chunks.to_np_array().shape), (44100, (5, 1)))

    def test_other_formats_are_named_with_what_decodes_them(self):
        mp3 = AudioFile.from_bytes(b"ID3\x04\x00rest", "song.mp3")
        for read in (lambda: mp3.to_np_array(), lambda: mp3.sample_rate, lambda: mp3.duration):
            with self.assertRaisesRegex(NotImplementedError, "reads WAV audio only, and this file is audio/mpeg.*PyAV"):
                read()
        with self.assertRaisesRegex(NotImplementedError, "writes WAV"):
            AudioFile.from_np_array([0.0], audio_format="mp3")

    def test_a_wav_the_wave_module_cannot_read_says_so(self):
        float_wav = wav_bytes(bytes(8))[:20] + b"\x03\x00" + wav_bytes(bytes(8))[22:]  # format 3: IEEE float
        with self.assertRaisesRegex(ValueError, "wave module cannot read this WAV file"):
            AudioFile.from_bytes(float_wav).to_np_array()


class _FileServer(http.server.BaseHTTPRequestHandler):
    files = {"/red.png": (PNG, {}), "/download": (PNG, {"Content-Disposition": 'attachment; filename="named.png"'}),
             "/big": (bytes(4096), {})}

    def do_GET(self):
        if self.path == "/cut-short":  # says 100 bytes, sends 3 and closes
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"abc")
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if self.path == "/trickle":  # a byte every 50 ms, for 2 s
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(40):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.05)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up, as it should
            return
        if self.path == "/not-http":
            self.wfile.write(b"NOT HTTP\r\n\r\n")
            return
        if self.path not in self.files:
            self.send_error(404)
            return
        content, headers = self.files[self.path]
        self.send_response(200)
        self.send_header("Content-Length", str(len(content)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, *arguments):
        pass


class FromUrlTest(unittest.TestCase):
    def setUp(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FileServer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.base = f"http://127.0.0.1:{server.server_address[1]}"

    def test_a_url_is_downloaded_and_named_after_its_path(self):
        image = ImageFile().from_url(self.base + "/red.png")
        self.assertEqual((image.to_bytes(), image.file_name, image.content_type), (PNG, "red.png", "image/png"))
        self.assertEqual(ImageFile.from_any(self.base + "/red.png").to_bytes(), PNG)

    def test_content_disposition_names_the_file(self):
        self.assertEqual(MediaFile.from_url(self.base + "/download").file_name, "named.png")

    def test_a_missing_file_is_an_error_naming_the_status(self):
        with self.assertRaisesRegex(OSError, r"cannot download .*/gone: HTTP 404"):
            MediaFile.from_url(self.base + "/gone")

    def test_a_download_over_the_size_limit_stops(self):
        with mock.patch.object(url_download, "MAX_DOWNLOAD_BYTES", 1000):
            with self.assertRaisesRegex(OSError, "over the limit of 1000"):
                MediaFile.from_url(self.base + "/big")

    def test_a_body_shorter_than_its_content_length_is_an_error_not_a_truncated_file(self):
        with self.assertRaisesRegex(OSError, "closed the connection after 3 of its 100 bytes"):
            MediaFile.from_url(self.base + "/cut-short")

    def test_the_time_limit_holds_while_a_server_trickles_bytes(self):
        # One read waits for a whole chunk; the limit is checked between reads, so a server
        # sending a byte at a time must not hold the download past it.
        started = time.monotonic()
        with mock.patch.object(url_download, "MAX_DOWNLOAD_SECONDS", 0.3):
            with self.assertRaisesRegex(OSError, "took over 0.3 s"):
                MediaFile.from_url(self.base + "/trickle")
        self.assertLess(time.monotonic() - started, 1.5)

    def test_a_reply_that_is_not_http_is_an_os_error(self):
        with self.assertRaisesRegex(OSError, "cannot download .*/not-http: a broken HTTP reply .*NOT HTTP"):
            MediaFile.from_url(self.base + "/not-http")

    def test_a_url_http_client_refuses_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, "nonnumeric port"):
            MediaFile.from_url("http://127.0.0.1:port/x")

    def test_only_http_and_https_urls_are_read(self):
        with self.assertRaisesRegex(ValueError, "http or https URL"):
            MediaFile.from_url("file:///etc/passwd")


@needs_numpy
class WorkerMediaTest(WorkerTestCase):
    def setUp(self):
        self.worker, _ = self.start_ready_worker(service_path("upstream_media.py"))

    def result(self, endpoint: str, arguments: dict):
        [event] = self.call(self.worker, "c-1", endpoint, arguments)
        return event

    def test_an_uploaded_file_answers_media_toolkits_questions(self):
        event = self.result("/file-facts", {"file": {"file_name": "red.png", "content": base64.b64encode(PNG).decode()}})
        self.assertEqual(event["value"], {"file_name": "red.png", "extension": "png", "kb": 0.032, "bytes": 32,
                                          "head": "89504e47", "same": True, "path": None})

    def test_an_uploaded_wav_tells_its_rate_channels_and_duration(self):
        event = self.result("/info", {"audio": base64.b64encode(tone()).decode()})
        self.assertEqual(event["value"], {"sample_rate": 16000, "channels": 1, "duration": 1.0, "extension": "wav",
                                          "shape": [16000, 1]})

    def test_audio_made_from_an_array_comes_back_as_wav(self):
        value = self.result("/beep", {"seconds": 0.25})["value"]
        self.assertEqual((value["file_name"], value["content_type"]), ("audiofile", "audio/wav"))
        self.assertEqual(AudioFile.from_base64(value["content"]).duration, 0.25)

    @unittest.skipUnless(importable("PIL.Image"), "Pillow is not installed")
    def test_numpy_array_of_an_image_is_its_pixels(self):
        from PIL import Image
        buffer = io.BytesIO()
        Image.new("RGB", (4, 3)).save(buffer, format="PNG")
        self.assertEqual(self.result("/as-array", {"image": base64.b64encode(buffer.getvalue()).decode()})["value"], [3, 4, 3])

    def test_decoding_video_fails_the_call_naming_what_would(self):
        event = self.result("/frames", {"video": base64.b64encode(b"\x00\x00\x00\x18ftypmp42").decode()})
        self.assertEqual(event["error"]["type"], "NotImplementedError")
        self.assertIn("PyAV", event["error"]["message"])


class WithoutOptionalLibrariesTest(unittest.TestCase):
    def test_the_toolkit_imports_and_reads_files_without_numpy_or_pillow(self):
        script = (
            "import sys\n"
            "class Refuse:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('numpy', 'PIL'):\n"
            "            raise ImportError(f'no {name} here')\n"
            "sys.meta_path.insert(0, Refuse())\n"
            "import apipod\n"
            "image = apipod.ImageFile.from_bytes(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(8))\n"
            "print(image.file_name, image.extension, image.file_size('kb'))\n"
            "for read in (image.to_np_array, lambda: image.channels, lambda: apipod.AudioFile.from_bytes(b'RIFF').to_np_array()):\n"
            "    try:\n"
            "        read()\n"
            "    except ImportError as error:\n"
            "        print(error)\n"
        )
        completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30,
                                   env={**os.environ, "PYTHONPATH": PYTHON_DIRECTORY})
        self.assertEqual(completed.stderr, "")
        self.assertEqual(completed.stdout.splitlines(), [
            "imagefile png 0.016",
            "ImageFile.to_np_array needs numpy: pip install numpy",
            "ImageFile.channels needs Pillow or OpenCV: pip install Pillow (or opencv-python-headless)",
            "AudioFile.to_np_array needs numpy: pip install numpy",
        ])


if __name__ == "__main__":
    unittest.main()
