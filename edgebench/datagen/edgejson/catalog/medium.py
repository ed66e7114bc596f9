"""Medium schema types: five to eight fields with exactly one level of nesting."""

from __future__ import annotations

from typing import Any

from edgebench.datagen.edgejson import schema_dsl as s
from edgebench.datagen.edgejson import vocab
from edgebench.datagen.edgejson.catalog.fields import TIME, named_place
from edgebench.datagen.edgejson.rules import Product
from edgebench.datagen.edgejson.spec import SchemaSpec
from edgebench.datagen.edgejson.values import Draw


def _smart_plug(d: Draw) -> dict[str, Any]:
    on = d.chance(0.7)
    return {
        "plug_id": d.code("PLG-", 3),
        "location": {"room": d.pick(vocab.ROOMS), "floor": d.integer(0, 3)},
        "switched_on": on,
        "power_watts": d.decimal(3, 2200, 1) if on else 0.0,  # an open relay draws nothing
        "energy_kwh_today": d.decimal(0.05, 9, 2),
    }


SMART_PLUG_REPORT = SchemaSpec(
    schema_id="smart_plug_report",
    complexity="medium",
    title="Smart Plug Report",
    description="Power and energy figures reported by a smart plug",
    noun="smart plug report",
    properties={
        "plug_id": s.string("Plug identifier"),
        "location": s.obj(
            {
                "room": s.string("Room the plug is in"),
                "floor": s.integer("Floor number, 0 for the ground floor", 0),
            },
            description="Where the plug is installed",
        ),
        "switched_on": s.boolean("Whether the relay is on"),
        "power_watts": s.number("Power drawn right now in watts", 0),
        "energy_kwh_today": s.number("Energy used today in kWh", 0),
    },
    sample=_smart_plug,
    templates=(
        "Smart plug {plug_id} in the {location.room} on floor {location.floor} is"
        " {switched_on?on|off}, drawing {power_watts} W, and it has used {energy_kwh_today}"
        " kWh today.",
        "The energy app says plug {plug_id} ({location.room}, floor {location.floor}) has used"
        " {energy_kwh_today} kWh so far today. Right now it is"
        " {switched_on?switched on|switched off} at {power_watts} watts.",
        "Is the heater still running? The plug {plug_id} on floor {location.floor} in the"
        " {location.room} shows {power_watts} W and {energy_kwh_today} kWh for today, and it's"
        " {switched_on?on|off}.",
        "Here is the reading for plug {plug_id}, located on floor {location.floor} in the"
        " {location.room}, with power at {power_watts} W, energy today {energy_kwh_today} kWh,"
        " and the relay {switched_on?on|off}.",
    ),
)


def _delivery(d: Draw) -> dict[str, Any]:
    return {
        "order_number": d.code("ORD-", 6),
        "recipient": d.person(),
        "address": {
            "street": f"{d.integer(1, 180)} {d.pick(vocab.STREETS)}",
            "city": d.city(),
            "postal_code": d.code("", 5),
        },
        "delivery_date": d.date(),
        "window": d.pick(("morning", "afternoon", "evening")),
    }


DELIVERY_BOOKING = SchemaSpec(
    schema_id="delivery_booking",
    complexity="medium",
    title="Delivery Booking",
    description="A home delivery slot booked for an order",
    noun="delivery booking",
    properties={
        "order_number": s.string("Order number"),
        "recipient": s.string("Person receiving the delivery"),
        "address": s.obj(
            {
                "street": s.string("House number and street"),
                "city": s.string("City"),
                "postal_code": s.string("Postal code"),
            },
            description="Delivery address",
        ),
        "delivery_date": s.formatted("date", "Day of delivery"),
        "window": s.enum("Delivery time window", ("morning", "afternoon", "evening")),
    },
    sample=_delivery,
    templates=(
        "Please deliver order {order_number} to {recipient} at {address.street},"
        " {address.city} {address.postal_code} on {delivery_date} in the {window}.",
        "Hi, it's {recipient}. Could you bring my order {order_number} on {delivery_date},"
        " ideally in the {window}? My address is {address.street}, {address.postal_code}"
        " {address.city}.",
        "A delivery slot is booked for order {order_number} on {delivery_date} ({window}) for"
        " {recipient} at {address.street} in {address.city}, postal code {address.postal_code}.",
        "Driver note. {recipient} expects order {order_number} on {delivery_date} during the"
        " {window}; drop it at {address.street}, {address.city}, {address.postal_code}.",
    ),
)


