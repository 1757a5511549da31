from django.urls import path, re_path

from portal import views

app_name = "portal"
# Names start with "portal-": the metrics label a request by its route's name alone (observability/middleware.py),
# and "push" or "login" there mean the API's.
ENV = r"(?P<environment>sandbox|production)"

urlpatterns = [
    path("", views.overview, name="portal-overview"),
    path("login/", views.login_view, name="portal-login"),
    path("logout/", views.logout_view, name="portal-logout"),
    path("client-ids/", views.client_ids, name="portal-client-ids"),
    re_path(
        r"^client-ids/(?P<client_id_pk>[0-9]{1,18})/credentials/$",
        views.credential_create_view,
        name="portal-credential-create",
    ),
    re_path(
        r"^client-ids/(?P<client_id_pk>[0-9]{1,18})/replace/$",
        views.client_id_replace_view,
        name="portal-client-id-replace",
    ),
    re_path(
        r"^credentials/(?P<credential_pk>[0-9]{1,18})/revoke/$",
        views.credential_revoke_view,
        name="portal-credential-revoke",
    ),
    path("guide/", views.guide, name="portal-guide"),
    path("guide/sync_client.py", views.guide_example, name="portal-guide-example"),
    re_path(rf"^{ENV}/$", views.environment_page, name="portal-environment"),
    re_path(rf"^{ENV}/pushes/$", views.pushes, name="portal-pushes"),
    re_path(rf"^{ENV}/pushes/(?P<push_id>[^/]+)/$", views.push_detail, name="portal-push"),
    re_path(rf"^{ENV}/webhooks/$", views.webhooks, name="portal-webhooks"),
    re_path(rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/$", views.webhook_detail, name="portal-webhook"),
    re_path(rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/test/$", views.webhook_test, name="portal-webhook-test"),
    re_path(
        rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/rotate/$", views.webhook_rotate, name="portal-webhook-rotate"
    ),
    re_path(
        rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/enable/$", views.webhook_enable, name="portal-webhook-enable"
    ),
    re_path(
        rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/delete/$", views.webhook_delete, name="portal-webhook-delete"
    ),
    re_path(
        rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/deliveries/(?P<delivery_id>[0-9]{{1,18}})/$",
        views.delivery_detail,
        name="portal-delivery",
    ),
    re_path(
        rf"^{ENV}/webhooks/(?P<endpoint_id>[0-9]{{1,18}})/deliveries/(?P<delivery_id>[0-9]{{1,18}})/redeliver/$",
        views.delivery_redeliver_view,
        name="portal-redeliver",
    ),
]
