"""The names and modules services written for the apipod toolkit import."""
import base64
import json
import os
import subprocess
import sys
import tempfile
import unittest

import apipod
from apipod import ChatCompletionRequest
from apipod.common import constants
from tests.test_media import PNG, importable
from tests.test_worker import WorkerTestCase
from tests.worker_process import PYTHON_DIRECTORY, REPOSITORY, service_path

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

    def test_upstream_modules_services_import_are_there(self):
        from apipod.api import APIPod
        from apipod.common.constants import SERVER_HEALTH
        from apipod.common.exceptions import FileUploadException, InsufficientBalanceException, JobException
        from apipod.common.settings import APIPOD_HOST, APIPOD_PORT, DEFAULT_DATE_TIME_FORMAT  # noqa: F401
        from apipod.CONSTS import ORCHESTRATOR
        from apipod.core.job.job_progress import JobProgress as OldJobProgress
        from apipod.core.job.job_result import JobResult as OldJobResult
        from apipod.engine.jobs.job_progress import JobProgress
        from apipod.engine.jobs.job_result import FileModel, JobResult
        self.assertIs(APIPod, apipod.APIPod)
        self.assertEqual((SERVER_HEALTH.RUNNING.value, ORCHESTRATOR.LOCAL.value), ("running", "local"))
        self.assertEqual((JobProgress, OldJobProgress, JobResult, OldJobResult, FileModel),
                         (apipod.JobProgress, apipod.JobProgress, apipod.JobResult, apipod.JobResult, apipod.FileModel))
        self.assertEqual(str(FileUploadException("a.png", "too large")), "FileUploadException: a.png - too large")
        self.assertEqual(str(InsufficientBalanceException()), "Insufficient balance")
        self.assertTrue(issubclass(FileUploadException, JobException))
        self.assertIsInstance(APIPOD_PORT, int)
        with self.assertRaisesRegex(ImportError, "JobResultFactory is part of upstream's own job queue"):
            from apipod.engine.jobs.job_result import JobResultFactory  # noqa: F401

    def test_upstream_server_modules_fail_saying_what_svc_does_instead(self):
        with self.assertRaisesRegex(ImportError, r"apipod.engine.streaming is part of upstream's own streaming.*"
                                                 r"svc's toolkit does not provide it"):
            import apipod.engine.streaming.stream_producer  # noqa: F401
        with self.assertRaisesRegex(ImportError, "apipod.engine.backend is part of upstream's FastAPI and runpod server"):
            from apipod.engine.backend.fastapi.router import SocaityFastAPIRouter  # noqa: F401
        with self.assertRaisesRegex(ImportError, "apipod.deploy is part of upstream's deploy tooling: svc scan and svc build"):
            from apipod.deploy.scanner import Scanner  # noqa: F401
        with self.assertRaisesRegex(ImportError, "apipod.models is one of upstream's model-loading presets"):
            from apipod import models  # noqa: F401
        with self.assertRaisesRegex(ModuleNotFoundError, "No module named 'apipod.never_was'"):
            import apipod.never_was  # noqa: F401

    @unittest.skipUnless(importable("socaity_schemas"), "socaity-schemas is not installed")
    def test_socaity_schemas_names_are_its_own_classes_when_it_is_installed(self):
        from socaity_schemas.public.inference.generation import ImageGenerationRequest as Real
        from socaity_schemas.public.inference.language import EmbeddingRequest as RealEmbedding

        from apipod.common import schemas
        from apipod.common.schemas import EmbeddingRequest, ImageGenerationRequest
        self.assertEqual((EmbeddingRequest, ImageGenerationRequest, schemas.EmbeddingRequest),
                         (RealEmbedding, Real, RealEmbedding))
        self.assertIs(schemas.ChatCompletionRequest, ChatCompletionRequest)  # svc's, which its chat routes build on

    def test_without_socaity_schemas_its_names_say_to_install_it(self):
        imported = subprocess.run(
            [sys.executable, "-c", "import sys; sys.modules['socaity_schemas'] = None\n"
                                   "from apipod.common.schemas import EmbeddingRequest"],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": PYTHON_DIRECTORY})
        self.assertIn("SchemaNotAvailable: apipod.common.schemas.EmbeddingRequest is socaity-schemas' EmbeddingRequest, "
                      "as in the apipod toolkit, and the service's environment does not have socaity-schemas: install "
                      "it (pip install socaity-schemas", imported.stderr)

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

    def test_a_chat_request_extended_with_a_field_reads_it_from_the_request(self):
        messages = [{"role": "user", "content": "hi"}]
        [event] = self.call(self.worker, "c-1", "/chat-extended", {"request": {"messages": messages, "persona": "cat"}})
        self.assertEqual(event["value"], "[cat] hi")
        [event] = self.call(self.worker, "c-2", "/chat-extended", {"request": {"messages": messages}})
        self.assertEqual(event["value"], "[pirate] hi")

    def test_the_readme_chat_endpoint_answers(self):
        chat = next(endpoint for endpoint in self.ready["endpoints"] if endpoint["path"] == "/chat")
        self.assertTrue(chat["is_chat"])
        [chunk, _] = self.call(self.worker, "c-2", "/chat", {"request": {"messages": [{"role": "user", "content": "hi"}]}})
        self.assertEqual(chunk["value"], "echo: hi")


@unittest.skipUnless(importable("socaity_schemas") and importable("pydantic"), "socaity-schemas is not installed")
class WorkerSocaitySchemasTest(WorkerTestCase):
    def setUp(self):
        self.worker, self.ready = self.start_ready_worker(service_path("upstream_schemas.py"))

    def test_an_endpoint_taking_socaity_schemas_request_answers_with_its_response(self):
        schemas = {endpoint["path"]: endpoint["input_schema"] for endpoint in self.ready["endpoints"]}
        self.assertEqual(schemas["/embed"]["properties"]["request"]["title"], "EmbeddingRequest")
        # The toolkit reads such a "schema endpoint"'s whole body as the model; the gateway does too.
        body_parameters = {endpoint["path"]: endpoint["body_parameter"] for endpoint in self.ready["endpoints"]}
        self.assertEqual((body_parameters["/embed"], body_parameters["/speak"], body_parameters["/refuse"]),
                         ("request", "request", None))
        [event] = self.call(self.worker, "c-1", "/embed", {"request": {"input": ["a", "abc"]}})
        self.assertEqual([item["embedding"] for item in event["value"]["data"]], [[1.0], [3.0]])
        [event] = self.call(self.worker, "c-2", "/speak", {"request": {"input": "hi"}})
        self.assertEqual(event["value"], {"type": "socaity_schemas", "input": "hi"})

    def test_the_toolkits_exceptions_fail_the_call_as_input_the_function_refused(self):
        [event] = self.call(self.worker, "c-1", "/refuse", {"file_name": "a.txt"})
        self.assertEqual((event["type"], event["error"]["message"], event["error"]["rejects_input"]),
                         ("error", "FileUploadException: a.txt - not an image", True))
        self.assertIs(self.call(self.worker, "c-2", "/is-job-exception")[0]["value"], True)


@unittest.skipUnless(importable("fastapi") and importable("socaity_schemas"), "FastAPI or socaity-schemas is not installed")
class WorkerUploadFileTest(WorkerTestCase):
    def setUp(self):
        self.worker, self.ready = self.start_ready_worker(service_path("upload_file_annotations.py"))

    def test_fastapis_upload_file_is_a_file_parameter(self):
        schemas = {endpoint["path"]: endpoint["input_schema"] for endpoint in self.ready["endpoints"]}
        self.assertEqual(schemas["/upload"]["properties"]["anyfile3"]["x-media-type"], "file")
        self.assertEqual(schemas["/upload"]["required"], ["anyfile3"])
        self.assertNotIn("document", schemas["/maybe"]["required"])
        self.assertEqual(schemas["/mixed"]["properties"]["picture"]["x-media-type"], "image")

    def test_the_function_gets_a_media_file_that_reads_as_an_upload_file_too(self):
        text = {"file_name": "notes.txt", "content_type": "text/plain", "content": base64.b64encode(b"hello").decode()}
        [event] = self.call(self.worker, "c-1", "/upload", {"anyfile3": text})
        self.assertEqual(event["value"], {"type": "UploadedFile", "file_name": "notes.txt", "filename": "notes.txt",
                                          "content_type": "text/plain", "read": "hello", "file": "hello", "size": 5})
        [event] = self.call(self.worker, "c-2", "/maybe", {"note": "none"})
        self.assertIsNone(event["value"])
        [event] = self.call(self.worker, "c-3", "/maybe", {"document": "data:text/plain;base64,aGk="})
        self.assertEqual((event["value"]["read"], event["value"]["content_type"]), ("hi", "text/plain"))

    def test_fastapis_parameter_markers_stand_for_their_defaults(self):
        schema = next(endpoint["input_schema"] for endpoint in self.ready["endpoints"] if endpoint["path"] == "/form")
        self.assertEqual((schema["required"], schema["properties"]["note"]["default"], schema["properties"]["tags"]["default"]),
                         (["document"], "none", []))
        [event] = self.call(self.worker, "c-1", "/form", {"document": {"file_name": "a.txt", "content": "aGk="}})
        self.assertEqual(event["value"], {"document": "a.txt", "note": "none", "tags": []})
        [event] = self.call(self.worker, "c-2", "/form", {"document": "aGk=", "note": "n", "tags": ["t"]})
        self.assertEqual((event["value"]["note"], event["value"]["tags"]), ("n", ["t"]))

    def test_socaity_schemas_file_models_give_the_media_class_of_their_kind(self):
        image = {"file_name": "a.png", "content": PNG_BASE64}
        [event] = self.call(self.worker, "c-1", "/mixed", {"anyfile2": image, "img": image, "picture": image})
        self.assertEqual(event["value"], ["MediaFile", "ImageFile", "ImageFile", "image/png"])


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