def _vitals(d: Draw) -> dict[str, Any]:
    return {
        "patient_id": d.code("PT-", 5),
        "heart_rate": d.integer(52, 118),
        "blood_pressure": {"systolic": d.integer(98, 158), "diastolic": d.integer(60, 98)},
        "temperature_c": d.decimal(36, 39.4, 1),
        "spo2_percent": d.integer(91, 100),
        "measured_at": d.clock(0, 23),
    }


PATIENT_VITALS = SchemaSpec(
    schema_id="patient_vitals",
    complexity="medium",
    title="Patient Vitals",
    description="Vital signs taken at a bedside or by a home health monitor",
    noun="vital signs",
    properties={
        "patient_id": s.string("Patient identifier"),
        "heart_rate": s.integer("Pulse in beats per minute", 20, 250),
        "blood_pressure": s.obj(
            {
                "systolic": s.integer("Systolic pressure in mmHg", 50, 250),
                "diastolic": s.integer("Diastolic pressure in mmHg", 30, 150),
            },
            description="Blood pressure",
        ),
        "temperature_c": s.number("Body temperature in degrees Celsius", 30, 45),
        "spo2_percent": s.integer("Oxygen saturation in percent", 50, 100),
        "measured_at": s.string(TIME),
    },
    optional=("measured_at",),
    sample=_vitals,
    templates=(
        "The nurse recorded vitals for patient {patient_id}[ at {measured_at}]. Pulse is"
        " {heart_rate} bpm, blood pressure {blood_pressure.systolic}/{blood_pressure.diastolic}"
        " mmHg, temperature {temperature_c} °C and oxygen saturation {spo2_percent}%.",
        "Vitals for {patient_id}[ taken at {measured_at}] show blood pressure"
        " {blood_pressure.systolic} over {blood_pressure.diastolic}, heart rate {heart_rate},"
        " SpO2 {spo2_percent} percent and a temperature of {temperature_c} degrees.",
        "The bedside monitor summary for patient {patient_id} gives pulse {heart_rate}, blood"
        " pressure {blood_pressure.systolic}/{blood_pressure.diastolic}, temperature"
        " {temperature_c} C and saturation {spo2_percent}%[, recorded at {measured_at}].",
        "I checked on {patient_id}[ at {measured_at}]. Temperature is {temperature_c} °C, heart"
        " rate {heart_rate} per minute, blood pressure {blood_pressure.systolic}/"
        "{blood_pressure.diastolic} and oxygen at {spo2_percent}%.",
    ),
)


def _helpdesk(d: Draw) -> dict[str, Any]:
    name = d.person()
    return {
        "requester": name,
        "email": d.email(name),
        "department": d.pick(vocab.DEPARTMENTS),
        "urgency": d.pick(vocab.URGENCIES),
        "issue": d.pick(vocab.HELPDESK_ISSUES),
        "devices": d.some(vocab.HELPDESK_DEVICES, 1, 2),
    }


