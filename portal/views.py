"""The partner console's pages. Each view reads or writes only the logged-in user's partner's objects; an id of
another partner's (or of the other environment's) answers 404."""

import hmac

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST

from core.client_ip import request_client_ip
from ingest.api.diagnostics.cursors import push_cursor
from ingest.diagnostics.selectors import raw_push_expired, raw_push_get, raw_push_issues_with_origin, raw_pushes_page
from mappings.selectors import mapping_in_force
from partners.choices import Environment
from partners.selectors import client_id_hash
from partners.services import ClientIdGone, TooManyCredentials, client_id_replace, credential_create, credential_revoke
from partners.throttling import login_attempt_give_back, login_attempt_take, login_throttled_message
from portal.auth import is_partner_user, partner_user_required
from portal.forms import LoginForm, PushFilterForm, WebhookEndpointForm
from portal.selectors import (
    API_ROOTS,
    delivery_log,
    endpoint_delivery,
    environments_summary,
    partner_client_ids,
    partner_credential,
    partner_live_client_id,
    partner_webhook,
    partner_webhooks,
    production_waits,
)
from webhooks.choices import DeliveryStatus
from webhooks.models import WebhookEndpoint
from webhooks.selectors import overdue_since
from webhooks.services import (
    PARTNER_ENDPOINTS_PER_ENVIRONMENT,
    TooManyEndpoints,
    delivery_redeliver,
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_send_test,
    webhook_endpoint_set_enabled,
    webhook_endpoint_update,
)

PUSHES_PAGE = 25


def _environment(environment: str) -> Environment:
    return Environment(environment)  # the URL pattern admits the two values only


def _page(request: HttpRequest, template: str, context: dict, status: int = 200) -> HttpResponse:
    user = request.user
    partner = getattr(user, "partner", None)
    return render(request, template, {"partner": partner, "environments": Environment, **context}, status=status)


# --- login ------------------------------------------------------------------------------------------------------


@sensitive_post_parameters("password")
@csrf_protect
@never_cache
@require_http_methods(["GET", "POST"])
def login_view(request: HttpRequest) -> HttpResponse:
    """The console's own login: partner users only, with the failed-login budget of the API's and the admin's."""
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = ""
    if request.method == "GET" and is_partner_user(request.user):
        return redirect(next_url or "portal:portal-overview")
    form = LoginForm(request.POST if request.method == "POST" else None, request=request)
    if request.method == "POST":
        ip, email = request_client_ip(request), request.POST.get("email", "")
        retry_after = login_attempt_take(ip=ip, identity=email)
        if retry_after:
            response = render(
                request, "portal/throttled.html", {"message": login_throttled_message(retry_after)}, status=429
            )
            response["Retry-After"] = str(retry_after)
            return response
        try:
            valid = form.is_valid()
        except Exception:
            login_attempt_give_back(ip=ip, identity=email)  # undecided (the database is down): no failure
            raise
        if valid:
            login_attempt_give_back(ip=ip, identity=email)
            login(request, form.user)  # a new session key: what an operator's admin session held is gone
            return HttpResponseRedirect(next_url or reverse("portal:portal-overview"))
        # not valid: the attempt stays counted as a failure
    operator = request.user.is_authenticated and not is_partner_user(request.user)
    return render(request, "portal/login.html", {"form": form, "next": next_url, "operator": operator})


@require_POST
def logout_view(request: HttpRequest) -> HttpResponse:
    logout(request)
    messages.success(request, "You are logged out.")
    return redirect("portal:portal-login")


# --- overview and keys --------------------------------------------------------------------------------------------


@partner_user_required
def overview(request: HttpRequest) -> HttpResponse:
    partner = request.user.partner
    return _page(
        request,
        "portal/overview.html",
        {"summaries": environments_summary(partner=partner), "waits": production_waits(partner=partner)},
    )


@partner_user_required
def environment_page(request: HttpRequest, environment: str) -> HttpResponse:
    """One environment: its root and counts, and the mapping in force there, rule by rule (CONTRACT §19)."""
    environment = _environment(environment)
    partner = request.user.partner
    summary = next(item for item in environments_summary(partner=partner) if item.environment == environment)
    mapping = mapping_in_force(partner_id=partner.pk, environment=environment)
    return _page(
        request, "portal/environment.html", {"environment": environment, "summary": summary, "mapping": mapping}
    )


