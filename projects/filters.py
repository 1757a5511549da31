import django_filters
from django import forms
from django.db.models import Q, QuerySet

from projects.choices import MappingStatus
from projects.date_filters import DateFilterError, InstantRange, parse_date_filter
from projects.models import Project


class DateExpressionField(forms.CharField):
    def clean(self, value: str | None) -> InstantRange | None:
        if value is None:  # the parameter is absent
            return None
        if not value.strip():
            raise forms.ValidationError("Give an operator and a date, e.g. gt:2026-01-31, or leave the parameter out.")
        try:
            return parse_date_filter(value)
        except DateFilterError as error:
            raise forms.ValidationError(str(error), code="invalid") from error


class DateExpressionFilter(django_filters.Filter):
    """`gt:` / `lt:` / `eq:` / `btw:` on a date-time column; see projects.date_filters."""

    field_class = DateExpressionField

    def filter(self, qs: QuerySet, value: InstantRange | None) -> QuerySet:
        if value is None:
            return qs
        condition = Q()
        if value.lower is not None:
            lookup = "gte" if value.lower_inclusive else "gt"
            condition &= Q(**{f"{self.field_name}__{lookup}": value.lower})
        if value.upper is not None:
            lookup = "lte" if value.upper_inclusive else "lt"
            condition &= Q(**{f"{self.field_name}__{lookup}": value.upper})
        return qs.filter(condition)


class TrueOrFalseField(forms.CharField):
    """`true` or `false`, written so; anything else is an error rather than a guess."""

    def clean(self, value: str | None) -> bool | None:
        if value is None:  # the parameter is absent
            return None
        if value not in ("true", "false"):
            raise forms.ValidationError("Must be true or false.", code="invalid")
        return value == "true"


class IncludeDeletedFilter(django_filters.Filter):
    """Deleted projects are left out unless includeDeleted=true asks for their tombstones (CONTRACT §12)."""

    field_class = TrueOrFalseField

    def filter(self, qs: QuerySet, value: bool | None) -> QuerySet:
        return qs if value else qs.filter(deleted_date__isnull=True)


class MappingStatusField(forms.CharField):
    """One of the mapping statuses, written so; anything else, an empty value too, is an error rather than no filter.
    The same words as the pushes list's (ingest/api/diagnostics/serializers.py)."""

    def clean(self, value: str | None) -> str | None:
        if value is None:  # the parameter is absent
            return None
        if value not in MappingStatus.values:
            statuses = ", ".join(MappingStatus.values)
            raise forms.ValidationError(f"'{value}' is not a mapping status; use one of {statuses}.", code="invalid")
        return value


class MappingStatusFilter(django_filters.Filter):
    """The project's mapping status (CONTRACT §19); a deleted project keeps the one it last had."""

    field_class = MappingStatusField

    def filter(self, qs: QuerySet, value: str | None) -> QuerySet:
        return qs if value is None else qs.filter(**{self.field_name: value})


class TieBreakingOrderingFilter(django_filters.OrderingFilter):
    """Orders by the chosen date, then by id in the same direction, so pages never overlap or skip."""

    def filter(self, qs: QuerySet, value: list[str] | None) -> QuerySet:
        fields = [self.get_ordering_value(param) for param in (value or ["-updatedDate"])]
        tie_breaker = "-id" if fields[-1].startswith("-") else "id"
        return qs.order_by(*fields, tie_breaker)


ORDERING_CHOICES = ("updatedDate", "-updatedDate", "submittedDate", "-submittedDate")


class ProjectFilter(django_filters.FilterSet):
    externalId = django_filters.CharFilter(field_name="external_id", lookup_expr="exact")
    mappingStatus = MappingStatusFilter(field_name="mapping_status")
    submittedDate = DateExpressionFilter(field_name="submitted_date")
    updatedDate = DateExpressionFilter(field_name="updated_date")
    includeDeleted = IncludeDeletedFilter(field_name="deleted_date")
    ordering = TieBreakingOrderingFilter(
        fields=(("updated_date", "updatedDate"), ("submitted_date", "submittedDate")),
        error_messages={"invalid_choice": f"'%(value)s' is not an ordering; use one of {', '.join(ORDERING_CHOICES)}."},
    )

    class Meta:
        model = Project
        fields: list[str] = []

    def get_form_class(self) -> type[forms.Form]:
        """django-filter builds a new form class, and each filter's form field, for every request (a sixth of a
        list's CPU, issue #33). Its fields depend on nothing but the filters declared above, and a form copies its
        class's fields for each instance, so the class is built once."""
        form_class = type(self).__dict__.get("_form_class")
        if form_class is None:
            form_class = super().get_form_class()
            type(self)._form_class = form_class
        return form_class

    def is_valid(self) -> bool:
        """The filters' own checks, and: an `ordering` given empty, or with an empty item (`ordering=,`), is an error
        rather than the default order or a crash (the CSV field reads `ordering=` as if it were absent, and lets an
        empty item through to the ORM)."""
        valid = super().is_valid()
        ordering = self.form.cleaned_data.get("ordering")
        judged = "ordering" not in self.data or "ordering" in self.form.errors
        if not judged and not (ordering and all(ordering)):
            message = f"'' is not an ordering; use one of {', '.join(ORDERING_CHOICES)}."
            self.form.add_error("ordering", forms.ValidationError(message, code="invalid_choice"))
            return False
        return valid
