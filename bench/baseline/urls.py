from django.urls import path

from bench.baseline.views import page, platform_update, upsert

urlpatterns = [
    path("bench/baseline-upsert", upsert),
    path("bench/baseline-page", page),
    path("bench/baseline-platform-update/<uuid:project_id>", platform_update),
]