HELPDESK_REQUEST = SchemaSpec(
    schema_id="helpdesk_request",
    complexity="medium",
    title="Helpdesk Request",
    description="An IT support request from an employee",
    noun="helpdesk request",
    properties={
        "requester": s.string("Employee asking for help"),
        "email": s.formatted("email", "Requester's email address"),
        "department": s.enum("Requester's department", vocab.DEPARTMENTS),
        "urgency": s.enum("How urgent the request is", vocab.URGENCIES),
        "issue": s.string("The problem in the requester's words"),
        "devices": s.array("Devices involved", s.string("Device"), max_items=5, unique=True),
    },
    sample=_helpdesk,
    templates=(
        "Hi IT, {issue} and I can't work. It affects my {devices}. I'd call it {urgency}"
        " urgency. Thanks, {requester} ({department}, {email})",
        "A ticket came from {requester} <{email}> in {department} saying {issue}. The devices"
        " involved are the {devices}, and the urgency is {urgency}.",
        "{requester} from {department} called to say that {issue}. The equipment involved is"
        " the {devices}. Mark it {urgency} and reply to {email}.",
        "Message on the service desk chat. {requester} ({email}, {department} team) reports"
        " that {issue}, involving the {devices}; please treat it as {urgency}.",
    ),
)


def _review(d: Draw) -> dict[str, Any]:
    return {
        "product": d.pick(vocab.SHOP_PRODUCTS),
        "reviewer": f"{d.pick(vocab.FIRST_NAMES)} {d.pick(vocab.LAST_NAMES)[0]}.",
        "rating": d.integer(1, 5),
        "verified_purchase": d.chance(0.7),
        "pros": d.some(vocab.REVIEW_PROS, 1, 3),
        "review_date": d.date(),
    }


PRODUCT_REVIEW = SchemaSpec(
    schema_id="product_review",
    complexity="medium",
    title="Product Review",
    description="A customer review of a product in an online shop",
    noun="product review",
    properties={
        "product": s.string("Product reviewed"),
        "reviewer": s.string("Reviewer's display name"),
        "rating": s.integer("Star rating from 1 to 5", 1, 5),
        "verified_purchase": s.boolean("Whether the reviewer bought it in this shop"),
        "pros": s.array("What the reviewer liked", s.string("One good point"), max_items=5),
        "review_date": s.formatted("date", "Date of the review"),
    },
    optional=("review_date",),
    sample=_review,
    templates=(
        "{reviewer} gave the {product} {rating} out of 5 stars[ on {review_date}]. They liked"
        " the {pros}. {verified_purchase?Verified purchase.|Not a verified purchase.}",
        "I rated the {product} {rating} stars because of its {pros}."
        "{verified_purchase? I bought it here.| I got it as a gift, not from this shop.}"
        " Posted by {reviewer}[ on {review_date}].",
        "Customer feedback[ from {review_date}] on the {product} by {reviewer} gives"
        " {rating} stars; the highlights were {pros}, and it is"
        " {verified_purchase?a verified|not a verified} purchase.",
        "A review of the {product} rated it {rating}/5. What the buyer liked was {pros}."
        " Signed {reviewer}[, {review_date}], {verified_purchase?verified buyer|unverified}.",
    ),
)


def _vehicle(d: Draw) -> dict[str, Any]:
    engine_on = d.chance(0.75)
    return {
        "vehicle_id": d.code("VAN-", 3),
        "driver": d.person(),
        "position": {"lat": d.decimal(36, 60, 4), "lon": d.decimal(-9, 25, 4)},
        "speed_kmh": d.integer(0, 110) if engine_on else 0,  # parked when the engine is off
        "fuel_percent": d.integer(5, 100),
        "engine_on": engine_on,
    }


