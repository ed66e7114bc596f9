"""Complex schema types: nine or more fields, nested objects and arrays of objects."""

from __future__ import annotations

from typing import Any

from edgebench.datagen.edgejson import schema_dsl as s
from edgebench.datagen.edgejson import vocab
from edgebench.datagen.edgejson.catalog.fields import TIME, city_country, named_place
from edgebench.datagen.edgejson.rules import Mean, Percent, Product, Sum
from edgebench.datagen.edgejson.spec import SchemaSpec
from edgebench.datagen.edgejson.values import Draw


def _receipt(d: Draw) -> dict[str, Any]:
    bought = d.some(vocab.GROCERIES, 2, 4)
    return {
        "store": {"name": d.pick(vocab.STORES), "city": d.city()},
        "date": d.date(),
        "items": [
            {"name": name, "quantity": d.integer(1, 4), "unit_price": d.money(low, high)}
            for name, low, high in bought
        ],
        "tax_rate_percent": d.pick((5, 6.5, 7, 8.25, 10)),
        "payment": d.pick(("card", "cash", "mobile")),
    }


GROCERY_RECEIPT = SchemaSpec(
    schema_id="grocery_receipt",
    complexity="complex",
    title="Grocery Receipt",
    description="A supermarket receipt with line items, tax and total",
    noun="receipt",
    properties={
        "store": named_place("Store name", "Where the shopping was done"),
        "date": s.formatted("date", "Date of purchase"),
        "items": s.array(
            "Lines on the receipt",
            s.obj(
                {
                    "name": s.string("Item bought"),
                    "quantity": s.integer("Units bought", 1),
                    "unit_price": s.number("Price of one unit", 0),
                    "line_total": s.number("quantity x unit_price", 0),
                }
            ),
            max_items=10,
        ),
        "subtotal": s.number("Sum of the line totals", 0),
        "tax_rate_percent": s.number("Sales tax rate in percent", 0, 100),
        "tax": s.number("subtotal x tax rate", 0),
        "total": s.number("subtotal + tax", 0),
        "payment": s.enum("How it was paid", ("card", "cash", "mobile")),
    },
    sample=_receipt,
    rules=(
        Product("line_total", ("quantity", "unit_price"), each="items"),
        Sum("subtotal", ("items[].line_total",)),
        Percent("tax", "subtotal", "tax_rate_percent"),
        Sum("total", ("subtotal", "tax")),
    ),
    parts={
        "item": "{quantity} x {name} at ${unit_price} each (${line_total})",
        "line": "{name}, {quantity} at {unit_price} making {line_total}",
    },
    templates=(
        "Receipt from {store.name} in {store.city} on {date}. I bought {items:item}. The"
        " subtotal was ${subtotal}, tax at {tax_rate_percent}% came to ${tax}, and the total"
        " was ${total}, paid by {payment}.",
        "Hi, here's the shopping from {date} at {store.name}, {store.city}, for the expense"
        " sheet. It was {items:item}. That's ${subtotal} before tax plus ${tax} of tax"
        " ({tax_rate_percent} percent), ${total} altogether. Payment was by {payment}.",
        "The till app described this receipt in words.\nThe shop was {store.name} in"
        " {store.city} and the date {date}.\nThe lines were {items:line}.\nThe subtotal is"
        " {subtotal}, the tax rate {tax_rate_percent}%, the tax {tax} and the total {total},"
        " paid with {payment}.",
        "My {payment} payment at {store.name} ({store.city}) on {date} covered {items:item}."
        " Before tax that is ${subtotal}; with {tax_rate_percent}% tax (${tax}) the total is"
        " ${total}.",
    ),
)


def _purchase_order(d: Draw) -> dict[str, Any]:
    supplier = d.pick(vocab.SUPPLIERS)
    contact = f"orders.{supplier.split()[0].lower()}@{d.pick(vocab.EMAIL_DOMAINS)}"
    return {
        "po_number": d.code("PO-", 5),
        "supplier": {"name": supplier, "email": contact},
        "lines": [
            {
                "sku": d.code(prefix, 4),
                "quantity": d.integer(2, 50),
                "unit_price": d.money(0.4, 120),
            }
            for prefix in d.some(vocab.PART_PREFIXES, 2, 4)
        ],
        "shipping": d.money(5, 60),
        "deliver_by": d.date(),
    }


