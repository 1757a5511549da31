"""The canonical project fields: API name, model column, and the kind of value the column holds.

The one list the model, the API output, the mapping validation and the normalization engine agree on.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal


@dataclass(frozen=True)
class CanonicalField:
    name: str  # camelCase, as in the API and in mapping documents
    attname: str  # the Project column
    kind: str  # text | integer | decimal | date
    max_length: int | None = None  # text columns
    choices: str | None = None  # "status" or "currency": values checked after conversion


CANONICAL_FIELDS: tuple[CanonicalField, ...] = (
    CanonicalField("name", "name", "text", 255),
    CanonicalField("status", "status", "text", 20, choices="status"),
    CanonicalField("customerFirstName", "customer_first_name", "text", 255),
    CanonicalField("customerLastName", "customer_last_name", "text", 255),
    CanonicalField("customerEmail", "customer_email", "text", 254),
    CanonicalField("customerPhone", "customer_phone", "text", 32),
    CanonicalField("addressLine1", "address_line1", "text", 255),
    CanonicalField("addressLine2", "address_line2", "text", 255),
    CanonicalField("city", "city", "text", 255),
    CanonicalField("state", "state", "text", 255),
    CanonicalField("postalCode", "postal_code", "text", 32),
    CanonicalField("country", "country", "text", 255),
    CanonicalField("systemSizeKw", "system_size_kw", "decimal"),
    CanonicalField("moduleCount", "module_count", "integer"),
    CanonicalField("moduleModel", "module_model", "text", 255),
    CanonicalField("inverterModel", "inverter_model", "text", 255),
    CanonicalField("batteryCapacityKwh", "battery_capacity_kwh", "decimal"),
    CanonicalField("contractAmount", "contract_amount", "decimal"),
    CanonicalField("currency", "currency", "text", 3, choices="currency"),
    CanonicalField("contractSignedDate", "contract_signed_date", "date"),
    CanonicalField("installDate", "install_date", "date"),
    CanonicalField("salesRep", "sales_rep", "text", 255),
    CanonicalField("notes", "notes", "text", 20_000),
)

CANONICAL_FIELDS_BY_NAME = {field.name: field for field in CANONICAL_FIELDS}
# What each field holds, in a partner's words: GET integration/mapping and the partner console show it.
CANONICAL_DESCRIPTIONS: dict[str, str] = {
    "name": "The project's name, e.g. the deal's or the customer's.",
    "status": "Where the project stands: lead, proposal, contracted, design, permitting, installation, inspection, "
    "pto, completed, on_hold or cancelled.",
    "customerFirstName": "The customer's first name.",
    "customerLastName": "The customer's last name.",
    "customerEmail": "The customer's e-mail address, lower-cased.",
    "customerPhone": "The customer's phone number, as E.164 (+15034217800).",
    "addressLine1": "The installation address: street and number.",
    "addressLine2": "The installation address: unit, suite or floor.",
    "city": "The installation address: city.",
    "state": "The installation address: state, province or region.",
    "postalCode": "The installation address: postal code.",
    "country": "The installation address: country.",
    "systemSizeKw": "The system's size in kilowatts, a decimal.",
    "moduleCount": "How many solar modules the system has, a whole number.",
    "moduleModel": "The solar modules' make and model.",
    "inverterModel": "The inverter's make and model.",
    "batteryCapacityKwh": "The battery's capacity in kilowatt-hours, a decimal.",
    "contractAmount": "The contract's amount in `currency`, a decimal.",
    "currency": "The contract amount's currency, an ISO 4217 code (USD, EUR, AUD).",
    "contractSignedDate": "When the customer signed the contract (YYYY-MM-DD).",
    "installDate": "When the system is or was installed (YYYY-MM-DD).",
    "salesRep": "Who sold the project.",
    "notes": "Free text about the project.",
}
CANONICAL_ATTNAMES = tuple(field.attname for field in CANONICAL_FIELDS)
# The columns a normalization of the project's source data sets (mappings/project_normalization.py).
NORMALIZED_ATTNAMES = (*CANONICAL_ATTNAMES, "mapping_status", "issues")

# Decimal columns: digits before and after the point. Values are rounded to DECIMAL_PLACES.
DECIMAL_MAX_DIGITS = 20
DECIMAL_PLACES = 6
INTEGER_MIN, INTEGER_MAX = -(2**31), 2**31 - 1


def format_decimal(value: Decimal) -> str:
    """A decimal as the API writes it: exact, no exponent, no trailing zeros ("8.8", "25000")."""
    if value == 0:
        return "0"
    return format(value.normalize(), "f")


def format_canonical(value: object) -> object:
    """A canonical value as the API writes it, for pages that show one (decimals exact, dates ISO 8601)."""
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, date):
        return value.isoformat()
    return value
