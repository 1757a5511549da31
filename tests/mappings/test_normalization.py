"""The engine over records shaped as real CRMs emit them, through documents an operator would write."""

from datetime import date
from decimal import Decimal

from mappings.documents import parse_mapping_document
from mappings.normalization import FieldRule, normalize
from projects.canonical import CANONICAL_FIELDS

NOTHING_MAPPED = {field.attname: None for field in CANONICAL_FIELDS}


def normalized(data: dict, document: dict):
    return normalize(data, parse_mapping_document(document))


def mapped_values(result) -> dict:
    return {attname: value for attname, value in result.values.items() if value is not None}


HUBSPOT_DEAL = {
    "id": "15382938475",
    "properties": {
        "dealname": "Smith Residence – 8.8 kW",
        "dealstage": "closedwon",
        "amount": "32450.00",
        "deal_currency_code": "usd",
        "closedate": "2024-03-01T17:00:00.000Z",
        "install_date": "1712016000000",
        "system_size__w_": "8800",
        "panel_count": "22.0",
        "battery_included": "false",
        "hubspot_owner_id": "52110",
        "phone": "(503) 421-7800",
        "email": "Ana.Smith@Example.com",
        "address": "1420 SE Stark St",
        "zip": "97214",
        "notes_last_contacted": "",
    },
    "associations": {"contacts": {"results": [{"id": "901", "type": "deal_to_contact"}]}},
}

HUBSPOT_DOCUMENT = {
    "fields": {
        "name": {"source": "properties.dealname", "type": "string", "required": True},
        "status": {
            "source": "properties.dealstage",
            "type": "enum",
            "values": {"closedwon": "contracted", "contractsent": "proposal", "closedlost": "cancelled"},
        },
        "contractAmount": {"source": "properties.amount", "type": "decimal"},
        "currency": {"source": "properties.deal_currency_code", "type": "string"},
        "contractSignedDate": {"source": "properties.closedate", "type": "date"},
        "installDate": {"source": "properties.install_date", "type": "date"},
        "systemSizeKw": {"source": "properties.system_size__w_", "type": "decimal", "scale": 0.001},
        "moduleCount": {"source": "properties.panel_count", "type": "integer"},
        "customerPhone": {"source": "properties.phone", "type": "phone"},
        "customerEmail": {"source": "properties.email", "type": "email"},
        "addressLine1": {"source": "properties.address", "type": "string"},
        "postalCode": {"source": "properties.zip", "type": "string"},
        "notes": {"source": "properties.notes_last_contacted", "type": "string", "default": "no notes"},
        "salesRep": {"source": "properties.hubspot_owner_id", "type": "string"},
    }
}


def test_hubspot_deal_properties_of_strings():
    result = normalized(HUBSPOT_DEAL, HUBSPOT_DOCUMENT)

    assert result.issues == []
    assert result.mapping_status == "mapped"
    assert mapped_values(result) == {
        "name": "Smith Residence – 8.8 kW",
        "status": "contracted",
        "contract_amount": Decimal("32450.000000"),
        "currency": "USD",
        "contract_signed_date": date(2024, 3, 1),
        "install_date": date(2024, 4, 2),
        "system_size_kw": Decimal("8.800000"),
        "module_count": 22,
        "customer_phone": "+15034217800",
        "customer_email": "ana.smith@example.com",
        "address_line1": "1420 SE Stark St",
        "postal_code": "97214",
        "notes": "no notes",
        "sales_rep": "52110",
    }


SALESFORCE_OPPORTUNITY = {
    "attributes": {"type": "Opportunity", "url": "/services/data/v60.0/sobjects/Opportunity/0065g00000XyZ1AAA"},
    "Id": "0065g00000XyZ1AAA",
    "Name": "Nguyen PV + Storage",
    "StageName": "Permit Submitted",
    "Amount": 41230.5,
    "CloseDate": "2024-02-14",
    "System_Size_kW__c": 10.24,
    "Module_Count__c": 32.0,
    "Battery_kWh__c": 13.5,
    "Module_Model__c": "REC Alpha Pure 400",
    "Inverter_Model__c": None,
    "Owner": {"attributes": {"type": "User"}, "Name": "Jordan Lee", "Email": "jordan.lee@sunrise.example"},
    "Account": {
        "Name": "Minh Nguyen",
        "BillingStreet": "88 Harbor Way\nUnit 4",
        "BillingCity": "San Diego",
        "BillingState": "CA",
        "BillingPostalCode": "92101",
        "BillingCountry": "United States",
        "Phone": "+1 (619) 555-0142",
    },
}

