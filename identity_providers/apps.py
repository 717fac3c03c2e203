from django.apps import AppConfig


class IdentityProvidersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "identity_providers"
    verbose_name = "Identity providers"
