"""The service's URLconf plus two views that fail, to reach the 500 handlers."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from operator_site.urls import handler404, handler500
from operator_site.urls import urlpatterns as service_urlpatterns

__all__ = ["handler404", "handler500", "urlpatterns"]


def fail(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug")


urlpatterns = [path("fails", fail), path("api/fails", fail), *service_urlpatterns]
