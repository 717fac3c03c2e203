"""The one parse step of JSON request bodies: JSON in UTF-8, bounded depth, no lone surrogate."""

import json

from django.test import SimpleTestCase

from operator_core.json_bodies import MAX_JSON_DEPTH, MalformedJson, parse_json_body
from tests.hostile import LONE_SURROGATES, deeply_nested


class ParseJsonBodyTests(SimpleTestCase):
    def assert_malformed(self, body: bytes) -> None:
        with self.assertRaises(MalformedJson):
            parse_json_body(body)

    def test_json_is_read(self) -> None:
        self.assertEqual(parse_json_body(b'{"a": [1, 2.5, "x", null, true]}'), {"a": [1, 2.5, "x", None, True]})

    def test_nul_and_control_characters_are_valid_json(self) -> None:
        self.assertEqual(parse_json_body(b'{"a": "\\u0000\\u001b"}'), {"a": "\x00\x1b"})

    def test_a_surrogate_pair_is_one_character(self) -> None:
        self.assertEqual(parse_json_body(b'"\\ud83d\\ude00"'), "\U0001f600")

    def test_lone_surrogates_in_values_and_keys_are_malformed(self) -> None:
        for surrogate in LONE_SURROGATES:
            for value in ({"a": surrogate}, {surrogate: 1}, [[surrogate]], surrogate):
                with self.subTest(value=value):
                    self.assert_malformed(json.dumps(value).encode())

    def test_100000_levels_of_arrays_or_objects_are_malformed(self) -> None:
        for kind in ("array", "object"):
            with self.subTest(kind=kind):
                self.assert_malformed(deeply_nested(kind=kind).encode())

    def test_depth_up_to_the_limit_is_read_and_one_more_is_malformed(self) -> None:
        parse_json_body(deeply_nested(MAX_JSON_DEPTH).encode())

        self.assert_malformed(deeply_nested(MAX_JSON_DEPTH + 1).encode())

    def test_bytes_that_are_not_utf8_are_malformed(self) -> None:
        for body in (b'"\xff"', b'"\xed\xa0\x80"', '"x"'.encode("utf-16")):
            with self.subTest(body=body):
                self.assert_malformed(body)

    def test_non_json_numbers_are_malformed(self) -> None:
        for body in (b"NaN", b"[Infinity]", b'{"a": -Infinity}', b"1e400"):
            with self.subTest(body=body):
                self.assert_malformed(body)

    def test_text_that_is_not_json_is_malformed(self) -> None:
        for body in (b"", b"{", b"{'a': 1}", b"[1,]"):
            with self.subTest(body=body):
                self.assert_malformed(body)
