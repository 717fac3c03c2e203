"""The client address trusts X-Forwarded-For only as far as OPERATOR_TRUSTED_PROXIES says, and only from the proxy."""

from django.conf import settings
from django.test import RequestFactory, SimpleTestCase, override_settings

from operator_core.client_ip import client_ip, from_trusted_proxy

PROXY_NETWORK = "10.0.0.0/24"


def _operator(**changes: object) -> dict[str, object]:
    return {**settings.OPERATOR, "proxy_networks": [PROXY_NETWORK], **changes}


class ClientIpTests(SimpleTestCase):
    def setUp(self) -> None:
        self.request = RequestFactory().get(
            "/", REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="203.0.113.9, 198.51.100.7"
        )

    def test_forwarded_header_is_ignored_by_default(self) -> None:
        self.assertEqual(client_ip(self.request), "10.0.0.5")

    @override_settings(OPERATOR=_operator(trusted_proxies=1))
    def test_one_trusted_proxy_takes_the_rightmost_address(self) -> None:
        self.assertEqual(client_ip(self.request), "198.51.100.7")

    @override_settings(OPERATOR=_operator(trusted_proxies=2))
    def test_two_trusted_proxies_take_the_second_from_the_right(self) -> None:
        self.assertEqual(client_ip(self.request), "203.0.113.9")

    @override_settings(OPERATOR=_operator(trusted_proxies=1))
    def test_missing_header_falls_back_to_the_peer(self) -> None:
        request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.5")
        self.assertEqual(client_ip(request), "10.0.0.5")

    @override_settings(OPERATOR=_operator(trusted_proxies=1))
    def test_a_peer_outside_the_proxy_addresses_is_its_own_address_whatever_it_forwards(self) -> None:
        request = RequestFactory().get("/", REMOTE_ADDR="192.0.2.44", HTTP_X_FORWARDED_FOR="198.51.100.7")
        self.assertEqual(client_ip(request), "192.0.2.44")
        self.assertFalse(from_trusted_proxy(request))

    @override_settings(OPERATOR=_operator(trusted_proxies=1, proxy_networks=["10.0.0.5"]))
    def test_a_proxy_on_a_dual_stack_socket_is_recognised(self) -> None:
        request = RequestFactory().get("/", REMOTE_ADDR="::ffff:10.0.0.5", HTTP_X_FORWARDED_FOR="198.51.100.7")
        self.assertEqual(client_ip(request), "198.51.100.7")
