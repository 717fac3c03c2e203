"""Routes of site_pages: the front page and signing out."""

from django.contrib.auth.views import LogoutView
from django.urls import path

from site_pages import views

app_name = "site_pages"

urlpatterns = [
    path("", views.front_page, name="front"),
    # Django's own view: POST only, CSRF-checked, ends the session the sign-in page started.
    path("sign-out", LogoutView.as_view(next_page="site_pages:front"), name="sign-out"),
]
