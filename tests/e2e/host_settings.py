"""Settings of the live server in tests/e2e/test_hosts.py: the project's, with one stand-in.

CI cannot reach claude.ai, where Claude Code's Client ID Metadata Document
lives. `CIMD_METADATA_FETCHER`, the project's seam for fetching such
documents, names `CapturedDocumentFetcher` (tests/hosts/captured.py): the
project's fetcher and checks, answering that one address with the captured
document. Everything else is the production configuration.
"""

from operator_site.settings import *  # noqa: F403

OAUTH2_PROVIDER = {
    **OAUTH2_PROVIDER,  # noqa: F405
    "CIMD_METADATA_FETCHER": "tests.hosts.captured.CapturedDocumentFetcher",
}
