from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("account/password-reset/", views.ResetRequestView.as_view(), name="password-reset"),
    path("account/password-reset/sent/", views.ResetSentView.as_view(), name="password-reset-sent"),
    path(
        "account/password-reset/<uidb64>/<token>/",
        views.ResetConfirmView.as_view(),
        name="password-reset-confirm",
    ),
    path("account/password-reset/done/", views.ResetCompleteView.as_view(), name="password-reset-complete"),
]