PURCHASE_ORDER = SchemaSpec(
    schema_id="purchase_order",
    complexity="complex",
    title="Purchase Order",
    description="A business purchase order sent to a supplier",
    noun="purchase order",
    properties={
        "po_number": s.string("Purchase order number"),
        "supplier": s.obj(
            {
                "name": s.string("Supplier company"),
                "email": s.formatted("email", "Supplier's order desk address"),
            },
            description="Who the order goes to",
        ),
        "lines": s.array(
            "Order lines",
            s.obj(
                {
                    "sku": s.string("Supplier part number"),
                    "quantity": s.integer("Units ordered", 1),
                    "unit_price": s.number("Price of one unit", 0),
                    "line_total": s.number("quantity x unit_price", 0),
                }
            ),
            max_items=10,
        ),
        "subtotal": s.number("Sum of the line totals", 0),
        "shipping": s.number("Shipping charge", 0),
        "total": s.number("subtotal + shipping", 0),
        "deliver_by": s.formatted("date", "Latest delivery date"),
    },
    optional=("shipping",),
    sample=_purchase_order,
    rules=(
        Product("line_total", ("quantity", "unit_price"), each="lines"),
        Sum("subtotal", ("lines[].line_total",)),
        Sum("total", ("subtotal", "shipping")),
    ),
    parts={"line": "{quantity} units of {sku} at {unit_price} each ({line_total})"},
    templates=(
        "Hello {supplier.name}, please accept purchase order {po_number} for {lines:line}. The"
        " subtotal is {subtotal}[, shipping is {shipping}], and the order total comes to"
        " {total}. We need delivery by {deliver_by}. Your order desk on file is"
        " {supplier.email}.",
        "Approved PO {po_number} goes to {supplier.name} ({supplier.email}). It orders"
        " {lines:line}, making a subtotal of {subtotal}[ plus {shipping} for shipping] and a"
        " total of {total}. The required delivery date is {deliver_by}.",
        "Hi, can you check {po_number} before I send it to {supplier.name} at {supplier.email}?"
        " The lines are {lines:line}. Subtotal {subtotal}[, freight {shipping}], grand total"
        " {total}, needed by {deliver_by}.",
        "We are ordering {lines:line} from {supplier.name} under purchase order {po_number}."
        " Subtotal {subtotal}; [shipping {shipping}; ]total {total}. Delivery is due on"
        " {deliver_by}, and questions go to {supplier.email}.",
    ),
)


def _greenhouse(d: Draw) -> dict[str, Any]:
    rows = d.some("ABCD", 2, 4)
    return {
        "site": d.pick(vocab.GREENHOUSE_SITES),
        "date": d.date(),
        "operator": d.person(),
        "zones": [
            {
                "zone": f"{row}{d.integer(1, 4)}",
                "temperature_c": d.decimal(12, 31, 1),
                "humidity_percent": d.integer(45, 95),
                "irrigating": d.chance(0.4),
            }
            for row in sorted(rows)
        ],
        "alerts": d.some(vocab.GREENHOUSE_ALERTS, 1, 2),
    }


GREENHOUSE_CLIMATE_LOG = SchemaSpec(
    schema_id="greenhouse_climate_log",
    complexity="complex",
    title="Greenhouse Climate Log",
    description="Per-zone climate readings from a greenhouse controller",
    noun="greenhouse climate log",
    properties={
        "site": s.string("Greenhouse name"),
        "date": s.formatted("date", "Day of the readings"),
        "operator": s.string("Operator on duty"),
        "zones": s.array(
            "Readings per zone",
            s.obj(
                {
                    "zone": s.string("Zone code"),
                    "temperature_c": s.number("Air temperature in degrees Celsius"),
                    "humidity_percent": s.integer("Relative humidity in percent", 0, 100),
                    "irrigating": s.boolean("Whether irrigation is running"),
                }
            ),
            max_items=8,
        ),
        "average_temperature_c": s.number("Mean zone temperature, rounded to 2 decimals"),
        "alerts": s.array("Open alerts", s.string("Alert"), max_items=5),
    },
    optional=("operator", "alerts"),
    sample=_greenhouse,
    rules=(Mean("average_temperature_c", "zones[].temperature_c"),),
    parts={
        "zone": "zone {zone} at {temperature_c} °C and {humidity_percent}% humidity,"
        " {irrigating?irrigating|not irrigating}",
    },
    templates=(
        "Greenhouse report for {site} on {date}[ by {operator}]. The readings were"
        " {zones:zone}. The average temperature across zones is {average_temperature_c} °C."
        "[ Alerts raised were {alerts}.]",
        "Morning walk-through at {site} on {date}. Zone readings are {zones:zone}. That gives"
        " an average of {average_temperature_c} degrees.[ Watch out for {alerts}.]"
        "[ Logged by {operator}.]",
        "Hi team, here is the climate controller summary for {site} dated {date}, with"
        " {zones:zone}, and an average temperature of {average_temperature_c} °C."
        "[ Open alerts include {alerts}.][ Sent by {operator}.]",
        "The {site} controller logged these values on {date}.\nIt saw {zones:zone}.\nThe mean"
        " temperature came out at {average_temperature_c} °C.[\nAlerts were {alerts}.]"
        "[\nThe operator on duty was {operator}.]",
    ),
)


