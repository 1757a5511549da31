from django.urls import path

from bench.baseline.views import page, upsert

urlpatterns = [path("bench/baseline-upsert", upsert), path("bench/baseline-page", page)]
