from partners.models import Partner


def partner_get_by_slug(*, slug: str) -> Partner | None:
    return Partner.objects.filter(slug=slug).first()