def _token_url(request: HttpRequest, environment: str) -> str:
    """The token endpoint of an environment's root, on the host that serves the page."""
    return request.build_absolute_uri(f"{API_ROOTS[Environment(environment)]}auth/token")


@partner_user_required
def client_ids(request: HttpRequest) -> HttpResponse:
    token_urls = {environment.value: _token_url(request, environment) for environment in Environment}
    context = {"client_ids": partner_client_ids(partner=request.user.partner), "token_urls": token_urls}
    return _page(request, "portal/client_ids.html", context)


@partner_user_required
@require_POST
def client_id_replace_view(request: HttpRequest, client_id_pk: int) -> HttpResponse:
    """A lost ClientID replaced in one step: the old one revoked, a new one shown on the answer only (only its hash
    is kept, so the whole key cannot be shown again later)."""
    client_id = partner_live_client_id(partner=request.user.partner, client_id_pk=client_id_pk)
    if client_id is None:
        raise Http404("No such live ClientID.")
    try:
        new, key = client_id_replace(client_id=client_id, replaced_by=request.user)
    except ClientIdGone as error:
        messages.error(request, error.detail)
        return redirect("portal:portal-client-ids")
    context = {"client_id": new, "key": key, "replaced": client_id, "token_url": _token_url(request, new.environment)}
    response = _page(request, "portal/client_id_new.html", context)
    response["Cache-Control"] = "no-store"
    return response


@partner_user_required
@require_POST
def credential_create_view(request: HttpRequest, client_id_pk: int) -> HttpResponse:
    """A client secret for one of the partner's live ClientIDs, shown on the answer only (as the API's is), with the
    token URL and a curl line; the whole ClientID in it when the form sent it (it is checked against its hash)."""
    client_id = partner_live_client_id(partner=request.user.partner, client_id_pk=client_id_pk)
    if client_id is None:
        raise Http404("No such live ClientID.")
    key = request.POST.get("client_id", "").strip()
    if key and not hmac.compare_digest(client_id_hash(key), client_id.key_hash):
        messages.error(request, f"That is not the ClientID {client_id.prefix}…: no client secret was created.")
        return redirect("portal:portal-client-ids")
    try:
        credential, secret = credential_create(client_id=client_id, created_by=request.user)
    except TooManyCredentials as error:
        messages.error(request, error.detail)
        return redirect("portal:portal-client-ids")
    context = {
        "credential": credential,
        "secret": secret,
        "key": key,
        "token_url": _token_url(request, client_id.environment),
    }
    response = _page(request, "portal/credential_secret.html", context)
    response["Cache-Control"] = "no-store"
    return response


@partner_user_required
@require_POST
def credential_revoke_view(request: HttpRequest, credential_pk: int) -> HttpResponse:
    credential = partner_credential(partner=request.user.partner, credential_pk=credential_pk)
    if credential is None:
        raise Http404("No such live client secret.")
    credential_revoke(credential=credential, revoked_by=request.user)
    messages.success(request, f"Client secret {credential.prefix}… revoked: its tokens are refused from now on.")
    return redirect("portal:portal-client-ids")


# --- pushes -------------------------------------------------------------------------------------------------------


@partner_user_required
def pushes(request: HttpRequest, environment: str) -> HttpResponse:
    environment = _environment(environment)
    form = PushFilterForm(request.GET)
    page, next_query = None, None
    if form.is_valid():
        data = form.cleaned_data
        page = raw_pushes_page(
            partner_id=request.user.partner_id,
            environment=environment,
            limit=PUSHES_PAGE,
            mapping_status=data["mappingStatus"] or None,
            external_id=data["externalId"] or None,
            after=data["after"],
        )
        if page.has_more:
            last = page.items[-1]
            query = request.GET.copy()
            query["after"] = push_cursor(received_at=last.received_at, push_id=last.pk)
            next_query = query.urlencode()
    return _page(
        request,
        "portal/pushes.html",
        {"environment": environment, "form": form, "page": page, "next_query": next_query},
        status=200 if form.is_valid() else 400,
    )


