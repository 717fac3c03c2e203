from django.apps import AppConfig


class McpOperatorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mcp_operator"