SALESFORCE_DOCUMENT = {
    "fields": {
        "name": {"source": "Name", "type": "string"},
        "status": {
            "source": "StageName",
            "type": "enum",
            "values": {"Permit Submitted": "permitting", "Closed Won": "contracted", "Installed": "installation"},
        },
        "contractAmount": {"source": "Amount", "type": "decimal"},
        "contractSignedDate": {"source": "CloseDate", "type": "date"},
        "systemSizeKw": {"source": "System_Size_kW__c", "type": "decimal"},
        "moduleCount": {"source": "Module_Count__c", "type": "integer"},
        "batteryCapacityKwh": {"source": "Battery_kWh__c", "type": "decimal"},
        "moduleModel": {"source": "Module_Model__c", "type": "string"},
        "inverterModel": {"source": "Inverter_Model__c", "type": "string", "required": True},
        "salesRep": {"source": "Owner.Name", "type": "string"},
        "addressLine1": {"source": "Account.BillingStreet", "type": "string"},
        "city": {"source": "Account.BillingCity", "type": "string"},
        "state": {"source": "Account.BillingState", "type": "string"},
        "postalCode": {"source": "Account.BillingPostalCode", "type": "string"},
        "country": {"source": "Account.BillingCountry", "type": "string"},
        "customerPhone": {"source": "Account.Phone", "type": "phone"},
    }
}


def test_salesforce_custom_fields_and_nested_owner_with_a_required_field_missing():
    result = normalized(SALESFORCE_OPPORTUNITY, SALESFORCE_DOCUMENT)

    assert result.mapping_status == "partial"
    assert result.issues == [
        {"field": "inverterModel", "value": None, "reason": "required, but the source has no value"}
    ]
    assert mapped_values(result) == {
        "name": "Nguyen PV + Storage",
        "status": "permitting",
        "contract_amount": Decimal("41230.5"),
        "contract_signed_date": date(2024, 2, 14),
        "system_size_kw": Decimal("10.24"),
        "module_count": 32,
        "battery_capacity_kwh": Decimal("13.5"),
        "module_model": "REC Alpha Pure 400",
        "sales_rep": "Jordan Lee",
        "address_line1": "88 Harbor Way\nUnit 4",
        "city": "San Diego",
        "state": "CA",
        "postal_code": "92101",
        "country": "United States",
        "customer_phone": "+16195550142",
    }


# Pipedrive names custom fields by 40-character hashes; one starting with a digit needs JMESPath quoting.
SIZE_KEY = "8f4e2b7c1d9a3e5f6b0c2d4e6f8a1b3c5d7e9f0a"
MODULES_KEY = "d1c2b3a4e5f60718293a4b5c6d7e8f9012345678"

PIPEDRIVE_DEAL = {
    "id": 1234,
    "title": "Okafor Solar Install",
    "value": 28990,
    "currency": "EUR",
    "status": "won",
    "won_time": "2024-05-20 14:03:11",
    "person_id": {
        "name": "Chidi Okafor",
        "email": [
            {"label": "home", "value": "chidi.home@example.com", "primary": False},
            {"label": "work", "value": "C.Okafor@Example.org", "primary": True},
        ],
        "phone": [{"label": "mobile", "value": "0151 23456789", "primary": True}],
    },
    "user_id": {"id": 77, "name": "Greta Vogel", "email": "greta@partner.example"},
    SIZE_KEY: "9.6",
    MODULES_KEY: 24,
}

PIPEDRIVE_DOCUMENT = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "status": {"source": "status", "type": "enum", "values": {"won": "contracted", "lost": "cancelled"}},
        "contractAmount": {"source": "value", "type": "decimal"},
        "currency": {"source": "currency", "type": "string"},
        "contractSignedDate": {"source": "won_time", "type": "datetime"},
        "customerEmail": {"source": "person_id.email[?primary].value | [0]", "type": "email"},
        "customerPhone": {"source": "person_id.phone[?primary].value", "type": "phone", "region": "DE"},
        "salesRep": {"source": "user_id.name", "type": "string"},
        "systemSizeKw": {"source": f'"{SIZE_KEY}"', "type": "decimal"},
        "moduleCount": {"source": f'"{MODULES_KEY}"', "type": "integer"},
    }
}


