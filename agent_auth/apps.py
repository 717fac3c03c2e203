from django.apps import AppConfig


class AgentAuthConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agent_auth"
