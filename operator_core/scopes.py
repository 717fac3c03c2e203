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

SCOPE_DESCRIPTIONS = {
    SCOPE_OPERATOR_READ: "Read your organization's modules and knowledge sources",
    SCOPE_OPERATOR_WRITE: "Same read access (accepted for compatibility; no tool writes)",
    SCOPE_OPENID: "Confirm your identity",
    SCOPE_PROFILE: "See your name",
    SCOPE_EMAIL: "See your email address",
    SCOPE_OFFLINE_ACCESS: "Stay connected (refresh tokens, 30 days)",
}
