"""`{% load display_text %}`: `display_safe`, for a client's name on a page (operator_core/display_text.py)."""

from django import template

from operator_core.display_text import display_safe as display_safe_text

register = template.Library()


@register.filter
def display_safe(value: object) -> str:
    """`value` as text with every hidden character shown as U+FFFD; escaped by the template as usual."""
    return display_safe_text("" if value is None else str(value))
