"""Driving the sign-in and consent pages with plain HTTP, as a person in a browser would.

The SDK's OAuth provider hands a redirect handler the authorize URL; these
helpers follow redirects, fill the sign-in form (the email, then the password;
or, for a domain with an identity provider, follow the page's link to it) and the
consent form (the first organization offered, then Allow), and stop at the
redirect back to the client, whose query carries `code`, `state` and `iss`.
"""

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

MAX_STEPS = 12


@dataclass
class Form:
    action: str
    fields: dict[str, str] = field(default_factory=dict)
    choices: dict[str, list[str]] = field(default_factory=dict)
    buttons: dict[str, str] = field(default_factory=dict)


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append(Form(action=attributes.get("action", "")))
            return
        if not self.forms or "name" not in attributes:
            return
        form = self.forms[-1]
        name = attributes["name"]
        if tag == "button":
            form.buttons[name] = attributes.get("value", "")
        elif tag == "input" and attributes.get("type") == "radio":
            form.choices.setdefault(name, []).append(attributes.get("value", ""))
        elif tag == "input":
            form.fields[name] = attributes.get("value", "")


def post_forms_until_redirect(
    client: httpx.Client, start_url: str, *, redirect_uri: str, email: str, password: str
) -> dict[str, str]:
    """Sign in and allow consent from `start_url`; return the query of the redirect to `redirect_uri`."""
    response = client.get(start_url)
    for _ in range(MAX_STEPS):
        location = response.headers.get("location")
        if response.is_redirect and location:
            target = urljoin(str(response.url), location)
            if target.startswith(redirect_uri):
                return {key: values[0] for key, values in parse_qs(urlsplit(target).query).items()}
            response = client.get(target)
            continue
        if response.status_code != 200:
            raise AssertionError(f"sign-in stopped at HTTP {response.status_code}: {response.text[:500]}")
        onward = _continue_link(response.text)
        if onward:
            # The page that sends the person to their organization's provider (a meta refresh and this link).
            response = client.get(html.unescape(onward))
            continue
        response = _submit(client, response, email=email, password=password)
    raise AssertionError("sign-in did not come back to the client")


def _continue_link(page: str) -> str:
    found = re.search(r'<a [^>]*id="continue" href="([^"]+)"', page)
    return found.group(1) if found else ""


def _submit(client: httpx.Client, page: httpx.Response, *, email: str, password: str) -> httpx.Response:
    parser = _FormParser()
    parser.feed(page.text)
    form = next(form for form in parser.forms if "deny" in form.buttons or "email" in form.fields)
    data = dict(form.fields)
    if "email" in data:
        # The sign-in page's first step asks for the email alone; the password, when it comes, second.
        data["email"] = email
    if "password" in data:
        data["password"] = password
    for name, values in form.choices.items():
        data[name] = values[0]
    if "allow" in form.buttons:
        data["allow"] = form.buttons["allow"]
    return client.post(urljoin(str(page.url), form.action or str(page.url)), data=data)
