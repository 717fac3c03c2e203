"""A small OpenID Connect provider, run as its own process over HTTP, that a test can steer.

Run: `python tests/identity_providers/provider_server.py PORT CLIENT_ID CLIENT_SECRET`.
It serves discovery (OpenID Connect Discovery 1.0 §4), a JWKS with its own RSA
key, an authorization endpoint that signs the configured person in at once, and
a token endpoint that checks the client's secret, the code, the redirect URI and
PKCE (RFC 7636 §4.6) before it issues a signed ID token.

`POST /control` (JSON) sets what happens next, until the next control:
- `identity`: the claims of the person (`sub`, `email`, `email_verified`);
- `claims`: claims that replace the ID token's own (`aud`, `nonce`, `exp`, `iss`, ...);
- `forge`: sign the ID token with a key the JWKS does not publish, under a published `kid`;
- `rotate`: sign with a new key under a new `kid`, published from now on;
- `deny`: answer the authorization request with `error=access_denied`;
- `discovery` / `jwks` / `token`: "ok", "malformed", "huge" or "slow" (answers after `slow_seconds`);
  `discovery` also "another_issuer" (a document naming another issuer);
- `id_jag_client_id`: the `client_id` of the ID-JAGs the token exchange issues.

For enterprise-managed authorization it is also the enterprise's provider: the token
endpoint answers an RFC 8693 token exchange of an ID token it issued for an ID-JAG
(draft-ietf-oauth-identity-assertion-authz-grant §4.3) naming the requested
`audience`, `resource` and `scope`. `POST /id-jag` (JSON `claims`, `header`, `forge`)
signs any ID-JAG a test describes, hostile ones included: `header.alg` "HS256" signs
with a shared secret, as no provider may.
"""

import base64
import hashlib
import json
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, OctKey, RSAKey

HUGE_BYTES = 2 * 1024 * 1024
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"