def _clinic(d: Draw) -> dict[str, Any]:
    reason, diagnoses, prescriptions = d.pick(vocab.CLINIC_CASES)
    return {
        "patient": {"name": d.person(), "age": d.integer(18, 88)},
        "visit_date": d.date(),
        "clinician": f"Dr. {d.pick(vocab.LAST_NAMES)}",
        "reason": reason,
        "diagnoses": list(diagnoses),
        "prescriptions": [
            {"drug": drug, "dose_mg": dose, "times_per_day": per_day, "days": days}
            for drug, dose, per_day, days in prescriptions
        ],
        "follow_up_weeks": d.integer(1, 12),
    }


CLINIC_VISIT = SchemaSpec(
    schema_id="clinic_visit",
    complexity="complex",
    title="Clinic Visit",
    description="A primary care visit with diagnoses and prescriptions",
    noun="clinic visit",
    properties={
        "patient": s.obj(
            {"name": s.string("Patient's full name"), "age": s.integer("Age in years", 0, 130)},
            description="The patient",
        ),
        "visit_date": s.formatted("date", "Date of the visit"),
        "clinician": s.string("Clinician seen"),
        "reason": s.string("Reason for the visit"),
        "diagnoses": s.array("Diagnoses made", s.string("Diagnosis"), max_items=5),
        "prescriptions": s.array(
            "Medication prescribed",
            s.obj(
                {
                    "drug": s.string("Medication"),
                    "dose_mg": s.number("Dose in milligrams", 0),
                    "times_per_day": s.integer("Doses per day", 1, 6),
                    "days": s.integer("Length of the course in days", 1),
                }
            ),
            max_items=5,
        ),
        "follow_up_weeks": s.integer("Weeks until the follow-up visit", 1),
    },
    optional=("follow_up_weeks",),
    sample=_clinic,
    parts={"rx": "{drug} at {dose_mg} mg, {times_per_day} per day for {days} days"},
    templates=(
        "Visit note from {visit_date}. {patient.name}, aged {patient.age}, saw {clinician}"
        " about {reason}. The diagnosis was {diagnoses}. Prescribed {prescriptions:rx}."
        "[ Follow up in {follow_up_weeks} weeks.]",
        "Dear {patient.name}, thank you for visiting {clinician} on {visit_date}. You came in"
        " with {reason} and were diagnosed with {diagnoses}. Please take {prescriptions:rx}."
        "[ We will see you again in {follow_up_weeks} weeks.] (The age on file is"
        " {patient.age}.)",
        "This is {clinician}, summarising today's consult on {visit_date}. Patient"
        " {patient.name}, {patient.age} years old, presented with {reason}. The assessment is"
        " {diagnoses}. The plan is {prescriptions:rx}[, with a review in {follow_up_weeks}"
        " weeks].",
        "The clinic system recorded a visit on {visit_date} for {patient.name} (age"
        " {patient.age}) with {clinician}. The reason was {reason}; diagnoses were"
        " {diagnoses}. Medication is {prescriptions:rx}.[ A follow-up is booked in"
        " {follow_up_weeks} weeks.]",
    ),
)


def _freight(d: Draw) -> dict[str, Any]:
    (origin_city, origin_country), (to_city, to_country) = d.some(vocab.CITIES, 2, 2)
    return {
        "shipment_id": d.code("SHP-", 6),
        "carrier": d.pick(vocab.FREIGHT_CARRIERS),
        "origin": {"city": origin_city, "country": origin_country},
        "destination": {"city": to_city, "country": to_country},
        "ship_date": d.date(),
        "packages": [
            {
                "package_id": d.code("PKG-", 4),
                "weight_kg": d.decimal(0.5, 80, 1),
                "fragile": d.chance(0.3),
            }
            for _ in range(d.integer(2, 4))
        ],
    }


