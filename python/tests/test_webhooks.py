"""apipod.webhooks verifies deliveries as Standard Webhooks specifies them."""
import unittest

from apipod.webhooks import WebhookVerificationError, sign_webhook, verify_webhook

# The example of the Standard Webhooks specification (its reference libraries' tests).
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
HEADERS = {
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}
BODY = '{"test": 2432232314}'


class VerifyWebhookTest(unittest.TestCase):
    def test_accepts_the_specification_example(self):
        self.assertEqual(verify_webhook(SECRET, HEADERS, BODY, now=1614265330), {"test": 2432232314})

    def test_reads_headers_in_any_case(self):
        headers = {name.title(): value for name, value in HEADERS.items()}
        self.assertEqual(verify_webhook(SECRET, headers, BODY.encode(), now=1614265330 + 299), {"test": 2432232314})

    def test_refuses_a_timestamp_beyond_five_minutes(self):
        with self.assertRaisesRegex(WebhookVerificationError, "tolerance"):
            verify_webhook(SECRET, HEADERS, BODY, now=1614265330 + 301)

    def test_refuses_a_changed_body_and_a_wrong_secret(self):
        with self.assertRaisesRegex(WebhookVerificationError, "no webhook-signature matches"):
            verify_webhook(SECRET, HEADERS, '{"test": 1}', now=1614265330)
        with self.assertRaisesRegex(WebhookVerificationError, "no webhook-signature matches"):
            verify_webhook("whsec_" + "A" * 44, HEADERS, BODY, now=1614265330)

    def test_accepts_either_signature_during_a_rotation(self):
        new = "whsec_" + "B" * 44
        headers = dict(HEADERS, **{"webhook-signature": HEADERS["webhook-signature"] + " " + sign_webhook(new, HEADERS["webhook-id"], 1614265330, BODY)})
        self.assertEqual(verify_webhook(new, headers, BODY, now=1614265330), {"test": 2432232314})
        self.assertEqual(verify_webhook(SECRET, headers, BODY, now=1614265330), {"test": 2432232314})

    def test_names_a_missing_header(self):
        with self.assertRaisesRegex(WebhookVerificationError, "webhook-id"):
            verify_webhook(SECRET, {}, BODY)


if __name__ == "__main__":
    unittest.main()
