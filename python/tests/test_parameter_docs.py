"""Parameter help read from docstrings in Google, NumPy and reST style."""
import unittest

from apipod._runtime.parameter_docs import split_parameter_docs


class ParameterDocsTest(unittest.TestCase):
    def test_google_args_give_each_parameter_its_text_and_leave_the_rest(self):
        doc = ("Says a text.\n\nArgs:\n    text (str): What to say.\n        Said as written.\n"
               "    *words: More words.\n    **options: Passed on.\n\nReturns:\n    The words said.")
        rest, described = split_parameter_docs(doc)
        self.assertEqual(described, {"text": "What to say. Said as written.", "words": "More words.",
                                     "options": "Passed on."})
        self.assertEqual(rest, "Says a text.\n\nReturns:\n    The words said.")

    def test_numpy_parameters_stop_at_the_next_section(self):
        doc = ("Resizes.\n\nParameters\n----------\nwidth : int\n    The new width,\n    in pixels.\n"
               "height, depth : int, optional\n    Both sides.\n\n    Kept square.\n\nReturns\n-------\ndict\n    The size.")
        rest, described = split_parameter_docs(doc)
        self.assertEqual(described, {"width": "The new width, in pixels.", "height": "Both sides.\n\nKept square.",
                                     "depth": "Both sides.\n\nKept square."})
        self.assertEqual(rest, "Resizes.\n\nReturns\n-------\ndict\n    The size.")

    def test_rest_params_with_and_without_a_type_and_type_lines_dropped(self):
        doc = ("Labels.\n\n:param image: The picture.\n:param str caption: The label,\n    in words.\n"
               ":type caption: str\n:returns: the label.")
        rest, described = split_parameter_docs(doc)
        self.assertEqual(described, {"image": "The picture.", "caption": "The label, in words."})
        self.assertEqual(rest, "Labels.\n\n:returns: the label.")

    def test_a_docstring_without_parameters_stays_as_it_is(self):
        for doc in (None, "", "Just a summary.\n\nArgs are described elsewhere."):
            self.assertEqual(split_parameter_docs(doc), (doc, {}))


if __name__ == "__main__":
    unittest.main()