class Provider:
    def __init__(self, issuer: str, client_id: str, client_secret: str) -> None:
        self.issuer = issuer
        self.client_id = client_id
        self.client_secret = client_secret
        self.keys = [RSAKey.generate_key(2048, parameters={"kid": "key-1", "use": "sig", "alg": "RS256"})]
        self.codes: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.control: dict[str, Any] = {}

    def configure(self, control: dict[str, Any]) -> None:
        with self.lock:
            self.control = control
            if control.get("rotate"):
                kid = f"key-{len(self.keys) + 1}"
                self.keys.append(RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"}))

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        }

    def jwks(self) -> dict[str, Any]:
        return KeySet(self.keys).as_dict(private=False)

    def authorize(self, query: dict[str, str]) -> str:
        """The Location of the answer to an authorization request."""
        redirect_uri = query["redirect_uri"]
        if self.control.get("deny"):
            return f"{redirect_uri}?{urlencode({'error': 'access_denied', 'state': query.get('state', '')})}"
        code = secrets.token_urlsafe(24)
        with self.lock:
            self.codes[code] = {**query, "identity": dict(self.control.get("identity") or {})}
        return f"{redirect_uri}?{urlencode({'code': code, 'state': query.get('state', '')})}"

    def signing_key(self, *, forge: bool = False) -> RSAKey:
        key = self.keys[-1]
        if forge:
            return RSAKey.generate_key(2048, parameters={"kid": key.kid, "use": "sig", "alg": "RS256"})
        return key

    def id_jag(self, claims: dict[str, Any], header: dict[str, Any] | None = None, forge: bool = False) -> str:
        """An ID-JAG with these claims, signed as `header` says (RS256 with the current key by default)."""
        key: RSAKey | OctKey = self.signing_key(forge=forge)
        protected = {"alg": "RS256", "typ": "oauth-id-jag+jwt", "kid": key.kid, **(header or {})}
        if protected["alg"].startswith("HS"):
            key = OctKey.import_key(secrets.token_bytes(32))
        return jwt.encode(protected, claims, key, algorithms=[protected["alg"]])

    def exchange(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """RFC 8693 §2.2: an ID-JAG for the person of an ID token this provider issued."""
        if form.get("requested_token_type") != ID_JAG_TOKEN_TYPE or form.get("subject_token_type") != ID_TOKEN_TYPE:
            return 400, {"error": "invalid_request"}
        try:
            subject = jwt.decode(form.get("subject_token", ""), KeySet(self.keys)).claims
        except (JoseError, ValueError):
            return 400, {"error": "invalid_grant"}
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": subject["sub"],
            "aud": form.get("audience"),
            "client_id": self.control.get("id_jag_client_id", self.client_id),
            "jti": secrets.token_urlsafe(16),
            "iat": now,
            "exp": now + 300,
            **({"resource": form["resource"]} if form.get("resource") else {}),
            **({"scope": form["scope"]} if form.get("scope") else {}),
            **({"email": subject["email"]} if subject.get("email") else {}),
            **(self.control.get("claims") or {}),
        }
        document = {
            "access_token": self.id_jag(claims, forge=bool(self.control.get("forge"))),
            "issued_token_type": ID_JAG_TOKEN_TYPE,
            "token_type": "N_A",
            "expires_in": 300,
        }
        return 200, document

    def token(self, form: dict[str, str], authorization: str) -> tuple[int, dict[str, Any]]:
        scheme, _, credentials = authorization.partition(" ")
        client = base64.b64decode(credentials).decode() if scheme == "Basic" else ""
        if client != f"{self.client_id}:{self.client_secret}":
            return 401, {"error": "invalid_client"}
        if form.get("grant_type") == TOKEN_EXCHANGE:
            return self.exchange(form)
        with self.lock:
            grant = self.codes.pop(form.get("code", ""), None)
        if grant is None or grant["redirect_uri"] != form.get("redirect_uri"):
            return 400, {"error": "invalid_grant"}
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant.get("code_challenge"):
            return 400, {"error": "invalid_grant", "error_description": "PKCE verification failed"}
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": self.client_id,
            "iat": now,
            "exp": now + 300,
            "nonce": grant.get("nonce"),
            **grant["identity"],
            **(self.control.get("claims") or {}),
        }
        key = self.keys[-1]
        if self.control.get("forge"):
            key = RSAKey.generate_key(2048, parameters={"kid": key.kid, "use": "sig", "alg": "RS256"})
        id_token = jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)
        return 200, {"access_token": secrets.token_urlsafe(24), "token_type": "Bearer", "id_token": id_token}


class Handler(BaseHTTPRequestHandler):
    provider: Provider

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, *, content_type: str = "application/json", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _answer(self, part: str, status: int, document: dict[str, Any]) -> None:
        behaviour = self.provider.control.get(part, "ok")
        if behaviour == "slow":
            time.sleep(float(self.provider.control.get("slow_seconds", 3)))
        if behaviour == "malformed":
            self._send(200, b'{"issuer": [')
        elif behaviour == "another_issuer":
            self._send(200, json.dumps({**document, "issuer": "https://another.example"}).encode())
        elif behaviour == "huge":
            self._send(200, b'{"padding": "' + b"x" * HUGE_BYTES + b'"}')
        else:
            self._send(status, json.dumps(document).encode())

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/.well-known/openid-configuration":
            self._answer("discovery", 200, self.provider.discovery())
        elif parts.path == "/jwks":
            self._answer("jwks", 200, self.provider.jwks())
        elif parts.path == "/authorize":
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            self._send(302, b"", Location=self.provider.authorize(query))
        else:
            self._send(404, b"{}")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        path = urlsplit(self.path).path
        if path == "/control":
            self.provider.configure(json.loads(body))
            self._send(204, b"")
        elif path == "/id-jag":
            request = json.loads(body)
            assertion = self.provider.id_jag(request["claims"], request.get("header"), bool(request.get("forge")))
            self._send(200, json.dumps({"assertion": assertion}).encode())
        elif path == "/token":
            form = {key: values[0] for key, values in parse_qs(body).items()}
            status, document = self.provider.token(form, self.headers.get("Authorization", ""))
            self._answer("token", status, document)
        else:
            self._send(404, b"{}")


def main() -> None:
    port, client_id, client_secret = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    Handler.provider = Provider(f"http://127.0.0.1:{port}", client_id, client_secret)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
