"""What `make run` prints before the server starts: where to go, who to sign in as, what to run.

Printed by `manage.py print_banner`, from the same addresses the front page
shows, and the demo accounts `seed_demo` has just loaded.
"""

from organizations.demo.accounts import DEMO_PASSWORD, PEOPLE, STAFF_EMAIL
from organizations.models import OPERATOR_ROLES
from site_pages.selectors import SiteAddresses

EXAMPLE_COMMAND = ".venv/bin/python examples/operator_client.py"
# The address examples/operator_client.py uses when given none.
EXAMPLE_DEFAULT_URL = "http://127.0.0.1:8000/api/mcp/operator"


def start_up_banner(addresses: SiteAddresses) -> str:
    """The banner's text, ending with a newline."""
    column = max(len(email) for email in PEOPLE) + 2
    lines = [
        f"Service Operator is starting at {addresses.base_url}/",
        "",
        f"  Front page    {addresses.base_url}/   (the MCP URL, how to connect each client)",
        f"  MCP endpoint  {addresses.mcp_url}",
        f"  Docs          {addresses.docs_url}",
        f"  Admin         {addresses.admin_url}   (sign in as {STAFF_EMAIL})",
        "",
        f"Demo accounts (password {DEMO_PASSWORD}):",
        *(f"  {email.ljust(column)}{_roles(email)}" for email in PEOPLE),
        "",
        "Connect the example client from another terminal (it opens your browser to sign in):",
        f"  {example_command(addresses)}",
        "",
    ]
    return "\n".join(lines)


def example_command(addresses: SiteAddresses) -> str:
    """The command that runs the example client against this service, `--url` only when needed."""
    if addresses.mcp_url == EXAMPLE_DEFAULT_URL:
        return EXAMPLE_COMMAND
    return f"{EXAMPLE_COMMAND} --url {addresses.mcp_url}"


def _roles(email: str) -> str:
    if email == STAFF_EMAIL:
        return "staff: the admin site only"
    roles = PEOPLE[email]
    if not roles:
        return "no role anywhere: refused with 403"
    described = ", ".join(f"{role.value} of {slug}" for slug, role in roles.items())
    if not set(OPERATOR_ROLES) & set(roles.values()):
        return f"{described}: cannot connect"
    if len(roles) > 1:
        return f"{described}: chooses at consent"
    return described
