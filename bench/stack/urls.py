from django.urls import path
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class StackNotFound(APIView):
    def get(self, request: Request, project_id: str) -> Response:
        raise NotFound("No project with this id exists for your partner in this environment.")


urlpatterns = [path("bench/stack/projects/<str:project_id>", StackNotFound.as_view())]
