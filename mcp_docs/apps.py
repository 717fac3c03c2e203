from django.apps import AppConfig


class McpDocsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mcp_docs"
