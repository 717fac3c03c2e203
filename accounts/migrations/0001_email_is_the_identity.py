"""The email is a person's identity: stored normalised, unique without regard to case, and the username.

Existing accounts keep their sign-in: each email is normalised (NFKC, trimmed,
lower-cased: accounts/emails.py, copied here so this migration never changes)
and becomes the username. Accounts with no email are left as they are. If two
accounts would share an email, or an email is too long to be a username, the
migration stops before changing anything and names the accounts by id.
"""

import unicodedata
from collections import defaultdict

from django.db import migrations

USERNAME_MAX_LENGTH = 150


class AccountsNeedAttention(Exception):
    pass


def _normalized(email):
    return unicodedata.normalize("NFKC", email).strip().lower()


def emails_become_usernames(apps, schema_editor):
    User = apps.get_model("auth", "User")
    accounts = list(User.objects.order_by("pk").values_list("pk", "username", "email"))
    by_email = defaultdict(list)
    for pk, _, email in accounts:
        if _normalized(email or ""):
            by_email[_normalized(email)].append(pk)
    problems = []
    for ids in by_email.values():
        if len(ids) > 1:
            problems.append(
                f"accounts {', '.join(map(str, ids))} have the same email once case is ignored: "
                "give all but one another email, or delete the ones no longer used"
            )
    emailed = {pk for ids in by_email.values() for pk in ids}
    taken = {username: pk for pk, username, _ in accounts if pk not in emailed}
    for email, ids in by_email.items():
        if len(email) > USERNAME_MAX_LENGTH:
            problems.append(f"account {ids[0]} has an email longer than {USERNAME_MAX_LENGTH} characters: shorten it")
        elif email in taken:
            problems.append(
                f"account {taken[email]} has no email and its username is the email of account {ids[0]}: "
                "rename or delete one of them"
            )
    if problems:
        raise AccountsNeedAttention(
            "The email becomes each person's identity, and these accounts must be fixed first (in the admin or a "
            "database shell), then `manage.py migrate` run again; nothing was changed:\n- " + "\n- ".join(problems)
        )
    for pk, username, email in accounts:
        normal = _normalized(email or "")
        if normal and (normal != email or normal != username):
            User.objects.filter(pk=pk).update(email=normal, username=normal)


class Migration(migrations.Migration):
    initial = True

    dependencies = [("auth", "0012_alter_user_first_name_max_length")]

    operations = [
        migrations.RunPython(emails_become_usernames, migrations.RunPython.noop),
        # One account per email in any case; accounts with no email are not concerned.
        migrations.RunSQL(
            "CREATE UNIQUE INDEX accounts_user_email_lower ON auth_user (LOWER(email)) WHERE email <> ''",
            "DROP INDEX accounts_user_email_lower",
        ),
    ]
