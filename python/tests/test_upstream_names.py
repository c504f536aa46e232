"""The names and modules services written for the apipod toolkit import."""
import base64
import json
import os
import tempfile
import unittest

import apipod
from apipod import ChatCompletionRequest
from apipod.common import constants
from tests.test_media import PNG
from tests.test_worker import WorkerTestCase
from tests.worker_process import REPOSITORY, service_path

PNG_BASE64 = base64.b64encode(PNG).decode()


class NamesTest(unittest.TestCase):
    def test_upstreams_exports_that_svc_provides_import(self):
        from apipod import (APIPod, AudioFile, FileModel, ImageFile, JobLinks, JobMetrics, JobProgress,  # noqa: F401
                            JobResult, MediaDict, MediaFile, MediaList, VideoFile)
        self.assertIs(apipod.constants, constants)  # apipod.common.constants, as upstream has it
        self.assertEqual(constants.COMPUTE.SERVERLESS.value, "serverless")
        self.assertEqual(constants.PROVIDER.SOCAITY.value, "socaity")

    def test_the_version_is_svcs(self):
        with open(os.path.join(REPOSITORY, "package.json")) as file:
            self.assertEqual(apipod.__version__, json.load(file)["version"])

    def test_the_readme_chat_schema_module_gives_svcs_chat_request(self):
        from apipod.common.schemas import ChatCompletionRequest as imported
        self.assertIs(imported, ChatCompletionRequest)

    def test_upstream_names_svc_lacks_fail_saying_so(self):
        with self.assertRaisesRegex(ImportError, r"apipod.VLLMChat is one of upstream's model-loading presets.*"
                                                 r"svc's toolkit does not provide it"):
            from apipod import VLLMChat  # noqa: F401
        with self.assertRaisesRegex(ImportError, "apipod.serve is"):
            apipod.serve(None)
        with self.assertRaisesRegex(ImportError, "ImageGenerationRequest is a schema of the socaity-schemas package"):
            from apipod.common.schemas import ImageGenerationRequest  # noqa: F401

    def test_names_upstream_never_had_are_ordinary_attribute_errors(self):
        self.assertFalse(hasattr(apipod, "no_such_name"))
        with self.assertRaisesRegex(ImportError, "cannot import name 'no_such_name'"):
            from apipod import no_such_name  # noqa: F401


class MediaContainersTest(unittest.TestCase):
    def test_a_media_list_reads_its_items_into_media_files_and_keeps_the_rest(self):
        with tempfile.NamedTemporaryFile(suffix=".png") as file:
            file.write(PNG)
            file.flush()
            files = apipod.MediaList([PNG, file.name, "", None])
            kept = apipod.MediaList([file.name], read_system_files=False)
        self.assertEqual([type(item).__name__ for item in files], ["ImageFile", "ImageFile", "str", "NoneType"])
        self.assertEqual((files.to_base64(), files.file_size()), ([PNG_BASE64, PNG_BASE64], 2 * len(PNG)))
        self.assertIsInstance(kept[0], str)

    def test_text_stays_text_though_it_would_decode_as_base64(self):
        # "test" and "a cat" are valid base64 of a few bytes: media-toolkit reads raw base64 of
        # 100 characters or more only, and a data URL at any length.
        files = apipod.MediaList(["test", "a cat", "data:image/png;base64," + PNG_BASE64, base64.b64encode(PNG * 3).decode()])
        self.assertEqual([type(item).__name__ for item in files], ["str", "str", "ImageFile", "ImageFile"])
        self.assertEqual(apipod.MediaDict({"prompt": "a red car"})["prompt"], "a red car")

    def test_a_media_dict_reads_its_values(self):
        files = apipod.MediaDict({"a": PNG, "more": [PNG]})
        self.assertEqual((type(files["a"]).__name__, type(files["more"]).__name__), ("ImageFile", "MediaList"))
        self.assertEqual(files.to_json()["more"][0]["content"], PNG_BASE64)


class WorkerNamesTest(WorkerTestCase):
    def setUp(self):
        self.worker, self.ready = self.start_ready_worker(service_path("upstream_imports.py"))

    def value(self, endpoint: str, arguments: dict = None):
        [*_, event] = self.call(self.worker, "c-1", endpoint, arguments)
        self.assertIn(event["type"], ("result", "streamed"), event)
        return event.get("value")

    def test_media_list_of_images_takes_a_list_of_images_as_list_does(self):
        schemas = {endpoint["path"]: endpoint["input_schema"] for endpoint in self.ready["endpoints"]}
        self.assertEqual(schemas["/images"]["properties"]["files"], schemas["/listed"]["properties"]["files"])
        self.assertEqual(self.value("/images", {"files": [PNG_BASE64, {"file_name": "b.png", "content": PNG_BASE64}]}),
                         {"type": "MediaList", "items": ["ImageFile", "ImageFile"], "names": ["imagefile", "b.png"]})
        self.assertEqual(self.value("/any-files", {"files": [PNG_BASE64]}), ["MediaFile"])

    def test_a_file_model_parameter_takes_a_file_and_gives_a_media_file(self):
        schemas = {endpoint["path"]: endpoint["input_schema"] for endpoint in self.ready["endpoints"]}
        self.assertEqual(schemas["/upload"]["properties"]["anyfile"]["x-media-type"], "file")
        self.assertEqual(self.value("/upload", {"anyfile": {"file_name": "a.png", "content": PNG_BASE64}}),
                         {"type": "MediaFile", "file_name": "a.png", "content_type": "image/png"})

    def test_containers_and_file_models_come_back_as_media_objects(self):
        image = {"file_name": "a.png", "content_type": "image/png", "content": PNG_BASE64}
        self.assertEqual(self.value("/bundle", {"image": image}),
                         [image, {"file_name": "imagefile", "content_type": "image/png", "content": PNG_BASE64}])
        self.assertEqual(self.value("/named", {"image": image}), {"original": image})
        self.assertEqual(self.value("/wire"), {"file_name": "hi.txt", "content_type": "text/plain", "content": "aGk="})
        self.assertEqual(self.value("/job")["status"], "finished")

    def test_the_readme_chat_endpoint_answers(self):
        chat = next(endpoint for endpoint in self.ready["endpoints"] if endpoint["path"] == "/chat")
        self.assertTrue(chat["is_chat"])
        [chunk, _] = self.call(self.worker, "c-2", "/chat", {"request": {"messages": [{"role": "user", "content": "hi"}]}})
        self.assertEqual(chunk["value"], "echo: hi")


class SchemaRefusalTest(WorkerTestCase):
    def test_a_media_dict_parameter_is_refused_naming_media_list(self):
        failed = self.start_worker(self.service_from_source(
            "from apipod import APIPod, MediaDict\napp = APIPod()\n\n"
            "@app.endpoint('/files')\ndef files(files: MediaDict):\n    return len(files)\n")).next_event()
        self.assertEqual((failed["type"], failed["stage"]), ("setup_failed", "schema"))
        self.assertIn("take several files as MediaList[...]", failed["error"]["message"])

    def test_importing_a_name_svc_lacks_fails_setup_with_the_reason(self):
        failed = self.start_worker(self.service_from_source("from apipod import APIPod, VLLMChat\napp = APIPod()\n")).next_event()
        self.assertEqual((failed["type"], failed["stage"]), ("setup_failed", "import"))
        self.assertIn("svc's toolkit does not provide it", failed["error"]["message"])


if __name__ == "__main__":
    unittest.main()
