"""Test suite of Service Operator (`manage.py test tests`)."""