def test_pipedrive_hash_keys_and_primary_email_from_an_array():
    result = normalized(PIPEDRIVE_DEAL, PIPEDRIVE_DOCUMENT)

    assert result.issues == []
    assert mapped_values(result) == {
        "name": "Okafor Solar Install",
        "status": "contracted",
        "contract_amount": Decimal("28990"),
        "currency": "EUR",
        "contract_signed_date": date(2024, 5, 20),
        "customer_email": "c.okafor@example.org",
        "customer_phone": "+4915123456789",
        "sales_rep": "Greta Vogel",
        "system_size_kw": Decimal("9.6"),
        "module_count": 24,
    }


ZOHO_DEAL = {
    "Deal_Name": "Patel Residence",
    "Stage": "Closed Won",
    "Amount": "19,875.40",
    "Closing_Date": "04/18/2024",
    "Contact_Name": {"name": "Priya Patel", "id": "4876876000000333001"},
    "Owner": {"name": "Sam Ortiz", "id": "4876876000000225013", "email": "sam@partner.example"},
    "System_Size": "0.2000000000000000111",
    "Phone": "0000000000",
    "Install_Scheduled": "0",
    "Description": None,
}

ZOHO_DOCUMENT = {
    "fields": {
        "name": {"source": "Deal_Name", "type": "string"},
        "status": {"source": "Stage", "type": "enum", "values": {"closed won": "contracted"}},
        "contractAmount": {"source": "Amount", "type": "decimal"},
        "contractSignedDate": {"source": "Closing_Date", "type": "date", "formats": ["%m/%d/%Y"]},
        "customerFirstName": {"source": "Contact_Name.name", "type": "string"},
        "salesRep": {"source": "Owner.name || Owner.email", "type": "string"},
        "systemSizeKw": {"source": "System_Size", "type": "decimal"},
        "customerPhone": {"source": "Phone", "type": "phone"},
        "installDate": {"source": "Install_Scheduled", "type": "date"},
        "notes": {"source": "Description", "type": "string"},
    }
}


def test_zoho_formatted_amount_float_noise_and_placeholders():
    result = normalized(ZOHO_DEAL, ZOHO_DOCUMENT)

    assert result.issues == [
        {"field": "customerPhone", "value": "0000000000", "reason": "not a valid phone number for region US"}
    ]
    assert mapped_values(result) == {
        "name": "Patel Residence",
        "status": "contracted",
        "contract_amount": Decimal("19875.40"),
        "contract_signed_date": date(2024, 4, 18),
        "customer_first_name": "Priya Patel",
        "sales_rep": "Sam Ortiz",
        "system_size_kw": Decimal("0.2"),
    }
    assert result.values["install_date"] is None


DESIGN_TOOL_EXPORT = {
    "project": {"name": "Alvarez Ranch", "status": "Design Complete"},
    "design": {
        "system_size_stc": 12480,
        "bill_of_materials": [
            {"component_type": "module", "name": "Qcells Q.PEAK DUO BLK ML-G10+ 400", "quantity": 18},
            {"component_type": "module", "name": "Qcells Q.PEAK DUO BLK ML-G10+ 400", "quantity": 14},
            {"component_type": "inverter", "name": "Enphase IQ8PLUS-72-2-US", "quantity": 32},
            {"component_type": "battery", "name": "Tesla Powerwall 3", "capacity_kwh": 13.5, "quantity": 1},
            {"component_type": "battery", "name": "Tesla Powerwall 3 expansion", "capacity_kwh": 13.5, "quantity": 1},
        ],
    },
}

