"""The service's routes plus bench/baseline/'s upsert behind the service's middleware: push_cpu.py's baseline, and a
row of push_load.py (its baseline until 2026-11-24, when the bare app of bench/baseline/ took that place).

Mounted only when ROOT_URLCONF=bench.urls; the product never serves it.
"""

from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from bench.baseline.views import upsert
from integration_service.urls import urlpatterns as service_urlpatterns

urlpatterns = [path("bench/baseline-upsert", csrf_exempt(upsert)), *service_urlpatterns]
