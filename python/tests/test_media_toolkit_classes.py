"""Parameters annotated with media-toolkit's classes (upstream's ImageFile is media_toolkit's)."""
import base64
import unittest

from tests.test_media import PNG, importable
from tests.test_worker import WorkerTestCase
from tests.worker_process import service_path

PNG_BASE64 = base64.b64encode(PNG).decode()


@unittest.skipUnless(importable("media_toolkit"), "media-toolkit is not installed")
class MediaToolkitAnnotationTest(WorkerTestCase):
    def setUp(self):
        self.worker, self.ready = self.start_ready_worker(service_path("media_toolkit_annotations.py"))

    def test_they_are_described_as_the_media_they_are(self):
        endpoints = {endpoint["path"]: endpoint for endpoint in self.ready["endpoints"]}
        self.assertEqual(endpoints["/size"]["input_schema"]["properties"]["image"]["x-media-type"], "image")
        self.assertEqual(endpoints["/echo"]["input_schema"]["properties"]["audio"]["x-media-type"], "audio")
        self.assertEqual(endpoints["/echo"]["output_schema"]["x-media-type"], "audio")

    def test_the_function_gets_the_media_toolkit_class_it_names(self):
        [event] = self.call(self.worker, "c-1", "/size", {"image": {"file_name": "red.png", "content": PNG_BASE64}})
        self.assertEqual(event["value"], {"type": "media_toolkit.ImageFile", "file_name": "red.png",
                                          "content_type": "image/png", "bytes": len(PNG)})

    def test_a_media_toolkit_file_returned_is_sent_as_a_media_file(self):
        wav = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt ").decode()
        [event] = self.call(self.worker, "c-1", "/echo", {"audio": {"file_name": "a.wav", "content": wav}})
        self.assertEqual((event["value"]["file_name"], event["value"]["content"]), ("a.wav", wav))

    def test_a_file_of_another_kind_is_refused_naming_the_parameter(self):
        page = base64.b64encode(b"<html>not a picture</html>").decode()
        [event] = self.call(self.worker, "c-1", "/size", {"image": f"data:text/html;base64,{page}"})
        self.assertEqual([event["type"], event["error"]["argument"]], ["error", "image"])
        self.assertIn("expected an image (png, jpg, ", event["error"]["message"])
        self.assertIn("got bytes of no image format (labelled text/html)", event["error"]["message"])


if __name__ == "__main__":
    unittest.main()