VEHICLE_TELEMETRY = SchemaSpec(
    schema_id="vehicle_telemetry",
    complexity="medium",
    title="Vehicle Telemetry",
    description="A position and status ping from a delivery vehicle's tracker",
    noun="vehicle telemetry",
    properties={
        "vehicle_id": s.string("Fleet vehicle identifier"),
        "driver": s.string("Driver assigned to the vehicle"),
        "position": s.obj(
            {
                "lat": s.number("Latitude in degrees", -90, 90),
                "lon": s.number("Longitude in degrees", -180, 180),
            },
            description="GPS position",
        ),
        "speed_kmh": s.integer("Speed in km/h", 0),
        "fuel_percent": s.integer("Fuel level in percent", 0, 100),
        "engine_on": s.boolean("Whether the engine is running"),
    },
    optional=("driver",),
    sample=_vehicle,
    templates=(
        "Vehicle {vehicle_id}[ driven by {driver}] is at {position.lat}, {position.lon} doing"
        " {speed_kmh} km/h with {fuel_percent}% fuel, engine {engine_on?running|off}.",
        "The telematics report for {vehicle_id} gives latitude {position.lat} and longitude"
        " {position.lon}, speed {speed_kmh} km/h, tank {fuel_percent}% full, ignition"
        " {engine_on?on|off}[, driver {driver}].",
        "Dispatcher, this is {vehicle_id}[ with {driver} at the wheel]. We're at {position.lat},"
        " {position.lon}, going {speed_kmh} km/h, fuel at {fuel_percent} percent, and the"
        " engine is {engine_on?on|off}.",
        "A GPS tracker update places {vehicle_id} at coordinates ({position.lat},"
        " {position.lon}) with a speed of {speed_kmh} km/h. Fuel level is {fuel_percent}% and"
        " the engine is {engine_on?on|off}.[ The assigned driver is {driver}.]",
    ),
)


def _fuel(d: Draw) -> dict[str, Any]:
    return {
        "station": {"name": d.pick(vocab.FUEL_STATIONS), "city": d.city()},
        "fuel_type": d.pick(vocab.FUEL_TYPES),
        "litres": d.decimal(8, 75, 2),
        "price_per_litre": d.decimal(1.2, 2.1, 3),
        "paid_with": d.pick(("card", "cash", "app")),
    }


FUEL_RECEIPT = SchemaSpec(
    schema_id="fuel_receipt",
    complexity="medium",
    title="Fuel Receipt",
    description="A fuel purchase at a filling station",
    noun="fuel receipt",
    properties={
        "station": named_place("Station name", "Where the fuel was bought"),
        "fuel_type": s.enum("Kind of fuel", vocab.FUEL_TYPES),
        "litres": s.number("Litres dispensed", 0),
        "price_per_litre": s.number("Price per litre", 0),
        "total": s.number("Amount paid: litres x price per litre, rounded to cents", 0),
        "paid_with": s.enum("Payment method", ("card", "cash", "app")),
    },
    sample=_fuel,
    rules=(Product("total", ("litres", "price_per_litre")),),
    templates=(
        "Filled up at {station.name} in {station.city}: {litres} litres of {fuel_type} at"
        " {price_per_litre} per litre, {total} in total, paid by {paid_with}.",
        "Pump 4 at {station.name}, {station.city} dispensed {litres} L of {fuel_type} at"
        " {price_per_litre} a litre. The total was {total} and I paid by {paid_with}.",
        "Hi, attaching my fuel expense. I bought {litres} litres of {fuel_type} for {total}"
        " ({price_per_litre} a litre) at {station.name} in {station.city} and paid with"
        " {paid_with}.",
        "The driver refuelled in {station.city} at {station.name} with {fuel_type}, {litres}"
        " litres at {price_per_litre} per litre, for a total charge of {total} paid by"
        " {paid_with}.",
    ),
)


def _shift(d: Draw) -> dict[str, Any]:
    start = d.integer(5, 14)
    minutes = d.pick(("00", "30"))
    return {
        "employee": d.person(),
        "role": d.pick(vocab.SHIFT_ROLES),
        "date": d.date(),
        "start_time": f"{start:02d}:{minutes}",
        "end_time": f"{start + d.pick((6, 8, 9)):02d}:{minutes}",
        "break_minutes": d.pick((15, 30, 45, 60)),
        "tasks": d.some(vocab.SHIFT_TASKS, 1, 3),
    }