FREIGHT_SHIPMENT = SchemaSpec(
    schema_id="freight_shipment",
    complexity="complex",
    title="Freight Shipment",
    description="A multi-package shipment handed to a freight carrier",
    noun="freight shipment",
    properties={
        "shipment_id": s.string("Shipment identifier"),
        "carrier": s.string("Freight carrier"),
        "origin": city_country("Where the shipment leaves from"),
        "destination": city_country("Where the shipment goes"),
        "ship_date": s.formatted("date", "Day the carrier collects it"),
        "packages": s.array(
            "Packages in the shipment",
            s.obj(
                {
                    "package_id": s.string("Package label"),
                    "weight_kg": s.number("Weight in kilograms", 0),
                    "fragile": s.boolean("Whether the package is fragile"),
                }
            ),
            max_items=10,
        ),
        "total_weight_kg": s.number("Sum of the package weights", 0),
    },
    sample=_freight,
    rules=(Sum("total_weight_kg", ("packages[].weight_kg",)),),
    parts={"pkg": "package {package_id} at {weight_kg} kg, {fragile?fragile|not fragile}"},
    templates=(
        "Shipment {shipment_id} with {carrier} leaves {origin.city}, {origin.country} on"
        " {ship_date} bound for {destination.city}, {destination.country}. It contains"
        " {packages:pkg}, for a total of {total_weight_kg} kg.",
        "Hi, please book {carrier} to move shipment {shipment_id} from {origin.city}"
        " ({origin.country}) to {destination.city} ({destination.country}) on {ship_date}."
        " The packages are {packages:pkg}. The total weight is {total_weight_kg} kg.",
        "Dispatch log entry. On {ship_date} we handed shipment {shipment_id} to {carrier};"
        " the route is {origin.city}, {origin.country} to {destination.city},"
        " {destination.country}; the packages are {packages:pkg}; combined weight"
        " {total_weight_kg} kg.",
        "The warehouse scanned {packages:pkg} into shipment {shipment_id}, total"
        " {total_weight_kg} kg. {carrier} collects it on {ship_date} and takes it from"
        " {origin.city} in {origin.country} to {destination.city} in {destination.country}.",
    ),
)


def _scene(d: Draw) -> dict[str, Any]:
    actions = []
    for device, commands in d.some(vocab.SCENE_DEVICES, 2, 4):
        command = d.pick(commands)
        action: dict[str, Any] = {"device": device, "command": command}
        if command == "dim":  # only dimming takes a level
            action["level"] = d.pick((10, 20, 30, 40, 50, 60, 70, 80))
        actions.append(action)
    days = d.some(vocab.WEEKDAYS, 1, 5)
    return {
        "scene_name": d.pick(vocab.SCENES),
        "schedule": {"time": d.clock(5, 23), "days": sorted(days, key=vocab.WEEKDAYS.index)},
        "actions": actions,
        "enabled": d.chance(0.7),
        "notify": d.chance(0.5),
        "created_by": d.pick(vocab.FIRST_NAMES),
    }


SMART_HOME_SCENE = SchemaSpec(
    schema_id="smart_home_scene",
    complexity="complex",
    title="Smart Home Scene",
    description="A scheduled automation that drives several smart home devices",
    noun="smart home scene",
    properties={
        "scene_name": s.string("Name of the scene"),
        "schedule": s.obj(
            {
                "time": s.string(TIME),
                "days": s.array(
                    "Weekdays it runs on", s.enum("Weekday", vocab.WEEKDAYS), unique=True
                ),
            },
            description="When the scene runs",
        ),
        "actions": s.array(
            "What the scene does, in order",
            s.obj(
                {
                    "device": s.string("Device to control"),
                    "command": s.enum(
                        "Command", ("lock", "unlock", "open", "close", "dim", "start", "stop")
                    ),
                    "level": s.integer("Brightness in percent, for dim", 0, 100),
                },
                optional=("level",),
            ),
            max_items=8,
        ),
        "enabled": s.boolean("Whether the scene is active"),
        "notify": s.boolean("Whether to send a phone notification when it runs"),
        "created_by": s.string("Who set the scene up"),
    },
    optional=("created_by",),
    sample=_scene,
    parts={"act": "{command} the {device}[ to {level}%]"},
    templates=(
        "Please create a scene called {scene_name} that runs at {schedule.time} on"
        " {schedule.days}. It should {actions:act}."
        " {enabled?Turn it on right away|Leave it disabled for now} and"
        " {notify?send me a notification|don't notify me} when it runs.[ Requested by"
        " {created_by}.]",
        "New automation {scene_name}[ from {created_by}]. Every {schedule.days} at"
        " {schedule.time} the hub will {actions:act}. The scene is"
        " {enabled?enabled|disabled} and phone alerts are {notify?on|off}.",
        "Hey hub, set up {scene_name} for {schedule.days} at {schedule.time}. The steps are"
        " to {actions:act}. {enabled?Activate it now.|Keep it inactive.}"
        " {notify?Ping my phone when it fires.|No phone notifications.}[ Signed, {created_by}.]",
        "The scene {scene_name}[ that {created_by} made] triggers at {schedule.time} on"
        " {schedule.days} and will {actions:act}. It is {enabled?active|paused} and"
        " {notify?sends|does not send} a notification.",
    ),
)

COMPLEX_SPECS = (
    GROCERY_RECEIPT,
    PURCHASE_ORDER,
    GREENHOUSE_CLIMATE_LOG,
    CLINIC_VISIT,
    FREIGHT_SHIPMENT,
    SMART_HOME_SCENE,
)
