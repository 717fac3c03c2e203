from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_save, pre_save


class AccountsConfig(AppConfig):
    """People's identity (the email) and password recovery (docs/authentication.md)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts.identity import keep_username_in_step, save_the_username_too

        pre_save.connect(keep_username_in_step, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts.identity")
        post_save.connect(save_the_username_too, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts.identity")
