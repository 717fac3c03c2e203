"""The demo people and organizations of `seed_demo`, and the role each person holds where."""

from organizations.models import Role

DEMO_PASSWORD = "operator-demo"
STAFF_EMAIL = "staff@operator.test"

ORGANIZATIONS = (("acme", "Acme Corporation"), ("globex", "Globex Industries"))

# email -> {organization slug: role}
PEOPLE: dict[str, dict[str, Role]] = {
    "alice@acme.test": {"acme": Role.ADMIN},
    "bob@acme.test": {"acme": Role.MEMBER},
    "carol@acme.test": {"acme": Role.LEARNER},
    "dave@acme.test": {"acme": Role.REQUESTER},
    "erin@multi.test": {"acme": Role.MEMBER, "globex": Role.ADMIN},
    "frank@nowhere.test": {},
    STAFF_EMAIL: {},
}
