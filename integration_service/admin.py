from django.http import HttpRequest


class ReadOnlyAdminMixin:
    """For records the service writes and operators only read: raw pushes and projects."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
