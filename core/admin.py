from django.http import HttpRequest


class ReadOnlyAdminMixin:
    """For records the service writes and operators only read: raw pushes and projects."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


def adopt_saved(target: object, saved: object) -> None:
    """Give the admin's unsaved form instance the values of the row a service saved, so the admin's log entry and
    redirect point at that row."""
    for field in type(saved)._meta.concrete_fields:
        setattr(target, field.attname, getattr(saved, field.attname))


class ExternalIdSearchMixin:
    """Search by a CRM's record id, exactly and on its index (the admin's own '=' search is case-insensitive, so
    it cannot use the index and reads every row of a large table)."""

    search_fields = ("external_id",)
    search_help_text = "The record id in the partner's CRM, exactly."

    def get_search_results(self, request: HttpRequest, queryset, search_term: str):
        if not search_term.strip():
            return queryset, False
        return self.filter_by_external_id(queryset, search_term.strip()), False

    def filter_by_external_id(self, queryset, external_id: str):
        return queryset.filter(external_id=external_id)
