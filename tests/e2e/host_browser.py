"""The browser a real host opens during tests/e2e/test_hosts.py: `python -m tests.e2e.host_browser CONFIG URL`.

Hosts open the authorization URL with `$BROWSER URL` (Claude Code directly,
mcp-remote through xdg-open). This stands in for the person at the browser:
it signs in and allows consent with plain HTTP (tests/e2e/browser_flow.py),
follows the redirect to the host's loopback listener, and appends what
happened, as one JSON line, to the log CONFIG names. CONFIG is a JSON file
(`email`, `password`, `log`), so no credential passes through the host's
environment, which hosts filter.
"""

import json
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from tests.e2e.browser_flow import post_forms_until_redirect

TIMEOUT_SECONDS = 60


def main(config_path: str, url: str) -> int:
    config = json.loads(Path(config_path).read_text())
    entry: dict[str, object] = {"url": url}
    try:
        redirect_uri = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        with httpx.Client(timeout=TIMEOUT_SECONDS) as browser:
            answer = post_forms_until_redirect(
                browser, url, redirect_uri=redirect_uri, email=config["email"], password=config["password"]
            )
            entry["answer"] = sorted(answer)
            callback = browser.get(f"{redirect_uri}?{urlencode(answer)}")
            entry["callback_status"] = callback.status_code
    except (AssertionError, KeyError, httpx.HTTPError) as error:
        entry["error"] = f"{type(error).__name__}: {error}"
    with Path(config["log"]).open("a") as log:
        log.write(json.dumps(entry) + "\n")
    return 1 if "error" in entry else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[-1]))