@partner_user_required
def push_detail(request: HttpRequest, environment: str, push_id: str) -> HttpResponse:
    environment = _environment(environment)
    push = raw_push_get(partner_id=request.user.partner_id, environment=environment, push_id=push_id)
    if push is None and raw_push_expired(push_id=push_id):
        context = {"environment": environment, "push_id": push_id, "retention_days": settings.RAW_PUSH_RETENTION_DAYS}
        return _page(request, "portal/push_expired.html", context, status=410)
    if push is None:
        raise Http404("No such push.")
    issues = raw_push_issues_with_origin(push=push)
    from_earlier = any(issue["fromEarlierPush"] for issue in issues or ())
    context = {"environment": environment, "push": push, "issues": issues, "from_earlier": from_earlier}
    return _page(request, "portal/push.html", context)


# --- webhooks -----------------------------------------------------------------------------------------------------


def _endpoint_or_404(request: HttpRequest, environment: str, endpoint_id: int) -> WebhookEndpoint:
    endpoint = partner_webhook(partner=request.user.partner, environment=environment, endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404("No such webhook.")
    return endpoint


def _secret_page(request: HttpRequest, environment: str, endpoint: WebhookEndpoint, secret: str, title: str):
    """The signing secret, on this page only: it is stored encrypted and never shown again."""
    response = _page(
        request,
        "portal/webhook_secret.html",
        {"environment": environment, "endpoint": endpoint, "secret": secret, "title": title},
    )
    response["Cache-Control"] = "no-store"
    return response


@partner_user_required
@require_http_methods(["GET", "POST"])
def webhooks(request: HttpRequest, environment: str) -> HttpResponse:
    """The environment's endpoints, and the form that adds one (its secret is shown once, on the answer)."""
    environment = _environment(environment)
    partner = request.user.partner
    form = WebhookEndpointForm(request.POST if request.method == "POST" else None)
    refused_status = None
    if request.method == "POST" and form.is_valid():
        try:
            endpoint, secret = webhook_endpoint_create(
                partner=partner,
                environment=environment,
                url=form.cleaned_data["url"],
                event_types=form.cleaned_data["event_types"],
                created_by=request.user,
                max_per_environment=PARTNER_ENDPOINTS_PER_ENVIRONMENT,  # the API's limit: no way round it here
            )
        except TooManyEndpoints as error:
            form.add_error(None, error.detail)
            refused_status = error.status_code
        else:
            return _secret_page(request, environment, endpoint, secret, "Webhook added")
    endpoints = partner_webhooks(partner=partner, environment=environment)
    context = {
        "environment": environment,
        "endpoints": [(endpoint, overdue_since(endpoint)) for endpoint in endpoints],
        "form": form,
        "statuses": DeliveryStatus.choices,
    }
    status = refused_status or (400 if form.errors else 200)
    return _page(request, "portal/webhooks.html", context, status=status)


@partner_user_required
@require_http_methods(["GET", "POST"])
def webhook_detail(request: HttpRequest, environment: str, endpoint_id: int) -> HttpResponse:
    """One endpoint: its settings (editable), its actions, and its delivery log."""
    environment = _environment(environment)
    endpoint = _endpoint_or_404(request, environment, endpoint_id)
    initial = {"url": endpoint.url, "event_types": endpoint.event_types}
    form = WebhookEndpointForm(request.POST if request.method == "POST" else None, initial=initial)
    if request.method == "POST" and form.is_valid():
        webhook_endpoint_update(
            endpoint=endpoint,
            url=form.cleaned_data["url"],
            event_types=form.cleaned_data["event_types"],
            is_enabled=endpoint.is_enabled,
        )
        messages.success(request, "Webhook saved.")
        return redirect("portal:portal-webhook", environment=environment, endpoint_id=endpoint.pk)
    before = request.GET.get("before", "")
    deliveries, more = delivery_log(
        endpoint=endpoint, before=int(before) if before.isdigit() and len(before) < 19 else None
    )
    context = {
        "environment": environment,
        "endpoint": endpoint,
        "form": form,
        "deliveries": deliveries,
        "older": deliveries[-1].pk if more else None,
    }
    return _page(request, "portal/webhook.html", context, status=400 if form.errors else 200)


@partner_user_required
@require_POST
def webhook_test(request: HttpRequest, environment: str, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint_or_404(request, _environment(environment), endpoint_id)
    if not endpoint.is_enabled:
        messages.error(request, "The webhook is disabled: enable it to send a test.")
    else:
        event = webhook_endpoint_send_test(endpoint=endpoint)
        messages.success(request, f"A webhook.test event ({event.id}) is on its way; its delivery is in the log below.")
    return redirect("portal:portal-webhook", environment=environment, endpoint_id=endpoint.pk)


@partner_user_required
@require_POST
def webhook_rotate(request: HttpRequest, environment: str, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint_or_404(request, _environment(environment), endpoint_id)
    secret = webhook_endpoint_rotate_secret(endpoint=endpoint)
    return _secret_page(request, environment, endpoint, secret, "New signing secret")


@partner_user_required
@require_POST
def webhook_enable(request: HttpRequest, environment: str, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint_or_404(request, _environment(environment), endpoint_id)
    enabled = request.POST.get("enabled") == "1"
    webhook_endpoint_set_enabled(endpoint=endpoint, enabled=enabled)
    messages.success(request, "Webhook enabled." if enabled else "Webhook disabled: it gets no new events.")
    return redirect("portal:portal-webhook", environment=environment, endpoint_id=endpoint.pk)


@partner_user_required
@require_http_methods(["GET", "POST"])
def webhook_delete(request: HttpRequest, environment: str, endpoint_id: int) -> HttpResponse:
    environment = _environment(environment)
    endpoint = _endpoint_or_404(request, environment, endpoint_id)
    if request.method == "POST":
        webhook_endpoint_delete(endpoint=endpoint)
        messages.success(request, f"Webhook {endpoint.url} deleted, with its delivery log.")
        return redirect("portal:portal-webhooks", environment=environment)
    return _page(request, "portal/webhook_delete.html", {"environment": environment, "endpoint": endpoint})


@partner_user_required
@require_http_methods(["GET"])
def delivery_detail(request: HttpRequest, environment: str, endpoint_id: int, delivery_id: int) -> HttpResponse:
    """One delivery's last attempt: the request as sent (headers, the event's body) and the answer (status, headers,
    the body's first 4 KiB)."""
    environment = _environment(environment)
    endpoint = _endpoint_or_404(request, environment, endpoint_id)
    delivery = endpoint_delivery(endpoint=endpoint, delivery_id=delivery_id)
    if delivery is None:
        raise Http404("No such delivery.")
    context = {"environment": environment, "endpoint": endpoint, "delivery": delivery}
    return _page(request, "portal/delivery.html", context)


@partner_user_required
@require_POST
def delivery_redeliver_view(request: HttpRequest, environment: str, endpoint_id: int, delivery_id: int) -> HttpResponse:
    endpoint = _endpoint_or_404(request, _environment(environment), endpoint_id)
    delivery = endpoint_delivery(endpoint=endpoint, delivery_id=delivery_id)
    if delivery is None:
        raise Http404("No such delivery.")
    delivery_redeliver(delivery=delivery)
    messages.success(request, f"Delivery {delivery.pk} ({delivery.event_id}) is queued again.")
    return redirect("portal:portal-webhook", environment=environment, endpoint_id=endpoint.pk)


# --- guide --------------------------------------------------------------------------------------------------------


@partner_user_required
def guide(request: HttpRequest) -> HttpResponse:
    from portal.guide import api_guide_html

    guide_html = api_guide_html(base_url=request.build_absolute_uri("/"))
    return _page(request, "portal/guide.html", {"guide": guide_html, "api_roots": API_ROOTS})


@partner_user_required
def guide_example(request: HttpRequest) -> HttpResponse:
    """The example client the guide names (examples/sync_client.py), to download."""
    from portal.guide import EXAMPLE_CLIENT_PATH

    try:
        content = EXAMPLE_CLIENT_PATH.read_bytes()
    except FileNotFoundError:
        raise Http404("The example client is not installed on this server.") from None
    response = HttpResponse(content, content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="sync_client.py"'
    return response