DESIGN_TOOL_DOCUMENT = {
    "fields": {
        "name": {"source": "project.name", "type": "string"},
        "status": {"source": "project.status", "type": "enum", "values": {"design complete": "design"}},
        "systemSizeKw": {"source": "design.system_size_stc", "type": "decimal", "scale": 0.001},
        "moduleCount": {
            "source": "sum(design.bill_of_materials[?component_type=='module'].quantity)",
            "type": "integer",
        },
        "moduleModel": {"source": "design.bill_of_materials[?component_type=='module'].name | [0]", "type": "string"},
        "inverterModel": {
            "source": "join(', ', design.bill_of_materials[?component_type=='inverter'].name)",
            "type": "string",
        },
        "batteryCapacityKwh": {
            "source": "sum(design.bill_of_materials[?component_type=='battery'].capacity_kwh)",
            "type": "decimal",
        },
    }
}


def test_design_tool_bill_of_materials_summed_and_joined():
    result = normalized(DESIGN_TOOL_EXPORT, DESIGN_TOOL_DOCUMENT)

    assert result.issues == []
    assert mapped_values(result) == {
        "name": "Alvarez Ranch",
        "status": "design",
        "system_size_kw": Decimal("12.48"),
        "module_count": 32,
        "module_model": "Qcells Q.PEAK DUO BLK ML-G10+ 400",
        "inverter_model": "Enphase IQ8PLUS-72-2-US",
        "battery_capacity_kwh": Decimal("27"),
    }


def test_no_rules_means_unmapped_and_all_fields_null():
    result = normalize(HUBSPOT_DEAL, [])

    assert (result.mapping_status, result.issues, result.values) == ("unmapped", [], NOTHING_MAPPED)


def test_failures_become_issues_and_leave_the_field_null():
    rules = [
        FieldRule("systemSizeKw", "size", "decimal"),
        FieldRule("moduleCount", "modules", "integer"),
        FieldRule("status", "stage", "string"),
        FieldRule("currency", "cur", "string"),
        FieldRule("name", "title", "string"),
        FieldRule("postalCode", "zip", "string"),
        FieldRule("contractAmount", "sum(amounts)", "decimal"),
        FieldRule("installDate", "installed", "date"),
    ]
    data = {
        "size": "big",
        "modules": "22.5",
        "stage": "Signed",
        "cur": "dollars",
        "title": "ok",
        "zip": "9" * 40,
        "amounts": ["1", "2"],
        "installed": "soon",
    }

    result = normalize(data, rules)

    assert result.mapping_status == "partial"
    assert result.issues == [
        {"field": "systemSizeKw", "value": "big", "reason": "not a number"},
        {"field": "moduleCount", "value": "22.5", "reason": "not a whole number"},
        {
            "field": "status",
            "value": "Signed",
            "reason": "not a project status (lead, proposal, contracted, design, permitting, installation, "
            "inspection, pto, completed, on_hold, cancelled)",
        },
        {"field": "currency", "value": "dollars", "reason": "not an ISO 4217 currency code"},
        {"field": "postalCode", "value": "9" * 40, "reason": "longer than 32 characters"},
        {
            "field": "contractAmount",
            "value": None,
            "reason": "the source expression failed: In function sum(), invalid type for value: 1, "
            "expected one of: ['array-number'], received: \"str\"",
        },
        {
            "field": "installDate",
            "value": "soon",
            "reason": "not a date (ISO 8601, epoch seconds or milliseconds, or one of the formats)",
        },
    ]
    assert mapped_values(result) == {"name": "ok"}


def test_status_strings_in_other_spellings_are_accepted():
    rules = [FieldRule("status", "stage", "string")]

    assert normalize({"stage": "On Hold"}, rules).values["status"] == "on_hold"
    assert normalize({"stage": "PTO"}, rules).values["status"] == "pto"


def test_values_out_of_column_range_are_issues():
    rules = [FieldRule("contractAmount", "a", "decimal"), FieldRule("moduleCount", "m", "integer")]

    result = normalize({"a": "1e20", "m": 2**40}, rules)

    assert [issue["reason"] for issue in result.issues] == ["number out of range", "number out of range"]


def test_decimals_are_rounded_to_six_places():
    result = normalize({"kwh": "13.1234567"}, [FieldRule("batteryCapacityKwh", "kwh", "decimal")])

    assert result.values["battery_capacity_kwh"] == Decimal("13.123457")


def test_a_datetime_into_a_date_field_uses_the_utc_date():
    result = normalize({"t": "2024-03-01T23:30:00-08:00"}, [FieldRule("installDate", "t", "datetime")])

    assert result.values["install_date"] == date(2024, 3, 2)
