"""Demo content for `seed_demo`: a HubSpot-shaped mapping document and a few sandbox records."""

DEMO_MAPPING_DOCUMENT = {
    "fields": {
        "name": {"source": "properties.dealname", "type": "string", "required": True},
        "status": {
            "source": "properties.dealstage",
            "type": "enum",
            "values": {
                "appointmentscheduled": "lead",
                "presentationscheduled": "proposal",
                "closedwon": "contracted",
                "closedlost": "cancelled",
            },
        },
        "customerFirstName": {"source": "properties.firstname", "type": "string"},
        "customerLastName": {"source": "properties.lastname", "type": "string"},
        "customerEmail": {"source": "properties.email", "type": "email"},
        "customerPhone": {"source": "properties.phone", "type": "phone", "region": "US"},
        "city": {"source": "properties.city", "type": "string"},
        "state": {"source": "properties.state", "type": "string"},
        "systemSizeKw": {"source": "properties.system_size_w", "type": "decimal", "scale": 0.001},
        "moduleCount": {"source": "properties.panel_count", "type": "integer"},
        "contractAmount": {"source": "properties.amount", "type": "decimal"},
        "currency": {"source": "properties.deal_currency_code", "type": "string", "default": "USD"},
        "contractSignedDate": {"source": "properties.closedate", "type": "date"},
    }
}

DEMO_RECORDS = [
    {
        "id": "hs-deal-1001",
        "data": {
            "properties": {
                "dealname": "Smith Residence 8.8 kW",
                "dealstage": "closedwon",
                "firstname": "Ana",
                "lastname": "Smith",
                "email": " Ana.Smith@Example.com ",
                "phone": "(503) 421-7800",
                "city": "Portland",
                "state": "OR",
                "system_size_w": "8800",
                "panel_count": "22",
                "amount": "32450.00",
                "closedate": "1767225600000",
            }
        },
    },
    {
        "id": "hs-deal-1002",
        "data": {
            "properties": {
                "dealname": "Garcia Roof Array",
                "dealstage": "presentationscheduled",
                "email": "garcia@example.com",
                "phone": "0000000000",
                "system_size_w": "6400",
                "amount": "",
            }
        },
    },
]