SHIFT_SCHEDULE = SchemaSpec(
    schema_id="shift_schedule",
    complexity="medium",
    title="Shift Schedule",
    description="One employee's shift on the staff rota",
    noun="shift",
    properties={
        "employee": s.string("Employee working the shift"),
        "role": s.enum("Role on this shift", vocab.SHIFT_ROLES),
        "date": s.formatted("date", "Day of the shift"),
        "start_time": s.string("Start, 24-hour HH:MM"),
        "end_time": s.string("End, 24-hour HH:MM"),
        "break_minutes": s.integer("Paid break in minutes", 0, 120),
        "tasks": s.array("Tasks for the shift", s.string("One task"), max_items=6),
    },
    sample=_shift,
    templates=(
        "Hi {employee}, you're on as {role} on {date} from {start_time} to {end_time} with a"
        " {break_minutes} minute break. Your tasks are to {tasks}.",
        "Rota update. {employee} works the {role} shift on {date}, {start_time} until"
        " {end_time}, with a break of {break_minutes} minutes, and will {tasks}.",
        "Can you confirm the {role} shift for {employee} on {date}? It runs {start_time} to"
        " {end_time}, includes {break_minutes} minutes of break, and the jobs are to {tasks}.",
        "The manager messaged {employee} that the {date} shift as {role} starts at"
        " {start_time} and ends at {end_time}. Break time is {break_minutes} minutes, and the"
        " plan is to {tasks}.",
    ),
)


def _motion(d: Draw) -> dict[str, Any]:
    return {
        "camera": d.pick(vocab.CAMERAS),
        "detected_at": d.timestamp(),
        "zone": d.pick(vocab.CAMERA_ZONES),
        "objects": d.some(("person", "car", "animal", "package", "bicycle"), 1, 2),
        "confidence": d.decimal(0.5, 0.99, 2),
        "recorded": d.chance(0.6),
    }


CAMERA_MOTION_EVENT = SchemaSpec(
    schema_id="camera_motion_event",
    complexity="medium",
    title="Camera Motion Event",
    description="A motion detection from a home security camera",
    noun="motion event",
    properties={
        "camera": s.string("Camera that saw the motion"),
        "detected_at": s.formatted("date-time", "When the motion was detected (UTC)"),
        "zone": s.string("Detection zone in the camera view"),
        "objects": s.array(
            "Kinds of objects detected",
            s.enum("Object kind", ("person", "car", "animal", "package", "bicycle")),
            unique=True,
        ),
        "confidence": s.number("Detection confidence from 0 to 1", 0, 1),
        "recorded": s.boolean("Whether a video clip was saved"),
    },
    optional=("zone",),
    sample=_motion,
    templates=(
        "The {camera} spotted motion classed as {objects} at {detected_at}[ near the {zone}]"
        " with confidence {confidence}; {recorded?a clip was saved|no clip was saved}.",
        "At {detected_at} your {camera} detected motion ({objects})[ in the {zone} zone]. The"
        " confidence was {confidence}. {recorded?The recording is in the app.|Recording was"
        " off.}",
        "The security hub logged that the {camera} saw {objects} moving[ by the {zone}] at"
        " {detected_at} with a score of {confidence}, and it"
        " {recorded?recorded the event|did not record it}.",
        "Hey, did you see this? The {camera} picked up {objects} at {detected_at}"
        "[ around the {zone}]. Detection confidence was {confidence} and"
        " {recorded?there's a video clip|there's no video}.",
    ),
)

MEDIUM_SPECS = (
    SMART_PLUG_REPORT,
    DELIVERY_BOOKING,
    PATIENT_VITALS,
    HELPDESK_REQUEST,
    PRODUCT_REVIEW,
    VEHICLE_TELEMETRY,
    FUEL_RECEIPT,
    SHIFT_SCHEDULE,
    CAMERA_MOTION_EVENT,
)
