from django.urls import path

from bench.baseline.views import upsert

urlpatterns = [path("bench/baseline-upsert", upsert)]
