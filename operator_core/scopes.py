"""The OAuth scopes this service knows, and the words the consent page shows for each.

Either operator scope admits a token to the operator endpoint; no tool writes,
so `mcp:operator.write` grants the same read access (docs/authentication.md "Scopes").
"""

SCOPE_OPERATOR_READ = "mcp:operator.read"
SCOPE_OPERATOR_WRITE = "mcp:operator.write"
SCOPE_OPENID = "openid"
SCOPE_PROFILE = "profile"
SCOPE_EMAIL = "email"
SCOPE_OFFLINE_ACCESS = "offline_access"

OPERATOR_SCOPES = (SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE)

# What the consent page says each scope lets the application do, in plain words.
# Both operator scopes grant the same reads, so they read the same, and the page
# shows a sentence once however many scopes ask for it.
_READ_ACCESS = "See your organization's modules and knowledge sources (it cannot change anything)"
SCOPE_DESCRIPTIONS = {
    SCOPE_OPERATOR_READ: _READ_ACCESS,
    SCOPE_OPERATOR_WRITE: _READ_ACCESS,
    SCOPE_OPENID: "Know which account you signed in with",
    SCOPE_PROFILE: "See your name",
    SCOPE_EMAIL: "See your email address",
    SCOPE_OFFLINE_ACCESS: "Stay connected without asking you to sign in again",
}
