from django.urls import path, re_path

from portal import views

app_name = "portal"
ENV = r"(?P<environment>sandbox|production)"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("login/", views.login_view, name="login"),
    path("logout/", views.logout_view, name="logout"),
    path("client-ids/", views.client_ids, name="client-ids"),
    path("guide/", views.guide, name="guide"),
    re_path(rf"^{ENV}/pushes/$", views.pushes, name="pushes"),
    re_path(rf"^{ENV}/pushes/(?P<push_id>[^/]+)/$", views.push_detail, name="push"),
    re_path(rf"^{ENV}/webhooks/$", views.webhooks, name="webhooks"),
    re_path(rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/$", views.webhook_detail, name="webhook"),
    re_path(rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/test/$", views.webhook_test, name="webhook-test"),
    re_path(rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/rotate/$", views.webhook_rotate, name="webhook-rotate"),
    re_path(rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/enable/$", views.webhook_enable, name="webhook-enable"),
    re_path(rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/delete/$", views.webhook_delete, name="webhook-delete"),
    re_path(
        rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/deliveries/(?P<delivery_id>[0-9]{{1,18}})/redeliver/$",
        views.delivery_redeliver_view,
        name="redeliver",
    ),
]
